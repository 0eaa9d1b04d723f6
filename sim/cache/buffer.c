// buffer.c - device buffers: L1 cut into one buffer per (request, group), the
// organisation SGLang's HiSparse ships (cache.h, "Device buffers").
//
// Buffer i owns L1 pages [i * B, (i + 1) * B), B = buffer_blocks, so a
// block's buffer is its page over B and a buffer's blocks are found by
// scanning its B pages: no per-block state beyond the 16-byte entry. The L1
// tier is addressed (tier.h): pages are taken by number, here only.
//
// Every block has a copy in the host tier (the engine backs each new block
// up as it is written), so an eviction from L1 is a drop: the victim takes
// a page in the tier below at once, moving no bytes, and its L1 page is free
// for the block that needs it. The host tier must hold every block: callers
// admit requests by its pages, and a drop that finds it full leaves the
// victim where it is (the incoming block then waits, as in the pool).
//
// Costs: a plan scans each buffer that must evict once (O(B)) for all its
// victims; a new block in a full buffer scans its buffer for one victim.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cache_impl.h"

int ks_buffer_init(struct ks_cache *c)
{
    uint32_t B = c->p.buffer_blocks, n = c->p.tier_blocks[KS_L1] / B;
    c->n_bufs = n;
    c->buf_magic = ks_fastdiv_magic(B);
    c->bufs = calloc(n ? n : 1, sizeof *c->bufs);
    c->free_bufs = malloc((n ? n : 1) * sizeof *c->free_bufs);
    c->touched = malloc((n ? n : 1) * sizeof *c->touched);
    if (!c->bufs || !c->free_bufs || !c->touched)
        return KS_ENOMEM;
    for (uint32_t i = 0; i < n; i++) // buffer 0 on top: the first requests fill L1 from its start
        c->free_bufs[i] = n - 1 - i;
    c->n_free_bufs = n;
    if (c->p.evict == KS_EVICT_FIFO && !(c->arrival = calloc(c->p.tier_blocks[KS_L1], sizeof *c->arrival)))
        return KS_ENOMEM;
    if (c->p.evict == KS_EVICT_LRU && !(c->l1_last = calloc(c->p.tier_blocks[KS_L1], sizeof *c->l1_last)))
        return KS_ENOMEM;
    if (c->l1_last && B % KS_SPAN == 0 &&
        !(c->l1_least = calloc(c->p.tier_blocks[KS_L1] / KS_SPAN + 1, sizeof *c->l1_least)))
        return KS_ENOMEM;
    return ks_tier_addressed(&c->tier[KS_L1]);
}

void ks_buffer_fini(struct ks_cache *c)
{
    free(c->bufs);
    free(c->free_bufs);
    free(c->touched);
    free(c->arrival);
    free(c->l1_last);
    free(c->l1_least);
}

uint64_t ks_buffer_bytes(const struct ks_cache *c)
{
    uint64_t n = (uint64_t)c->n_bufs * (sizeof *c->bufs + sizeof *c->free_bufs + sizeof *c->touched);
    if (c->arrival)
        n += (uint64_t)c->p.tier_blocks[KS_L1] * sizeof *c->arrival;
    if (c->l1_last)
        n += (uint64_t)c->p.tier_blocks[KS_L1] * sizeof *c->l1_last;
    if (c->l1_least)
        n += ((uint64_t)c->p.tier_blocks[KS_L1] / KS_SPAN + 1) * sizeof *c->l1_least;
    return n;
}

uint32_t ks_cache_buffers_free(const struct ks_cache *c)
{
    return c->n_free_bufs;
}

int ks_buffer_assign(struct ks_cache *c, struct ks_req *q, uint32_t req)
{
    uint32_t G = c->p.groups;
    if (c->n_free_bufs < G)
        return KS_ENOSPC;
    if (!(q->buf = malloc(G * sizeof *q->buf)))
        return KS_ENOMEM;
    for (uint32_t g = 0; g < G; g++) {
        uint32_t i = c->free_bufs[--c->n_free_bufs];
        c->bufs[i] = (struct ks_buf){.req = req, .group = (uint16_t)g, .state = KS_BUF_OWNED, .spare = KS_NONE};
        q->buf[g] = i;
    }
    return KS_OK;
}

static void give_back(struct ks_cache *c, uint32_t i)
{
    c->bufs[i].state = KS_BUF_FREE;
    c->bufs[i].req = KS_NONE;
    c->free_bufs[c->n_free_bufs++] = i;
}

void ks_buffer_release(struct ks_cache *c, struct ks_req *q)
{
    if (!q->buf)
        return;
    for (uint32_t g = 0; g < c->p.groups; g++) {
        uint32_t i = q->buf[g];
        if (c->bufs[i].used == 0)
            give_back(c, i);
        else // a block in flight still holds a page: back when it goes
            c->bufs[i].state = KS_BUF_ORPHAN;
    }
    free(q->buf);
    q->buf = NULL;
}

void ks_cache_page_free(struct ks_cache *c, unsigned t, uint32_t page)
{
    ks_tier_free(&c->tier[t], page);
    if (t != KS_L1 || !c->p.buffer_blocks)
        return;
    uint32_t i = ks_buf_of_page(c, page);
    struct ks_buf *b = &c->bufs[i];
    KS_ASSERT(b->used > 0);
    if (--b->used == 0 && b->state == KS_BUF_ORPHAN)
        give_back(c, i);
}

// The buffer of block id's sequence (its chunk's owner: no block is shared).
static uint32_t buf_of(const struct ks_cache *c, uint32_t id)
{
    const struct ks_chunk *ch = &c->tab.chunk[id / KS_CHUNK];
    const struct ks_req *q = &c->req[ch->req];
    KS_ASSERT(ch->req < c->reqs.n && q->live && q->buf);
    return q->buf[ch->group];
}

// The first free page of [base, base + B) at or after base + from, wrapping
// (one is free), as an offset from base: the tier's bits of free pages read
// a word at a time (a full buffer's victims lie anywhere in it).
static uint32_t first_free(const struct ks_tier *tr, uint32_t base, uint32_t B, uint32_t from)
{
    uint32_t p = ks_tier_next_free(tr, base + from, base + B);
    if (p == base + B)
        p = ks_tier_next_free(tr, base, base + from);
    KS_ASSERT(p < base + B && !ks_tier_page_used(tr, p));
    return p - base;
}

// A free page of buffer i for block id (its used count and L1's grow), or
// KS_NONE when it is full.
static uint32_t take_free(struct ks_cache *c, uint32_t i, uint32_t id)
{
    struct ks_buf *b = &c->bufs[i];
    uint32_t B = c->p.buffer_blocks;
    if (b->used == B)
        return KS_NONE;
    uint32_t base = i * B, off = first_free(&c->tier[KS_L1], base, B, b->hint);
    ks_tier_take(&c->tier[KS_L1], base + off, id);
    b->used++;
    b->hint = off + 1 == B ? 0 : off + 1;
    if (c->arrival)
        c->arrival[base + off] = c->arrivals++;
    if (c->l1_last) // not resident there yet (a new block is noted when it is)
        c->l1_last[base + off] = KS_NONE;
    return base + off;
}

// Drops victim id from L1 to a page of the tier below (the host's copy):
// no bytes move. 0 when that tier is full (the victim stays).
static int drop(struct ks_cache *c, uint32_t id)
{
    unsigned low = c->lower[KS_L1];
    uint32_t page = low == KS_TIER_NONE ? KS_NONE : ks_tier_alloc(&c->tier[low], id);
    if (page == KS_NONE)
        return 0;
    struct ks_block *b = ks_blocktab_get(&c->tab, id);
    ks_cache_page_free(c, KS_L1, ks_blk_page(b));
    ks_agg_left_l1(c, id);
    ks_blk_set_loc(b, page, low, KS_BLK_RESIDENT);
    ks_blk_bump_gen(b); // a reader holding its L1 page must look again
    if (ks_blk_prefetched(b)) {
        c->st.pf_wasted++;
        ks_blk_set_prefetched(b, 0);
    }
    ks_evict_note(c, id);
    c->tier[KS_L1].st.mig_out++;
    c->tier[low].st.mig_in++;
    c->st.dropped++;
    c->st.evictions[KS_L1]++;
    return 1;
}

// Whether the spare victim of buffer i is still the one a scan would choose:
// found in this step's plan, and still resident in the buffer and unused
// (a step's keys do not change after its accesses; the victims dropped
// since ranked before it, the arrivals are not eligible).
static int spare_valid(const struct ks_cache *c, uint32_t i)
{
    const struct ks_buf *b = &c->bufs[i];
    if (b->spare == KS_NONE || b->spare_step != c->now + 1u)
        return 0;
    struct ks_block tmp;
    const struct ks_block *k = ks_blocktab_peek(&c->tab, b->spare, &tmp);
    return ks_blk_state(k) == KS_BLK_RESIDENT && ks_blk_tier(k) == KS_L1 && ks_buf_of_page(c, ks_blk_page(k)) == i &&
           c->tier[KS_L1].owner[ks_blk_page(k)] == b->spare && ks_blk_last(c, b->spare) != c->now;
}

uint32_t ks_buffer_place(struct ks_cache *c, uint32_t id)
{
    uint32_t i = buf_of(c, id), page = take_free(c, i, id);
    if (page != KS_NONE)
        return page;
    uint32_t v;
    ks_defer_settle_buffer(c, i); // the spare's recency is read: deferred selections applied first
    int found = spare_valid(c, i) ? (v = c->bufs[i].spare, 1) : ks_evict_select_buffer(c, i, 1, &v, NULL) == 1;
    c->bufs[i].spare = KS_NONE;
    if (found && drop(c, v))
        page = take_free(c, i, id);
    return page;
}

uint32_t ks_buffer_room(struct ks_cache *c, uint32_t n, int *err)
{
    uint32_t n_touched = 0;
    // 1. what each buffer must take in
    for (uint32_t k = 0; k < n; k++) {
        if (k + KS_AHEAD < n)
            __builtin_prefetch(&c->tab.chunk[c->adm_id[k + KS_AHEAD] / KS_CHUNK]);
        struct ks_buf *b = &c->bufs[buf_of(c, c->adm_id[k])];
        if (b->need++ == 0)
            c->touched[n_touched++] = (uint32_t)(b - c->bufs);
    }
    // 2. each buffer that lacks room evicts, one scan for all its victims
    for (uint32_t k = 0; k < n_touched; k++) {
        struct ks_buf *b = &c->bufs[c->touched[k]];
        uint32_t room = c->p.buffer_blocks - b->used;
        if (b->need > room) {
            // one more than needed: the spare is the victim of the block this
            // sequence writes next (ks_buffer_place), without a second scan
            uint32_t want = b->need - room + 1;
            if (ks_grow((void **)&c->samp, &c->cap_samp, want, sizeof *c->samp) != KS_OK) {
                *err = KS_ENOMEM;
                want = 1;
            }
            uint32_t got = ks_evict_select_buffer(c, c->touched[k], want - 1, c->samp, &b->spare);
            b->spare_step = c->now + 1u;
            for (uint32_t v = 0; v < got && v < KS_AHEAD; v++) // the scan may not have read them (lru)
                __builtin_prefetch(ks_blocktab_slot(&c->tab, c->samp[v]), 1);
            for (uint32_t v = 0; v < got; v++) {
                if (v + KS_AHEAD < got)
                    __builtin_prefetch(ks_blocktab_slot(&c->tab, c->samp[v + KS_AHEAD]), 1);
                if (!drop(c, c->samp[v])) {
                    b->spare = KS_NONE; // a victim stays: it, not the spare, goes next
                    break;
                }
            }
        }
        b->need = 0;
    }
    // 3. pages in admission order; the ones placed move to the front
    uint32_t placed = 0;
    for (uint32_t k = 0; k < n; k++) {
        if (k + KS_AHEAD < n)
            __builtin_prefetch(ks_blocktab_slot(&c->tab, c->adm_id[k + KS_AHEAD]));
        uint32_t id = c->adm_id[k];
        const struct ks_block *blk = ks_blocktab_get(&c->tab, id);
        uint32_t page = take_free(c, buf_of(c, id), id);
        if (page == KS_NONE)
            continue;
        struct ks_rec *r = *err == KS_OK ? ks_plan_rec_new(c) : NULL;
        if (!r) {
            ks_cache_page_free(c, KS_L1, page);
            if (*err == KS_OK)
                *err = KS_ENOMEM;
            continue;
        }
        *r = (struct ks_rec){.id = id, .src_page = ks_blk_page(blk), .dst_page = page, .dep = KS_NONE,
                             .handoff = KS_NONE, .batch = KS_NONE, .src = c->adm_src[k], .dst = KS_L1,
                             .klass = c->adm_klass[k], .depth = 0, .group = c->tab.chunk[id / KS_CHUNK].group};
        // swap k into the placed prefix (the ones skipped keep their order after it)
        struct ks_cand a = c->adm[k];
        uint8_t src = c->adm_src[k], kl = c->adm_klass[k];
        for (uint32_t j = k; j > placed; j--) {
            c->adm[j] = c->adm[j - 1];
            c->adm_id[j] = c->adm_id[j - 1];
            c->adm_src[j] = c->adm_src[j - 1];
            c->adm_klass[j] = c->adm_klass[j - 1];
        }
        c->adm[placed] = a;
        c->adm_id[placed] = id;
        c->adm_src[placed] = src;
        c->adm_klass[placed] = kl;
        placed++;
    }
    return placed;
}

int ks_buffer_check(const struct ks_cache *c, char *msg, size_t len)
{
#define BAD(...) do { snprintf(msg, len, __VA_ARGS__); return KS_ECORRUPT; } while (0)
    uint32_t B = c->p.buffer_blocks;
    const struct ks_tier *tr = &c->tier[KS_L1];
    uint32_t free_count = 0;
    for (uint32_t i = 0; i < c->n_bufs; i++) {
        const struct ks_buf *b = &c->bufs[i];
        uint32_t used = 0;
        for (uint32_t p = i * B; p < (i + 1) * B; p++) {
            if (!ks_tier_page_used(tr, p))
                continue;
            used++;
            uint32_t id = tr->owner[p];
            const struct ks_chunk *ch = &c->tab.chunk[id / KS_CHUNK];
            if (b->state == KS_BUF_OWNED && (ch->req != b->req || ch->group != b->group))
                BAD("L1 page %u in the buffer of request %u group %u holds block %u of request %u group %u", p,
                    b->req, b->group, id, ch->req, ch->group);
            if (b->state == KS_BUF_FREE)
                BAD("L1 page %u of free buffer %u holds block %u", p, i, id);
            struct ks_block tmp;
            const struct ks_block *k = ks_blocktab_peek(&c->tab, id, &tmp);
            uint32_t here = ks_blk_tier(k) == KS_L1 && ks_blk_page(k) == p && ks_blk_state(k) == KS_BLK_RESIDENT;
            if (c->l1_last && c->l1_last[p] != (here ? k->last : KS_NONE))
                BAD("L1 page %u: its lru key is %u, its block %u's last use %u (%s)", p, c->l1_last[p], id, k->last,
                    here ? "resident there" : "not resident there");
            if (c->l1_least && c->l1_least[p / KS_SPAN] > c->l1_last[p])
                BAD("L1 page %u: its span's least key, %u, exceeds the page's (%u)", p, c->l1_least[p / KS_SPAN],
                    c->l1_last[p]);
        }
        if (used != b->used)
            BAD("buffer %u: %u pages used, its count says %u", i, used, b->used);
        if (b->need)
            BAD("buffer %u: planning scratch left at %u", i, b->need);
        free_count += b->state == KS_BUF_FREE;
        if (b->state == KS_BUF_ORPHAN && used == 0)
            BAD("buffer %u: orphaned with no page in use", i);
    }
    if (free_count != c->n_free_bufs)
        BAD("%u buffers free, the free stack holds %u", free_count, c->n_free_bufs);
    for (uint32_t r = 0; r < c->reqs.n; r++) {
        if (!c->req[r].live)
            continue;
        for (uint32_t g = 0; g < c->p.groups; g++) {
            uint32_t i = c->req[r].buf[g];
            if (i >= c->n_bufs || c->bufs[i].state != KS_BUF_OWNED || c->bufs[i].req != r || c->bufs[i].group != g)
                BAD("request %u group %u: buffer %u is not its own", r, g, i);
        }
    }
    return KS_OK;
#undef BAD
}
