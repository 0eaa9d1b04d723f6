// tally.c - the cache manager as a tally (ks_cache_params.tally): the pages
// each request holds in each tier, counted, with no block entry.
//
// A follower of detail.gpus in time (sim/step/follow.h) takes each step's
// time from a sampled GPU and no access: its cache only places its
// requests' blocks, frees them, and keeps L1's reserve by demotions. Block by
// block that costs a placement per block and layer group (a loaded GPU admits
// prompts of thousands of blocks a second) for counts that a tally keeps in
// one addition per call.
//
// What it keeps exactly, as a per-block manager would: every tier's pages in
// use, the all-or-nothing room check of ks_cache_req_grow (pages from the
// tier down, and the block table's chunks: each group's own blocks take
// ceil(blocks / KS_CHUNK) of them), where new blocks land (the first tier
// with room), how many blocks each plan demotes to keep the reserve (and
// from L2 to L3 when L2 is full), shared prefixes (a request mapping
// another's prefix holds no page; the prefix's request, freed, keeps its
// pages for its sharers), and the counters of ks_cache_tier_view, the
// demotions' counted when they land (ks_cache_land, where the caller has
// confirmed the plan's batches, or else the next call that changes the
// tally), as a confirm would count them.
// What it cannot keep is which blocks go: with no access, a block's heat
// is its age, and a tally demotes the oldest pages of a tier first (an
// exact scan's choice; the sampled one picks among the oldest), so the
// pages a freed request gives back to each tier, and the tiers' counters
// from then on, may differ from the per-block manager's. Its statistics
// are those of a manager that took no access.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cache_impl.h"

int ks_tally_init(struct ks_cache *c)
{
    c->tally = calloc(1, sizeof *c->tally);
    return c->tally ? KS_OK : KS_ENOMEM;
}

void ks_tally_free(struct ks_cache *c)
{
    struct ks_tally *y = c->tally;
    if (!y)
        return;
    free(y->req);
    ks_ids_fini(&y->reqs);
    for (int t = 0; t < KS_TIERS; t++)
        free(y->fifo[t].run);
    free(y);
    c->tally = NULL;
}

// The chunks a group's `own` blocks take.
static uint64_t chunks_of(uint32_t own)
{
    return (own + KS_CHUNK - 1) / KS_CHUNK;
}

// Tier t's page count moves by +n (taken) or is given back (ks_tier's
// counters, as its allocator keeps them).
static void take(struct ks_tier *t, uint64_t n)
{
    t->used += (uint32_t)n;
    t->st.allocs += n;
    if (t->used > t->st.peak_used)
        t->st.peak_used = t->used;
}

static void give(struct ks_tier *t, uint64_t n)
{
    t->used -= (uint32_t)n;
    t->st.frees += n;
}

// Drops the runs that died (their request freed, or emptied), at the front
// and, when the array is full, everywhere.
static void compact(struct ks_tally *y, struct ks_tally_fifo *f)
{
    uint32_t k = 0;
    for (uint32_t i = f->head; i < f->n; i++) {
        const struct ks_tally_run *r = &f->run[i];
        if (r->n > 0 && r->gen == y->req[r->req].gen)
            f->run[k++] = *r;
    }
    f->head = 0;
    f->n = k;
}

// n pages of req arrived in tier t: a run at the back (the last one grown
// when it is req's).
static int push(struct ks_tally *y, unsigned t, uint32_t req, uint32_t n)
{
    struct ks_tally_fifo *f = &y->fifo[t];
    uint32_t gen = y->req[req].gen;
    if (f->n > f->head) {
        struct ks_tally_run *last = &f->run[f->n - 1];
        if (last->req == req && last->gen == gen) {
            last->n += n;
            return KS_OK;
        }
    }
    if (f->n == f->cap) { // full: the dead runs out, and more room unless they were half of it
        compact(y, f);
        if (2 * f->n >= f->cap && ks_grow((void **)&f->run, &f->cap, f->n + 1, sizeof *f->run) != KS_OK)
            return KS_ENOMEM;
    }
    f->run[f->n++] = (struct ks_tally_run){.req = req, .gen = gen, .n = n};
    return KS_OK;
}

// The plan's demotions land: the pages they left are free, but for those
// handed on to the blocks demoted into them.
void ks_tally_land(struct ks_cache *c)
{
    struct ks_tally *y = c->tally;
    for (unsigned t = 0; t < KS_TIERS; t++) {
        uint64_t left = 0;
        for (unsigned d = 0; d < KS_TIERS; d++) {
            uint64_t n = y->out[t][d];
            left += n;
            c->tier[t].st.mig_out += n;
            c->tier[d].st.mig_in += n;
            c->st.migrations[t][d] += n;
            c->st.mig_bytes[t][d] += n * c->tier[d].block_bytes;
            y->out[t][d] = 0;
        }
        give(&c->tier[t], left - y->hand[t]);
        y->hand[t] = 0;
    }
}

// Moves n of tier t's oldest pages to tier d (their requests' counts; the
// tiers' when they land). The tier holds at least n.
static int move_oldest(struct ks_cache *c, unsigned t, unsigned d, uint64_t n)
{
    struct ks_tally *y = c->tally;
    struct ks_tally_fifo *f = &y->fifo[t];
    while (n > 0) {
        KS_ASSERT(f->head < f->n);
        struct ks_tally_run *r = &f->run[f->head];
        struct ks_tally_req *q = &y->req[r->req];
        if (r->n == 0 || r->gen != q->gen) {
            f->head++;
            continue;
        }
        uint32_t m = r->n < n ? r->n : (uint32_t)n;
        q->n[t] -= m;
        q->n[d] += m;
        r->n -= m;
        n -= m;
        if (push(y, d, r->req, m) != KS_OK)
            return KS_ENOMEM;
        // push may have compacted another tier's array, never this one
    }
    return KS_OK;
}

// Pages of tier t its requests hold (those leaving in the plan's demotions
// not counted, those arriving in vacated pages counted).
static uint64_t held_in(const struct ks_cache *c, unsigned t)
{
    const struct ks_tally *y = c->tally;
    uint64_t n = c->tier[t].used + y->hand[t];
    for (unsigned d = 0; d < KS_TIERS; d++)
        n -= y->out[t][d];
    return n;
}

// Demotes up to n of tier t's oldest pages to the next tier down, making
// room there first by demoting its own (to depth 2: L1 to L2 to L3); the
// pages moved (fewer when the tiers below are full, or t holds fewer)
// into *moved.
static int demote(struct ks_cache *c, unsigned t, uint64_t n, unsigned depth, uint64_t *moved)
{
    struct ks_tally *y = c->tally;
    *moved = 0;
    unsigned d = c->lower[t];
    uint64_t have = held_in(c, t);
    if (n > have)
        n = have;
    if (n == 0 || d == KS_TIER_NONE || depth >= KS_TIERS)
        return KS_OK;
    struct ks_tier *low = &c->tier[d];
    uint64_t room = low->cap - low->used, direct = n < room ? n : room, handed = 0;
    if (direct < n) {
        low->st.alloc_fails += n - direct; // page requests that found it full
        int st = demote(c, d, n - direct, depth + 1, &handed);
        if (st != KS_OK)
            return st;
    }
    take(low, direct);
    y->hand[d] += handed;
    y->out[t][d] += direct + handed;
    c->st.evictions[t] += direct + handed;
    *moved = direct + handed;
    return move_oldest(c, t, d, *moved);
}

int ks_tally_req_new(struct ks_cache *c, uint32_t *out)
{
    struct ks_tally *y = c->tally;
    uint32_t r;
    if (ks_ids_take(&y->reqs, (void **)&y->req, sizeof *y->req, &r) != KS_OK)
        return KS_ENOMEM;
    struct ks_tally_req *q = &y->req[r];
    *q = (struct ks_tally_req){.gen = q->gen, .src = KS_NONE, .live = 1};
    *out = r;
    return KS_OK;
}

int ks_tally_req_share(struct ks_cache *c, uint32_t req, uint32_t src, uint32_t n)
{
    struct ks_tally *y = c->tally;
    ks_tally_land(c);
    struct ks_tally_req *d = ks_tally_req_of(y, req), *s = ks_tally_req_of(y, src);
    // as block by block: src's blocks are mapped by src and its sharers
    if (!d || !s || req == src || d->len != 0 || n > s->len || s->sharers + 1 >= KS_REFS_MAX)
        return KS_EINVAL;
    d->len = d->prefix = n;
    d->src = src;
    s->sharers++;
    return KS_OK;
}

int ks_tally_req_grow(struct ks_cache *c, uint32_t req, uint32_t n, unsigned tier, uint32_t placed[KS_TIERS])
{
    struct ks_tally *y = c->tally;
    ks_tally_land(c);
    struct ks_tally_req *q = ks_tally_req_of(y, req);
    if (!q || tier >= KS_TIERS)
        return KS_EINVAL;
    uint64_t pages = 0, total = (uint64_t)n * c->p.groups;
    for (unsigned t = tier; t < KS_TIERS; t++)
        pages += c->tier[t].cap - c->tier[t].used;
    uint32_t own = q->len - q->prefix;
    uint64_t chunks = (chunks_of(own + n) - chunks_of(own)) * c->p.groups;
    if (pages < total || chunks > c->tab.n_chunks - y->chunks)
        return KS_ENOSPC;
    for (unsigned t = tier; total > 0 && t < KS_TIERS; t++) {
        struct ks_tier *tr = &c->tier[t];
        uint64_t k = tr->cap - tr->used < total ? tr->cap - tr->used : total;
        if (tr->cap && k < total) // the blocks placed further down asked it for a page first
            tr->st.alloc_fails += total - k;
        if (k == 0)
            continue;
        if (push(y, t, req, (uint32_t)k) != KS_OK)
            return KS_ENOMEM;
        take(tr, k);
        q->n[t] += (uint32_t)k;
        c->placed[t] += k;
        if (placed)
            placed[t] += (uint32_t)k;
        total -= k;
    }
    q->len += n;
    y->chunks += chunks;
    return KS_OK;
}

// req's pages and chunks given back; its sharer's hold on its source too.
static void release(struct ks_cache *c, uint32_t req)
{
    struct ks_tally *y = c->tally;
    struct ks_tally_req *q = &y->req[req];
    for (unsigned t = 0; t < KS_TIERS; t++) {
        give(&c->tier[t], q->n[t]);
        c->released[t] += q->n[t];
        q->n[t] = 0;
    }
    y->chunks -= chunks_of(q->len - q->prefix) * c->p.groups;
    q->gen++;
    q->live = q->held = 0;
    ks_ids_give(&y->reqs, req);
    uint32_t src = q->src;
    if (src != KS_NONE) {
        struct ks_tally_req *s = &y->req[src];
        if (--s->sharers == 0 && s->held)
            release(c, src);
    }
}

int ks_tally_req_free(struct ks_cache *c, uint32_t req)
{
    struct ks_tally *y = c->tally;
    ks_tally_land(c);
    struct ks_tally_req *q = ks_tally_req_of(y, req);
    if (!q)
        return KS_EINVAL;
    if (q->sharers > 0) { // its prefix stays for the requests that map it
        q->live = 0;
        q->held = 1;
        return KS_OK;
    }
    release(c, req);
    return KS_OK;
}

uint32_t ks_tally_req_len(const struct ks_cache *c, uint32_t req)
{
    const struct ks_tally_req *q = ks_tally_req_of(c->tally, req);
    return q ? q->len : 0;
}

int ks_tally_step(struct ks_cache *c, uint32_t step)
{
    if (c->started && step < c->now)
        return KS_EINVAL;
    ks_tally_land(c);
    c->started = 1;
    c->now = step;
    return KS_OK;
}

int ks_tally_plan(struct ks_cache *c, struct ks_plan *plan)
{
    *plan = (struct ks_plan){0};
    ks_tally_land(c);
    // the reserve: as many demotions as L1 lacks free pages
    const struct ks_tier *l1 = &c->tier[KS_L1];
    uint32_t room = l1->cap - l1->used;
    uint64_t moved;
    return room < c->reserve ? demote(c, KS_L1, c->reserve - room, 0, &moved) : KS_OK;
}

uint64_t ks_tally_bytes(const struct ks_cache *c)
{
    const struct ks_tally *y = c->tally;
    uint64_t n = sizeof *c + sizeof *y + (uint64_t)y->reqs.cap * (sizeof *y->req + sizeof *y->reqs.free);
    for (int t = 0; t < KS_TIERS; t++)
        n += (uint64_t)y->fifo[t].cap * sizeof *y->fifo[t].run;
    return n;
}

int ks_tally_check(const struct ks_cache *c, char *msg, size_t len)
{
    const struct ks_tally *y = c->tally;
    uint64_t held[KS_TIERS] = {0}, runs[KS_TIERS] = {0}, chunks = 0;
    for (uint32_t r = 0; r < y->reqs.n; r++) {
        const struct ks_tally_req *q = &y->req[r];
        if (!q->live && !q->held)
            continue;
        if (q->prefix > q->len)
            return ks_corrupt(msg, len, "tally request %u maps %u prefix blocks of %u", r, q->prefix, q->len);
        for (int t = 0; t < KS_TIERS; t++)
            held[t] += q->n[t];
        chunks += chunks_of(q->len - q->prefix) * c->p.groups;
    }
    for (int t = 0; t < KS_TIERS; t++) {
        const struct ks_tally_fifo *f = &y->fifo[t];
        for (uint32_t i = f->head; i < f->n; i++)
            if (f->run[i].gen == y->req[f->run[i].req].gen)
                runs[t] += f->run[i].n;
        // pages in use: the requests', and those demotions leave until they
        // land, less those arriving in vacated pages not yet counted
        if (held[t] != held_in(c, (unsigned)t))
            return ks_corrupt(msg, len, "tally tier %d: requests hold %llu pages, the tier's count %llu", t,
                              (unsigned long long)held[t], (unsigned long long)held_in(c, (unsigned)t));
        if (runs[t] != held[t])
            return ks_corrupt(msg, len, "tally tier %d: runs hold %llu pages, requests %llu", t,
                              (unsigned long long)runs[t], (unsigned long long)held[t]);
        if (c->tier[t].used > c->tier[t].cap)
            return ks_corrupt(msg, len, "tally tier %d: %u pages in use of %u", t, c->tier[t].used, c->tier[t].cap);
    }
    if (chunks != y->chunks)
        return ks_corrupt(msg, len, "tally: requests hold %llu chunks, counted %llu", (unsigned long long)chunks,
                          (unsigned long long)y->chunks);
    return KS_OK;
}
