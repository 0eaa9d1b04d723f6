// check.c - the cache manager's invariant checker, for tests and debug runs.
//
// It recomputes from scratch what the manager keeps incrementally (page
// owners, occupancy, reference counts, chunk counts, block counts per tier)
// and compares. O(blocks + pages); it allocates its own scratch.
#include <stdlib.h>

#include "cache_impl.h"

static int check_tiers(const struct ks_cache *c, char *msg, size_t len)
{
    for (int t = 0; t < KS_TIERS; t++) {
        const struct ks_tier *tr = &c->tier[t];
        uint32_t used = 0, free_len = 0;
        if (tr->hwm > tr->cap)
            return ks_corrupt(msg, len, "L%d: high-water mark %u beyond %u pages", t + 1, tr->hwm, tr->cap);
        for (uint32_t p = 0; p < tr->hwm; p++)
            used += ks_tier_page_used(tr, p);
        if (used != tr->used)
            return ks_corrupt(msg, len, "L%d: %u pages marked used, counter says %u", t + 1, used, tr->used);
        if (tr->addressed) { // pages taken by number: no free list, every page counted
            if (tr->free_head != KS_PAGE_FREE)
                return ks_corrupt(msg, len, "L%d: addressed, yet a free list", t + 1);
            for (uint32_t p = 0; p < tr->cap; p++) {
                int marked = (int)(tr->freemap[p / 64] >> (p % 64) & 1);
                if (marked == ks_tier_page_used(tr, p))
                    return ks_corrupt(msg, len, "L%d: page %u is %s, its bit says %s", t + 1, p,
                                      marked ? "used" : "free", marked ? "free" : "used");
            }
            continue;
        }
        for (uint32_t p = tr->free_head; p != KS_PAGE_FREE; free_len++) {
            if (p >= tr->hwm || ks_tier_page_used(tr, p) || free_len > tr->hwm)
                return ks_corrupt(msg, len, "L%d: free list broken at page %u", t + 1, p);
            if (free_len < tr->n_recent && tr->recent[tr->n_recent - 1 - free_len] != p)
                return ks_corrupt(msg, len, "L%d: free page %u of the list is %u, the recent pages say %u", t + 1,
                                  free_len, p, tr->recent[tr->n_recent - 1 - free_len]);
            uint32_t next = tr->owner[p] & ~KS_PAGE_FREE;
            p = next == KS_PAGE_MAX ? KS_PAGE_FREE : next;
        }
        if (tr->n_recent > free_len)
            return ks_corrupt(msg, len, "L%d: %u recent free pages kept, %u on the free list", t + 1, tr->n_recent,
                              free_len);
        if (free_len + used != tr->hwm)
            return ks_corrupt(msg, len, "L%d: %u free + %u used != %u pages ever used", t + 1, free_len, used, tr->hwm);
    }
    return KS_OK;
}

// What the checker counts on its way: per block id, the references from
// request maps and the live batches it is in; per tier, the pages reserved
// for arriving blocks and the blocks there; per chunk, its live ids.
struct tally {
    uint32_t ids;
    uint32_t *refs;
    uint8_t *flight;
    uint32_t *chunk_live;
    uint32_t reserved[KS_TIERS], resident[KS_TIERS], live;
};

// Block id's entry as it stands: in the table, or its compact chunk's.
static struct ks_block entry(const struct ks_cache *c, uint32_t id)
{
    struct ks_block tmp;
    return *ks_blocktab_peek(&c->tab, id, &tmp);
}

static unsigned entry_state(const struct ks_cache *c, uint32_t id)
{
    struct ks_block e = entry(c, id);
    return ks_blk_state(&e);
}

// References from the request maps: every group as long as group 0, every
// entry a live block.
static int check_maps(const struct ks_cache *c, struct tally *x, char *msg, size_t len)
{
    for (uint32_t r = 0; r < c->reqs.n; r++) {
        if (!c->req[r].live)
            continue;
        uint32_t n0 = c->req[r].seq[0].n;
        for (uint32_t g = 0; g < c->p.groups; g++) {
            const struct ks_seq *s = &c->req[r].seq[g];
            if (s->n != n0)
                return ks_corrupt(msg, len, "request %u: group %u has %u blocks, group 0 has %u", r, g, s->n, n0);
            for (uint32_t j = 0; j < s->n; j++) {
                uint32_t id = ks_seq_lookup(s, j);
                if (id >= x->ids || entry_state(c, id) == KS_BLK_FREE)
                    return ks_corrupt(msg, len, "request %u group %u block %u maps to free id %u", r, g, j, id);
                x->refs[id]++;
            }
        }
    }
    return KS_OK;
}

// Batches in flight: each block in one batch, migrating, read from the page
// the batch says, and written to a page it owns or that a victim's batch
// hands over to it.
static int check_batches(const struct ks_cache *c, struct tally *x, char *msg, size_t len)
{
    for (uint32_t s = 0; s < c->n_slot; s++) { // the address index: every slot's record once, in order
        if (c->slot[s]->slot != s)
            return ks_corrupt(msg, len, "slot %u holds the record of slot %u", s, c->slot[s]->slot);
        const struct ks_batch_rec *a = c->slot_by_addr[s];
        if (s > 0 && (uintptr_t)c->slot_by_addr[s - 1] >= (uintptr_t)a)
            return ks_corrupt(msg, len, "the slots' address index is out of order at %u", s);
        if (a->slot >= c->n_slot || c->slot[a->slot] != a)
            return ks_corrupt(msg, len, "the slots' address index holds a record of no slot at %u", s);
    }
    for (uint32_t s = 0; s < c->n_slot; s++) {
        const struct ks_batch_rec *br = c->slot[s];
        if (!br->live)
            continue;
        for (uint32_t i = 0; i < br->b.n; i++) {
            uint32_t id = br->b.blocks[i];
            if (id >= x->ids)
                return ks_corrupt(msg, len, "batch %u moves block %u, an id never used", br->b.id, id);
            const struct ks_block e = entry(c, id), *b = &e;
            if (x->flight[id]++)
                return ks_corrupt(msg, len, "block %u is in two batches", id);
            unsigned state = ks_blk_state(b);
            if (state != KS_BLK_MIG_UP && state != KS_BLK_MIG_DOWN)
                return ks_corrupt(msg, len, "block %u in batch %u is not migrating (state %u)", id, br->b.id, state);
            if (ks_blk_tier(b) != br->b.src || ks_blk_page(b) != br->b.src_pages[i])
                return ks_corrupt(msg, len, "block %u: batch %u reads L%u page %u, block is at L%u page %u", id, br->b.id,
                            br->b.src + 1, br->b.src_pages[i], ks_blk_tier(b) + 1, ks_blk_page(b));
            const struct ks_tier *dt = &c->tier[br->b.dst];
            uint32_t owner = dt->owner[br->b.dst_pages[i]];
            if (owner == id) {
                x->reserved[br->b.dst]++;
                continue;
            }
            // the page still belongs to a victim whose batch hands it over
            const struct ks_batch_rec *a = br->after_slot == KS_NONE ? NULL : c->slot[br->after_slot];
            int handed = 0;
            if (a && a->live && a->b.id == br->b.after)
                for (uint32_t k = 0; k < a->b.n; k++)
                    handed |= a->b.blocks[k] == owner && a->handoff[k] == id;
            if (!handed)
                return ks_corrupt(msg, len, "block %u: destination L%u page %u owned by %u with no handoff", id,
                            br->b.dst + 1, br->b.dst_pages[i], owner);
        }
    }
    return KS_OK;
}

// Every live block: one tier, its own page, migrating exactly when a batch
// holds it, as many references as maps to it.
static int check_blocks(const struct ks_cache *c, struct tally *x, char *msg, size_t len)
{
    for (uint32_t id = 0; id < x->ids; id++) {
        const struct ks_block e = entry(c, id), *b = &e;
        unsigned state = ks_blk_state(b);
        if (state == KS_BLK_FREE) {
            if (x->refs[id])
                return ks_corrupt(msg, len, "free block %u is mapped %u times", id, x->refs[id]);
            continue;
        }
        x->live++;
        x->chunk_live[id / KS_CHUNK]++;
        unsigned t = ks_blk_tier(b);
        if (t >= KS_TIERS || c->tier[t].cap == 0 || ks_blk_page(b) >= c->tier[t].hwm)
            return ks_corrupt(msg, len, "block %u: tier L%u page %u does not exist", id, t + 1, ks_blk_page(b));
        if (c->tier[t].owner[ks_blk_page(b)] != id)
            return ks_corrupt(msg, len, "block %u: L%u page %u is owned by %u", id, t + 1, ks_blk_page(b),
                        c->tier[t].owner[ks_blk_page(b)]);
        x->resident[t]++;
        int moving = state == KS_BLK_MIG_UP || state == KS_BLK_MIG_DOWN;
        if (moving != (x->flight[id] != 0))
            return ks_corrupt(msg, len, "block %u: state %u but %s a live batch", id, state, x->flight[id] ? "in" : "not in");
        if (ks_blk_refs(b) != x->refs[id] || (x->refs[id] == 0 && !moving))
            return ks_corrupt(msg, len, "block %u: refs %u, mapped %u times", id, ks_blk_refs(b), x->refs[id]);
    }
    return KS_OK;
}

// The counts kept on the side agree with the blocks: live ids per table and
// chunk, pages used per tier, blocks conserved, bytes per block moved.
static int check_counts(const struct ks_cache *c, const struct tally *x, char *msg, size_t len)
{
    if (x->live != c->tab.live)
        return ks_corrupt(msg, len, "%u live blocks, table counts %u", x->live, c->tab.live);
    const struct ks_blocktab *tab = &c->tab;
    if (tab->hwm > tab->n_chunks || tab->n_freed > tab->hwm)
        return ks_corrupt(msg, len, "%u chunks ever used, %u freed, of %u", tab->hwm, tab->n_freed, tab->n_chunks);
    for (uint32_t k = 0; k < tab->hwm; k++)
        if (x->chunk_live[k] != tab->chunk[k].live)
            return ks_corrupt(msg, len, "chunk %u: %u live ids, record says %u", k, x->chunk_live[k], tab->chunk[k].live);
    for (uint32_t k = 0; k < tab->n_freed; k++)
        if (tab->freed[k] >= tab->hwm || x->chunk_live[tab->freed[k]])
            return ks_corrupt(msg, len, "freed chunk %u has live ids or was never used", tab->freed[k]);
    // compact chunks: their live ids those their records say, none in a
    // written page, their entries in the table never written
    uint32_t compact = 0;
    for (uint32_t k = 0; k < tab->n_chunks; k++) {
        if (!(tab->compact[k / 8] >> (k % 8) & 1))
            continue;
        const struct ks_compact *r = &tab->cmp[k];
        compact++;
        if (k >= tab->hwm)
            return ks_corrupt(msg, len, "chunk %u is compact but was never used (%u used)", k, tab->hwm);
        if ((uint32_t)__builtin_popcount(r->live) != tab->chunk[k].live)
            return ks_corrupt(msg, len, "compact chunk %u: %d live ids, record says %u", k,
                              __builtin_popcount(r->live), tab->chunk[k].live);
        if (ks_blocktab_page_dirty(tab, k))
            return ks_corrupt(msg, len, "compact chunk %u lies in a written page of the table", k);
        if (r->heat > KS_HEAT_MAX)
            return ks_corrupt(msg, len, "compact chunk %u: heat code %llu", k, (unsigned long long)r->heat);
        for (uint32_t i = 0; i < KS_CHUNK; i++) {
            const struct ks_block *b = &tab->blk[(size_t)k * KS_CHUNK + i];
            if (b->loc || b->last || b->meta)
                return ks_corrupt(msg, len, "compact chunk %u: id %u written in the table", k, k * KS_CHUNK + i);
        }
    }
    if (compact != tab->n_compact)
        return ks_corrupt(msg, len, "%u compact chunks, the table counts %u", compact, tab->n_compact);
    // chunks written aside: not compact, none in a written page, their
    // entries in the table never written, each in a slot of its own in use
    if (tab->n_aside > tab->aside_hwm)
        return ks_corrupt(msg, len, "%u chunks written aside in %u slots", tab->n_aside, tab->aside_hwm);
    uint8_t *given = calloc(tab->aside_hwm / 8 + 1, 1);
    if (!given)
        return ks_corrupt(msg, len, "out of memory for the check");
    for (uint32_t j = 0; j < tab->aside_hwm - tab->n_aside; j++)
        if (tab->aside_freed[j] < tab->aside_hwm)
            given[tab->aside_freed[j] / 8] |= (uint8_t)(1u << (tab->aside_freed[j] % 8));
    uint32_t aside = 0;
    for (uint32_t k = 0; k < tab->n_chunks; k++) {
        if (!(tab->aside_bit[k / 8] >> (k % 8) & 1))
            continue;
        aside++;
        uint32_t slot = tab->aside_of[k];
        const char *bad = k >= tab->hwm || (tab->compact[k / 8] >> (k % 8) & 1) || ks_blocktab_page_dirty(tab, k)
                              ? "never used, compact or in a written page"
                          : slot >= tab->aside_hwm || (given[slot / 8] >> (slot % 8) & 1)
                              ? "in a slot given back, never used or another chunk's"
                              : NULL;
        if (!bad) // the slot is this chunk's: a second chunk in it is caught above
            given[slot / 8] |= (uint8_t)(1u << (slot % 8));
        for (uint32_t i = 0; !bad && i < KS_CHUNK; i++) {
            const struct ks_block *b = &tab->blk[(size_t)k * KS_CHUNK + i];
            if (b->loc || b->last || b->meta)
                bad = "written in the table too";
        }
        if (bad) {
            free(given);
            return ks_corrupt(msg, len, "chunk %u is written aside (slot %u of %u) %s", k, slot, tab->aside_hwm, bad);
        }
    }
    free(given);
    if (aside != tab->n_aside)
        return ks_corrupt(msg, len, "%u chunks written aside, the table counts %u (%u slots used)", aside, tab->n_aside,
                          tab->aside_hwm);
    for (int t = 0; t < KS_TIERS; t++) {
        const struct ks_tier *tr = &c->tier[t];
        if (tr->used != x->resident[t] + x->reserved[t])
            return ks_corrupt(msg, len, "L%d: %u pages used, %u blocks there + %u arriving", t + 1, tr->used,
                        x->resident[t], x->reserved[t]);
        // blocks are conserved: created + arrived - left - freed = there now
        int64_t flow = (int64_t)c->placed[t] + (int64_t)tr->st.mig_in - (int64_t)tr->st.mig_out - (int64_t)c->released[t];
        if (flow != (int64_t)x->resident[t])
            return ks_corrupt(msg, len, "L%d: created %llu + arrived %llu - left %llu - freed %llu != %u there", t + 1,
                        (unsigned long long)c->placed[t], (unsigned long long)tr->st.mig_in,
                        (unsigned long long)tr->st.mig_out, (unsigned long long)c->released[t], x->resident[t]);
        uint64_t bytes = 0;
        for (int u = 0; u < KS_TIERS; u++)
            if (u != t) {
                uint32_t a = c->tier[u].block_bytes, b = tr->block_bytes;
                bytes += c->st.migrations[u][t] * (uint64_t)(a < b ? a : b);
            }
        uint64_t got = 0;
        for (int u = 0; u < KS_TIERS; u++)
            got += c->st.mig_bytes[u][t];
        if (bytes != got)
            return ks_corrupt(msg, len, "L%d: %llu bytes arrived, %llu expected from the blocks moved", t + 1,
                        (unsigned long long)got, (unsigned long long)bytes);
    }
    for (uint32_t i = 0; i < c->n_cand; i++)
        if (!c->cand[i].dead && entry_state(c, c->cand[i].id) == KS_BLK_FREE)
            return ks_corrupt(msg, len, "candidate %u names free block %u", i, c->cand[i].id);
    return KS_OK;
}

int ks_cache_check(const struct ks_cache *c, char *msg, size_t len)
{
    if (c->tally)
        return ks_tally_check(c, msg, len);
    int st = check_tiers(c, msg, len);
    if (st != KS_OK)
        return st;
    // ids from the table's high-water mark on were never used: free, unmapped
    struct tally x = {.ids = ks_blocktab_ids_used(&c->tab)};
    x.refs = calloc(x.ids + 1, sizeof *x.refs);
    x.flight = calloc(x.ids + 1, 1);
    x.chunk_live = calloc(c->tab.hwm + 1, sizeof *x.chunk_live);
    if (!x.refs || !x.flight || !x.chunk_live)
        st = ks_corrupt(msg, len, "checker out of memory");
    if (st == KS_OK)
        st = check_maps(c, &x, msg, len);
    if (st == KS_OK)
        st = check_batches(c, &x, msg, len);
    if (st == KS_OK)
        st = check_blocks(c, &x, msg, len);
    if (st == KS_OK)
        st = check_counts(c, &x, msg, len);
    if (st == KS_OK && c->p.buffer_blocks)
        st = ks_buffer_check(c, msg, len);
    free(x.refs);
    free(x.flight);
    free(x.chunk_live);
    return st;
}
