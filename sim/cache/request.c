// request.c - a cache manager's requests and their block sequences: a new
// request, a prefix shared from another, its growth block by block (or a
// turn of blocks at once) into the tiers, and its end, which frees its
// blocks (see cache.h).
#include <stdlib.h>

#include "cache_impl.h"

int ks_cache_req_new(struct ks_cache *c, uint32_t *out)
{
    if (c->tally)
        return ks_tally_req_new(c, out);
    uint32_t r;
    if (ks_ids_take(&c->reqs, (void **)&c->req, sizeof *c->req, &r) != KS_OK)
        return KS_ENOMEM;
    struct ks_seq *seq = calloc(c->p.groups, sizeof *seq);
    if (!seq) {
        ks_ids_give(&c->reqs, r);
        return KS_ENOMEM;
    }
    for (uint32_t g = 0; g < c->p.groups; g++)
        ks_seq_init(&seq[g]);
    c->req[r].seq = seq;
    c->req[r].buf = NULL;
    c->req[r].agg = NULL;
    if (c->p.buffer_blocks) {
        int st = ks_buffer_assign(c, &c->req[r], r);
        if (st != KS_OK) {
            free(seq);
            c->req[r].seq = NULL;
            ks_ids_give(&c->reqs, r);
            return st;
        }
    }
    c->req[r].live = 1;
    *out = r;
    return KS_OK;
}

uint32_t ks_cache_req_len(const struct ks_cache *c, uint32_t req)
{
    if (c->tally)
        return ks_tally_req_len(c, req);
    const struct ks_req *q = ks_cache_req_of(c, req);
    return q ? q->seq[0].n : 0;
}

int ks_cache_req_share(struct ks_cache *c, uint32_t req, uint32_t src, uint32_t n)
{
    if (c->tally)
        return ks_tally_req_share(c, req, src, n);
    struct ks_req *d = ks_cache_req_of(c, req), *s = ks_cache_req_of(c, src);
    if (!d || !s || req == src || d->seq[0].n != 0 || n > s->seq[0].n || c->p.buffer_blocks)
        return KS_EINVAL;
    for (uint32_t g = 0; g < c->p.groups; g++)
        for (uint32_t j = 0; j < n; j++)
            if (ks_blk_refs(ks_blocktab_get(&c->tab, ks_seq_lookup(&s->seq[g], j))) >= KS_REFS_MAX)
                return KS_EINVAL;
    for (uint32_t g = 0; g < c->p.groups; g++) {
        if (ks_seq_share(&d->seq[g], &s->seq[g], n) != KS_OK) {
            for (uint32_t h = 0; h <= g; h++) { // undo: the request stays empty
                ks_seq_fini(&d->seq[h]);
                ks_seq_init(&d->seq[h]);
            }
            return KS_ENOMEM;
        }
    }
    for (uint32_t g = 0; g < c->p.groups; g++)
        for (uint32_t j = 0; j < n; j++) {
            struct ks_block *b = ks_blocktab_get(&c->tab, ks_seq_lookup(&s->seq[g], j));
            ks_blk_set_refs(b, ks_blk_refs(b) + 1);
        }
    ks_agg_shared(c, s);
    return KS_OK;
}

// A growth's turn at once: the next `turn` blocks of every group, up to the
// end of their chunks (the groups' sequences have as many blocks, as many
// shared), all to L1, where the cache keeps nothing per block but the table
// (no access counts, next uses, L1 order or device buffers). The chunks are
// taken group by group and the pages block by block, each block of every
// group before the next, as ks_cache_req_grow's one block at a time takes
// them; then each group's run is written at once (a compact chunk's
// record: its pages and one recency). `left`: the growth's blocks still to
// place, this turn's among them; the caller has checked chunks and pages.
static void grow_turn(struct ks_cache *c, struct ks_req *q, uint32_t req, struct ks_agg *a, uint32_t turn,
                      uint32_t left)
{
    uint32_t groups = c->p.groups, *pages = c->turn_pages;
    uint32_t at = (q->seq[0].n - q->seq[0].n_prefix) % KS_CHUNK;
    for (uint32_t g = 0; g < groups; g++) {
        struct ks_seq *s = &q->seq[g];
        KS_ASSERT(s->n == q->seq[0].n && s->n_prefix == q->seq[0].n_prefix);
        if (ks_seq_needs_chunk(s)) {
            uint32_t first = ks_blocktab_chunk_alloc(&c->tab, req, (uint16_t)g, s->n, 1);
            KS_ASSERT(first != KS_NONE && ks_seq_add_chunk(s, first) == KS_OK);
        }
    }
    for (uint32_t m = 0; m < turn; m++) {
        uint32_t i = at + m;
        for (uint32_t g = 0; g < groups; g++) {
            const struct ks_seq *s = &q->seq[g];
            if (i < 8 && left - m > KS_CHUNK - i) { // the next turn's chunks, as ks_cache_req_grow fetches them
                const void *ahead = ks_blocktab_ahead_line(&c->tab, g, i);
                if (ahead)
                    __builtin_prefetch(ahead, 1);
            }
            uint32_t page = ks_tier_alloc(&c->tier[KS_L1], s->own[s->n_own - 1] + i);
            KS_ASSERT(page != KS_NONE);
            pages[m * groups + g] = page;
        }
    }
    for (uint32_t g = 0; g < groups; g++) {
        struct ks_seq *s = &q->seq[g];
        ks_blocktab_use_l1_run(&c->tab, s->own[s->n_own - 1] + at, turn, pages + g, groups, c->now);
        ks_agg_grown_l1(a, g, s->n, turn);
        s->n += turn;
    }
    c->placed[KS_L1] += (uint64_t)turn * groups;
}

int ks_cache_req_grow(struct ks_cache *c, uint32_t req, uint32_t n, unsigned tier, uint32_t placed[KS_TIERS])
{
    if (c->tally)
        return ks_tally_req_grow(c, req, n, tier, placed);
    struct ks_req *q = ks_cache_req_of(c, req);
    if (!q || tier >= KS_TIERS)
        return KS_EINVAL;
    // all or nothing: check pages and chunks for every group first
    // (device buffers: every block ends up holding a page below L1, its own
    // or the one its buffer's victim drops to)
    uint64_t pages = 0, chunks = 0;
    for (unsigned t = tier == KS_L1 && c->p.buffer_blocks ? KS_L2 : tier; t < KS_TIERS; t++)
        pages += ks_tier_free_pages(&c->tier[t]);
    for (uint32_t g = 0; g < c->p.groups; g++) {
        const struct ks_seq *s = &q->seq[g];
        uint32_t fill = (s->n - s->n_prefix) % KS_CHUNK;
        uint32_t room = s->n_own > 0 && fill ? KS_CHUNK - fill : 0;
        if (n > room)
            chunks += (n - room + KS_CHUNK - 1) / KS_CHUNK;
        if (ks_seq_reserve(&q->seq[g], s->n_own + (n + KS_CHUNK - 1) / KS_CHUNK + 1) != KS_OK)
            return KS_ENOMEM;
    }
    if (pages < (uint64_t)n * c->p.groups || chunks > ks_blocktab_chunks_free(&c->tab))
        return KS_ENOSPC;
    // blocks placed in L1 are known there at once: the request's first
    // access need not read its prompt's entries again; where the cache
    // accounts in aggregate (or defers selections), their chunks are compact
    // (blocktab.h) until something reads them one by one
    struct ks_agg *a = ks_agg_growing(c, q);
    int compact = (a || c->settle_fn) && tier == KS_L1 && !c->p.buffer_blocks && ks_agg_policy_allows(c);
    // there, where nothing per block is kept but the table, a turn of blocks at once (grow_turn)
    int turns = compact && !c->l1_last && !c->lfu && !c->next;
    if (turns && ks_grow((void **)&c->turn_pages, &c->cap_turn_pages, KS_CHUNK * c->p.groups, sizeof *c->turn_pages) !=
                     KS_OK)
        return KS_ENOMEM;
    for (uint32_t k = 0; k < n; k++) {
        const struct ks_seq *s0 = &q->seq[0];
        uint32_t at = (s0->n - s0->n_prefix) % KS_CHUNK, turn = n - k < KS_CHUNK - at ? n - k : KS_CHUNK - at;
        if (turns && (uint64_t)turn * c->p.groups <= ks_tier_free_pages(&c->tier[KS_L1])) {
            grow_turn(c, q, req, a, turn, n - k);
            if (placed)
                placed[KS_L1] += turn * c->p.groups;
            k += turn - 1;
            continue;
        }
        for (uint32_t g = 0; g < c->p.groups; g++) {
            struct ks_seq *s = &q->seq[g];
            if (ks_seq_needs_chunk(s)) {
                uint32_t first = ks_blocktab_chunk_alloc(&c->tab, req, (uint16_t)g, s->n, compact);
                KS_ASSERT(first != KS_NONE && ks_seq_add_chunk(s, first) == KS_OK);
            }
            uint32_t i = (s->n - s->n_prefix) % KS_CHUNK, id = s->own[s->n_own - 1] + i;
            // the chunks the next 32 blocks' turn will take, one per group, lie
            // anywhere in the table: each group's is fetched a line per block
            // of this turn, spread out (at the turn's start the misses would
            // queue), where the growth goes on into the next turn. (A hint.)
            if (i < 8 && n - k > KS_CHUNK - i) {
                const void *ahead = ks_blocktab_ahead_line(&c->tab, g, i);
                if (ahead)
                    __builtin_prefetch(ahead, 1);
            }
            uint32_t page = KS_NONE;
            unsigned t = tier;
            if (t == KS_L1 && c->p.buffer_blocks) {
                page = ks_buffer_place(c, id);
                t = page == KS_NONE ? KS_L2 : KS_L1;
            }
            for (; page == KS_NONE && t < KS_TIERS; t++)
                if (c->tier[t].cap && (page = ks_tier_alloc(&c->tier[t], id)) != KS_NONE)
                    break;
            KS_ASSERT(page != KS_NONE);
            ks_blocktab_use(&c->tab, id, page, t, c->now);
            if (c->l1_last)
                ks_l1_last_note(c, ks_blocktab_get(&c->tab, id));
            c->placed[t]++;
            if (c->lfu)
                c->lfu[id] = 0;
            if (c->next) {
                c->next[id] = KS_NONE;
                ks_evict_note(c, id);
            }
            ks_agg_grown(a, g, s->n, t);
            s->n++;
            if (placed)
                placed[t]++;
        }
    }
    return KS_OK;
}

// Block id, freed, is no candidate any more.
static void cand_dead(struct ks_cache *c, uint32_t id)
{
    uint32_t ci = ks_cache_cand_find(c, id);
    if (ci != KS_NONE)
        c->cand[ci].dead = 1;
}

void ks_cache_release_block(struct ks_cache *c, uint32_t id)
{
    struct ks_block tmp;
    const struct ks_block *b = ks_blocktab_peek(&c->tab, id, &tmp);
    if (ks_blk_prefetched(b))
        c->st.pf_wasted++;
    ks_cache_page_free(c, ks_blk_tier(b), ks_blk_page(b));
    c->released[ks_blk_tier(b)]++;
    cand_dead(c, id);
    ks_blocktab_release(&c->tab, id);
}

// A request's blocks are freed in their order: the entries (a chunk's run of
// 32, the chunks anywhere in the table; a compact chunk's record instead)
// and their chunks' records are fetched FREE_AHEAD_ENTRY blocks ahead, the
// owner slots of their pages (anywhere in the tier) FREE_AHEAD_PAGE ahead,
// so that the misses overlap. Hints only.
// NOTE: a macro, not a function: GCC deems a function whose only effect is
// a prefetch pure, and drops its calls.
#define FREE_AHEAD_ENTRY 64
#define FREE_AHEAD_PAGE 16
#define FREE_AHEAD(c, s, j)                                                                                          \
    do {                                                                                                             \
        if ((j) + FREE_AHEAD_ENTRY < (s)->n) {                                                                       \
            uint32_t ahead = ks_seq_lookup((s), (j) + FREE_AHEAD_ENTRY);                                            \
            /* a compact chunk's record, its four lines in turn (the chunk's ids run in order), else the entry */   \
            const struct ks_compact *ax = ks_blocktab_compact(&(c)->tab, ahead / KS_CHUNK);                         \
            __builtin_prefetch(ax ? (const void *)((const char *)ax + ahead % 4 * 64)                              \
                                  : ks_blocktab_slot(&(c)->tab, ahead),                                              \
                               1);                                                                                   \
            __builtin_prefetch(&(c)->tab.chunk[ahead / KS_CHUNK], 1);                                               \
        }                                                                                                            \
        if ((j) + FREE_AHEAD_PAGE < (s)->n) {                                                                        \
            struct ks_block tmp;                                                                                     \
            const struct ks_block *a = ks_blocktab_peek(&(c)->tab, ks_seq_lookup((s), (j) + FREE_AHEAD_PAGE), &tmp); \
            if (ks_blk_state(a) == KS_BLK_RESIDENT)                                                                  \
                __builtin_prefetch(&(c)->tier[ks_blk_tier(a)].owner[ks_blk_page(a)], 1);                            \
        }                                                                                                            \
    } while (0)

int ks_cache_req_free(struct ks_cache *c, uint32_t req)
{
    if (c->tally)
        return ks_tally_req_free(c, req);
    struct ks_req *q = ks_cache_req_of(c, req);
    if (!q)
        return KS_EINVAL;
    ks_agg_free(c, q); // its blocks that outlive it (shared, in flight) get their pending accesses
    for (uint32_t g = 0; g < c->p.groups; g++) {
        struct ks_seq *s = &q->seq[g];
        for (uint32_t j = 0; j < s->n; j++) {
            FREE_AHEAD(c, s, j);
            uint32_t id = ks_seq_lookup(s, j);
            const struct ks_compact *x = ks_blocktab_compact(&c->tab, id / KS_CHUNK);
            if (x) {
                // mapped once (never shared: an own chunk), resident in L1: its
                // blocks of this sequence go at once, as ks_cache_release_block
                // would free them one by one
                KS_ASSERT(j >= s->n_prefix);
                uint32_t i = id % KS_CHUNK, run = s->n - j < KS_CHUNK - i ? s->n - j : KS_CHUNK - i;
                for (uint32_t m = 0; m < run; m++) {
                    if (m > 0)
                        FREE_AHEAD(c, s, j + m);
                    ks_cache_page_free(c, KS_L1, x->page[i + m] & KS_PAGE_MAX);
                    cand_dead(c, id + m);
                }
                c->released[KS_L1] += run;
                ks_blocktab_release_run(&c->tab, id, run);
                j += run - 1;
                continue;
            }
            struct ks_block *b = ks_blocktab_entry(&c->tab, id); // in the table or aside
            unsigned refs = ks_blk_refs(b);
            KS_ASSERT(refs > 0);
            ks_blk_set_refs(b, refs - 1);
            // a block in flight is freed when its batch is confirmed or aborted
            if (refs == 1 && ks_blk_state(b) == KS_BLK_RESIDENT)
                ks_cache_release_block(c, id);
        }
        ks_seq_fini(s);
    }
    ks_buffer_release(c, q);
    free(q->seq);
    q->seq = NULL;
    q->live = 0;
    ks_ids_give(&c->reqs, req);
    return KS_OK;
}
