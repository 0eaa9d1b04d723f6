// migrate.c - migration planning: the step's candidates become batches of block
// moves, with the evictions that make room; confirm and abort finish them.
//
// Planning runs in four passes:
//  1. order: candidates sorted by class, then by turn within the class (the
//     k-th candidate of every request before any request's (k+1)-th), so a
//     request with a cold burst cannot starve the others;
//  2. admit: misses always; warm-ups (deferred misses) then prefetches
//     while their bytes fit in the budget left after the misses; the first
//     that does not fit ends admission and every later one is dropped;
//  3. room: each admitted block takes a free L1 page, or the page of an L1
//     victim, which is demoted to the next tier down (taking a free page
//     there or, recursively, a victim's page there). A victim that cannot be
//     placed below stays; the candidate waiting for its page stays pending;
//  4. batches: moves grouped by (layer group, source, destination, the batch
//     that vacates their destination pages, whether they are misses), at
//     most migration_batch blocks each, deepest demotions first so that
//     every batch's `after` precedes it, and within a depth group by group,
//     the first layer's first. A batch of misses carries no warm-up or
//     prefetch: the layer that waits for it waits for no block it does not
//     read, and the lanes take the others after the misses (their class).
// A page handed from a victim to an incoming block changes owner when the
// victim's batch is confirmed, so no page is ever owned by two blocks.
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cache_impl.h"
#include "sort.h"

// Debug mode (params.debug): every invariant after every change of plan.
static void debug_check(const struct ks_cache *c, const char *after)
{
    if (!c->p.debug)
        return;
    char msg[256];
    if (ks_cache_check(c, msg, sizeof msg) != KS_OK) {
        fprintf(stderr, "kvstrata: cache invariant broken after %s at step %u: %s\n", after, c->now, msg);
        KS_ASSERT(!"cache invariant");
    }
}

// Whether candidate x comes before y: by class, then rank, then request.
// A total order: a request's candidates of one class have the ranks 0, 1, 2...
static inline int cand_before(const struct ks_cand *x, const struct ks_cand *y)
{
    if (x->klass != y->klass)
        return x->klass < y->klass;
    return x->rank != y->rank ? x->rank < y->rank : x->req < y->req;
}

// Sorts the step's candidates (cand_before); the order is total, so any
// sort gives it. A few: insertion; more: three stable radix passes, the
// least significant key first.
// NOTE: qsort's call per comparison was 3.4% of the main thread on one 32K
// request of hisparse_missrate.lua (perf, 2026-12-05); bench cache's plans
// hold tens of candidates, where a radix pass's counts cost more.
static int sort_cands(struct ks_cache *c)
{
    struct ks_cand *a = c->cand;
    uint32_t n = c->n_cand;
    if (n <= 64) {
        for (uint32_t i = 1; i < n; i++) {
            struct ks_cand x = a[i];
            uint32_t j = i;
            for (; j > 0 && cand_before(&x, &a[j - 1]); j--)
                a[j] = a[j - 1];
            a[j] = x;
        }
        return KS_OK;
    }
    if (ks_grow((void **)&c->cand_tmp, &c->cap_cand_tmp, n, sizeof *c->cand_tmp) != KS_OK)
        return KS_ENOMEM;
    ks_sort_by_u32(a, n, sizeof *a, offsetof(struct ks_cand, req), c->cand_tmp);
    ks_sort_by_u32(a, n, sizeof *a, offsetof(struct ks_cand, rank), c->cand_tmp);
    ks_sort_by_u32(a, n, sizeof *a, offsetof(struct ks_cand, klass), c->cand_tmp);
    return KS_OK;
}

static uint64_t move_bytes(const struct ks_cache *c, unsigned src, unsigned dst)
{
    uint32_t a = c->tier[src].block_bytes, b = c->tier[dst].block_bytes;
    return a < b ? a : b;
}

static int grow_adm(struct ks_cache *c, uint32_t n)
{
    if (n <= c->cap_adm)
        return KS_OK;
    uint32_t cap = c->cap_adm ? c->cap_adm : 64;
    while (cap < n)
        cap *= 2;
    struct ks_cand *a = realloc(c->adm, cap * sizeof *a);
    if (a) c->adm = a;
    uint32_t *id = realloc(c->adm_id, cap * sizeof *id);
    if (id) c->adm_id = id;
    uint8_t *s = realloc(c->adm_src, cap);
    if (s) c->adm_src = s;
    uint8_t *k = realloc(c->adm_klass, cap);
    if (k) c->adm_klass = k;
    if (!a || !id || !s || !k)
        return KS_ENOMEM;
    c->cap_adm = cap;
    return KS_OK;
}

struct ks_rec *ks_plan_rec_new(struct ks_cache *c)
{
    if (ks_grow((void **)&c->rec, &c->cap_rec, c->n_rec + 1, sizeof *c->rec) != KS_OK)
        return NULL;
    return &c->rec[c->n_rec++];
}

static uint32_t make_room(struct ks_cache *c, unsigned t, const uint32_t *in, const uint8_t *src_tier,
                          unsigned one_src, const uint8_t *klass, uint32_t n, uint8_t depth, int *err);

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

// Marks the records that bring the admitted early misses (adm[0 .. got))
// into L1, so that assemble keeps them in batches of their own.
static int mark_early(struct ks_cache *c, uint32_t got)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < got; i++)
        n += c->adm[i].early && c->adm_klass[i] == KS_CLASS_MISS;
    if (n == 0)
        return KS_OK;
    if (ks_grow((void **)&c->early, &c->cap_early, n, sizeof *c->early) != KS_OK)
        return KS_ENOMEM;
    n = 0;
    for (uint32_t i = 0; i < got; i++)
        if (c->adm[i].early && c->adm_klass[i] == KS_CLASS_MISS)
            c->early[n++] = c->adm_id[i];
    qsort(c->early, n, sizeof *c->early, cmp_u32);
    for (uint32_t r = 0; r < c->n_rec; r++) {
        struct ks_rec *rc = &c->rec[r];
        rc->early = rc->dst == KS_L1 && rc->klass == KS_CLASS_MISS &&
                    bsearch(&rc->id, c->early, n, sizeof *c->early, cmp_u32) != NULL;
    }
    return KS_OK;
}

// Chooses up to n victims in tier t and plans their demotion to the next
// tier down (records at `depth`); a victim that finds no room below stays.
// Returns how many were placed: the first ones of *vict (valid until the
// next call for tier t).
static uint32_t demote_victims(struct ks_cache *c, unsigned t, uint32_t n, uint8_t depth, const uint32_t **vict,
                               int *err)
{
    *vict = c->vict[t];
    unsigned low = c->lower[t];
    if (n == 0 || low == KS_TIER_NONE)
        return 0;
    if (ks_grow((void **)&c->vict[t], &c->cap_vict[t], n, sizeof *c->vict[t]) != KS_OK) {
        *err = KS_ENOMEM;
        return 0;
    }
    uint32_t *v = c->vict[t]; // one array per tier: the recursion goes one tier down each time
    *vict = v;
    uint32_t nv = ks_evict_select(c, t, n, v);
    uint32_t placed = make_room(c, low, v, NULL, t, NULL, nv, depth, err);
    for (uint32_t i = placed; i < nv; i++) { // no room below: the victim stays
        ks_blk_set_state(ks_blocktab_get(&c->tab, v[i]), KS_BLK_RESIDENT);
        ks_evict_note(c, v[i]);
    }
    c->st.evictions[t] += placed;
    for (uint32_t i = 0; i < placed; i++)
        if (ks_blk_refs(ks_blocktab_get(&c->tab, v[i])) > 1)
            c->st.demotions_shared++;
    return placed;
}

// Finds up to n pages in tier t for the blocks in[0..n) (coming from
// src_tier[i], or all from one tier when src_tier is NULL) and records their
// moves at `depth`. Returns how many found a page: the first ones, in order.
static uint32_t make_room(struct ks_cache *c, unsigned t, const uint32_t *in, const uint8_t *src_tier,
                          unsigned one_src, const uint8_t *klass, uint32_t n, uint8_t depth, int *err)
{
    struct ks_tier *tr = &c->tier[t];
    uint32_t got = 0;
    for (; got < n && ks_tier_free_pages(tr) > 0; got++) {
        uint32_t id = in[got];
        const struct ks_block *b = ks_blocktab_get(&c->tab, id);
        uint32_t page = ks_tier_alloc(tr, id);
        struct ks_rec *r = ks_plan_rec_new(c);
        if (!r) {
            *err = KS_ENOMEM;
            return got;
        }
        *r = (struct ks_rec){.id = id, .src_page = ks_blk_page(b), .dst_page = page, .dep = KS_NONE,
                             .handoff = KS_NONE, .batch = KS_NONE, .group = c->tab.chunk[id / KS_CHUNK].group,
                             .src = src_tier ? src_tier[got] : (uint8_t)one_src, .dst = (uint8_t)t,
                             .klass = klass ? klass[got] : KS_CLASS_EVICT, .depth = depth};
    }
    if (got == n)
        return got;
    if (tr->cap)
        tr->st.alloc_fails += n - got; // page requests that found the tier full
    // victims in t, placed below first; only placed victims give up their pages
    uint32_t first_rec = c->n_rec;
    const uint32_t *vict;
    uint32_t placed = demote_victims(c, t, n - got, (uint8_t)(depth + 1), &vict, err);
    // the victims' records are the first `placed` records at depth+1 since first_rec
    uint32_t vi = 0;
    for (uint32_t r = first_rec; r < c->n_rec && vi < placed; r++) {
        if (c->rec[r].depth != depth + 1 || c->rec[r].id != vict[vi])
            continue;
        uint32_t id = in[got];
        const struct ks_block *b = ks_blocktab_get(&c->tab, id);
        const struct ks_block *v = ks_blocktab_get(&c->tab, vict[vi]);
        c->rec[r].handoff = id;
        struct ks_rec *m = ks_plan_rec_new(c);
        if (!m) {
            *err = KS_ENOMEM;
            break;
        }
        *m = (struct ks_rec){.id = id, .src_page = ks_blk_page(b), .dst_page = ks_blk_page(v), .dep = r,
                             .handoff = KS_NONE, .batch = KS_NONE, .group = c->tab.chunk[id / KS_CHUNK].group,
                             .src = src_tier ? src_tier[got] : (uint8_t)one_src, .dst = (uint8_t)t,
                             .klass = klass ? klass[got] : KS_CLASS_EVICT, .depth = depth};
        got++;
        vi++;
    }
    return got;
}

// L1 pages that are free, or will be when the batches in flight land.
static uint32_t l1_room(const struct ks_cache *c)
{
    uint32_t room = ks_tier_free_pages(&c->tier[KS_L1]);
    for (uint32_t s = 0; s < c->n_slot; s++) {
        const struct ks_batch_rec *br = c->slot[s];
        if (br->live && br->b.src == KS_L1)
            for (uint32_t i = 0; i < br->b.n; i++)
                room += br->handoff[i] == KS_NONE;
    }
    for (uint32_t r = 0; r < c->n_rec; r++) // demotions planned in this call
        room += c->rec[r].src == KS_L1 && c->rec[r].handoff == KS_NONE;
    return room;
}

// Demotes victims until L1 has its reserve of free pages (counting pages
// that batches in flight will free), so that new blocks find room in L1.
static void keep_reserve(struct ks_cache *c, int *err)
{
    if (c->p.buffer_blocks) // a new block makes room in its own buffer
        return;
    uint32_t room = l1_room(c);
    const uint32_t *vict;
    if (room < c->reserve) // pages freed at confirm: no block is waiting for them
        demote_victims(c, KS_L1, c->reserve - room, 1, &vict, err);
}

void ks_batch_rec_free(struct ks_batch_rec *br)
{
    if (!br)
        return;
    free(br->b.blocks);
    free(br->b.src_pages);
    free(br->b.dst_pages);
    free(br->handoff);
    free(br->klass);
    free(br);
}

// How many slots' records lie below br's address (uintptr_t: records of
// separate allocations are compared as numbers, never as pointers).
static uint32_t addr_rank(const struct ks_cache *c, const struct ks_batch_rec *br)
{
    uint32_t lo = 0, hi = c->n_slot;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if ((uintptr_t)c->slot_by_addr[mid] < (uintptr_t)br)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static struct ks_batch_rec *new_batch(struct ks_cache *c)
{
    uint32_t s;
    if (c->n_free_slot) {
        s = c->free_slot[--c->n_free_slot];
    } else {
        if (ks_grow((void **)&c->slot, &c->cap_slot, c->n_slot + 1, sizeof *c->slot) != KS_OK)
            return NULL;
        if (c->cap_side < c->cap_slot) { // one that failed is grown again at the next call
            uint32_t *f = realloc(c->free_slot, (size_t)c->cap_slot * sizeof *f);
            if (!f)
                return NULL;
            c->free_slot = f;
            struct ks_batch_rec **a = realloc(c->slot_by_addr, (size_t)c->cap_slot * sizeof *a);
            if (!a)
                return NULL;
            c->slot_by_addr = a;
            c->cap_side = c->cap_slot;
        }
        uint32_t B = c->p.migration_batch;
        struct ks_batch_rec *br = calloc(1, sizeof *br);
        if (!br)
            return NULL;
        br->b.blocks = malloc(B * sizeof(uint32_t));
        br->b.src_pages = malloc(B * sizeof(uint32_t));
        br->b.dst_pages = malloc(B * sizeof(uint32_t));
        br->handoff = malloc(B * sizeof(uint32_t));
        br->klass = malloc(B);
        br->cap = B;
        br->b.block_klass = br->klass;
        if (!br->b.blocks || !br->b.src_pages || !br->b.dst_pages || !br->handoff || !br->klass) {
            ks_batch_rec_free(br);
            return NULL;
        }
        s = c->n_slot;
        uint32_t at = addr_rank(c, br);
        memmove(c->slot_by_addr + at + 1, c->slot_by_addr + at, (s - at) * sizeof *c->slot_by_addr);
        c->slot_by_addr[at] = br;
        c->n_slot++;
        c->slot[s] = br;
        br->slot = s;
    }
    struct ks_batch_rec *br = c->slot[s];
    br->b.id = c->next_batch_id++;
    br->b.after = KS_NONE;
    br->b.n = 0;
    br->b.bytes = 0;
    br->b.klass = KS_CLASS_EVICT;
    br->b.early = 0;
    br->after_slot = KS_NONE;
    br->live = 1;
    c->n_live_batches++;
    return br;
}

// Orders the records by layer group, stably, so that every batch carries one
// layer's blocks (as an engine that copies layer by layer, and as a device
// buffer, one request's layer, must): a block moving up to L1 is keyed by its
// own group, a demotion by the group of the move that takes the page it
// vacates (so that a batch's moves and the demotions they wait for pair
// batch to batch), and a demotion that only keeps L1's reserve goes after
// all. The records' `dep` follow them.
static int order_records(struct ks_cache *c)
{
    uint32_t G = c->p.groups, n = c->n_rec;
    if (n < 2)
        return KS_OK;
    if (ks_grow((void **)&c->rec_tmp, &c->cap_rec_tmp, n, sizeof *c->rec_tmp) != KS_OK)
        return KS_ENOMEM;
    if (!c->group_count && !(c->group_count = malloc((G + 2) * sizeof *c->group_count)))
        return KS_ENOMEM;
    // a consumer is pushed after the demotion it depends on (make_room):
    // walking back, its key is final before it is passed on
    for (uint32_t r = n; r-- > 0;) {
        struct ks_rec *x = &c->rec[r];
        if (x->depth > 0 && x->handoff == KS_NONE)
            x->group = (uint16_t)G;
        if (x->dep != KS_NONE)
            c->rec[x->dep].group = x->group;
    }
    uint32_t *at = c->group_count;
    memset(at, 0, (G + 2) * sizeof *at);
    for (uint32_t r = 0; r < n; r++)
        at[c->rec[r].group + 1]++;
    for (uint32_t g = 0; g <= G; g++)
        at[g + 1] += at[g];
    // each record's new index, kept in its `batch` (unused until assemble)
    for (uint32_t r = 0; r < n; r++)
        c->rec[r].batch = at[c->rec[r].group]++;
    for (uint32_t r = 0; r < n; r++) {
        struct ks_rec x = c->rec[r];
        if (x.dep != KS_NONE)
            x.dep = c->rec[x.dep].batch;
        x.batch = KS_NONE;
        c->rec_tmp[c->rec[r].batch] = x;
    }
    memcpy(c->rec, c->rec_tmp, n * sizeof *c->rec);
    return KS_OK;
}

// Groups the records into batches, deepest first.
static int assemble(struct ks_cache *c, struct ks_plan *plan, uint8_t max_depth)
{
    enum { OPEN = 16 };
    for (int d = max_depth; d >= 0; d--) {
        struct ks_batch_rec *open[OPEN];
        uint32_t open_slot[OPEN]; // the batch, its slot
        uint32_t n_open = 0, group = UINT32_MAX;
        for (uint32_t i = 0; i < c->n_rec; i++) {
            struct ks_rec *r = &c->rec[i];
            if (r->depth != d)
                continue;
            // the records come group by group (order_records) and a batch
            // carries one group's: a new group closes the open batches
            if (r->group != group) {
                n_open = 0;
                group = r->group;
            }
            uint8_t early = r->early; // set on misses only (mark_early)
            uint32_t after_slot = r->dep == KS_NONE ? KS_NONE : c->rec[r->dep].batch;
            struct ks_batch_rec *br = NULL;
            uint32_t bs = KS_NONE;
            for (uint32_t k = 0; k < n_open; k++) {
                struct ks_batch_rec *o = open[k];
                if (o->b.src == r->src && o->b.dst == r->dst && o->after_slot == after_slot && o->b.n < o->cap &&
                    o->b.early == early && (o->b.klass == KS_CLASS_MISS) == (r->klass == KS_CLASS_MISS)) {
                    br = o;
                    bs = open_slot[k];
                    break;
                }
            }
            if (!br) {
                br = new_batch(c);
                if (!br)
                    return KS_ENOMEM;
                bs = br->slot;
                br->b.src = r->src;
                br->b.dst = r->dst;
                br->b.group = r->group;
                br->b.early = early;
                br->after_slot = after_slot;
                br->b.after = after_slot == KS_NONE ? KS_NONE : c->slot[after_slot]->b.id;
                if (ks_grow((void **)&c->plan_out, &c->cap_plan_out, plan->n + 1, sizeof *c->plan_out) != KS_OK)
                    return KS_ENOMEM;
                c->plan_out[plan->n++] = &br->b;
                if (n_open == OPEN) // too many keys at once: stop filling the newest
                    n_open--;
                open[n_open] = br;
                open_slot[n_open++] = bs;
            }
            uint32_t k = br->b.n++;
            br->b.blocks[k] = r->id;
            br->b.src_pages[k] = r->src_page;
            br->b.dst_pages[k] = r->dst_page;
            br->handoff[k] = r->handoff;
            br->klass[k] = r->klass;
            if (r->klass < br->b.klass)
                br->b.klass = r->klass;
            br->b.bytes += move_bytes(c, r->src, r->dst);
            plan->bytes += move_bytes(c, r->src, r->dst);
            r->batch = bs;
        }
    }
    return KS_OK;
}

// Sets each new batch's most_per_req: the most of its blocks that one request
// (the owner of the block's chunk) has, counted with a mark per request.
static int count_per_req(struct ks_cache *c, const struct ks_plan *plan)
{
    if (c->cap_req_mark < c->reqs.n) {
        uint32_t cap = c->cap_req_mark;
        if (ks_grow((void **)&c->req_mark, &cap, c->reqs.n, sizeof *c->req_mark) != KS_OK)
            return KS_ENOMEM;
        uint32_t *n = realloc(c->req_count, (size_t)cap * sizeof *n);
        if (!n)
            return KS_ENOMEM;
        c->req_count = n;
        memset(c->req_mark + c->cap_req_mark, 0, (size_t)(cap - c->cap_req_mark) * sizeof *c->req_mark);
        c->cap_req_mark = cap;
    }
    for (uint32_t j = 0; j < plan->n; j++) {
        struct ks_batch *b = plan->batch[j];
        uint32_t most = 0;
        for (uint32_t i = 0; i < b->n; i++) {
            uint32_t q = c->tab.chunk[b->blocks[i] / KS_CHUNK].req;
            if (c->req_mark[q] != b->id + 1u) {
                c->req_mark[q] = b->id + 1u;
                c->req_count[q] = 0;
            }
            if (++c->req_count[q] > most)
                most = c->req_count[q];
        }
        b->most_per_req = most;
    }
    return KS_OK;
}

int ks_cache_plan(struct ks_cache *c, uint64_t budget, struct ks_plan *plan)
{
    if (c->tally)
        return ks_tally_plan(c, plan);
    plan->n = 0;
    plan->bytes = 0;
    plan->batch = c->plan_out;
    c->n_rec = 0;

    // 1. keep what still needs moving; order by class and turn
    uint32_t n = 0;
    for (uint32_t i = 0; i < c->n_cand; i++) {
        if (i + KS_AHEAD < c->n_cand)
            __builtin_prefetch(ks_blocktab_slot(&c->tab, c->cand[i + KS_AHEAD].id));
        struct ks_cand cd = c->cand[i];
        if (cd.dead)
            continue;
        const struct ks_block *b = ks_blocktab_get(&c->tab, cd.id);
        if (ks_blk_tier(b) == KS_L1 || ks_blk_state(b) == KS_BLK_MIG_UP)
            continue; // arrived or on its way
        c->cand[n++] = cd;
    }
    c->n_cand = n;
    if (ks_grow((void **)&c->turn, &c->cap_turn, c->reqs.n * KS_CLASSES + 1, sizeof *c->turn) != KS_OK)
        return KS_ENOMEM;
    for (uint32_t i = 0; i < c->n_cand; i++) // reset only the counters in use
        c->turn[c->cand[i].req * KS_CLASSES + c->cand[i].klass] = 0;
    for (uint32_t i = 0; i < c->n_cand; i++)
        c->cand[i].rank = c->turn[c->cand[i].req * KS_CLASSES + c->cand[i].klass]++;
    if (sort_cands(c) != KS_OK)
        return KS_ENOMEM;

    // 2. admit; blocks migrating down wait for a later plan
    uint64_t miss_bytes = 0, pf_bytes = 0;
    for (uint32_t i = 0; i < c->n_cand; i++)
        if (c->cand[i].klass == KS_CLASS_MISS)
            miss_bytes += move_bytes(c, ks_blk_tier(ks_blocktab_get(&c->tab, c->cand[i].id)), KS_L1);
    uint64_t left = budget > miss_bytes ? budget - miss_bytes : 0;
    // warm-ups move at least one full batch a step, so a request that sits
    // out gets its blocks even when the misses take the whole budget
    uint32_t floor_blocks = c->p.warm_floor ? c->p.warm_floor : c->p.migration_batch;
    uint64_t warm_floor = (uint64_t)floor_blocks * c->tier[KS_L1].block_bytes;
    uint64_t warm_left = left > warm_floor ? left : warm_floor;
    if (grow_adm(c, c->n_cand) != KS_OK)
        return KS_ENOMEM;
    uint32_t n_in = 0, keep = 0;
    int closed = 0;
    for (uint32_t i = 0; i < c->n_cand; i++) {
        struct ks_cand cd = c->cand[i];
        struct ks_block *b = ks_blocktab_get(&c->tab, cd.id);
        unsigned t = ks_blk_tier(b);
        if (cd.klass != KS_CLASS_MISS) {
            uint64_t need = move_bytes(c, t, KS_L1);
            if (closed || pf_bytes + need > (cd.klass == KS_CLASS_WARM ? warm_left : left)) {
                closed = 1;
                c->st.pf_dropped += cd.klass != KS_CLASS_WARM;
                continue;
            }
            pf_bytes += need;
        }
        if (ks_blk_state(b) != KS_BLK_RESIDENT) { // migrating down: try again later
            c->cand[keep++] = cd; // keep <= i: nothing unread is overwritten
            continue;
        }
        ks_blk_set_state(b, KS_BLK_MIG_UP); // so that no victim search picks it
        c->adm[n_in] = cd;
        c->adm_id[n_in] = cd.id;
        c->adm_src[n_in] = (uint8_t)t;
        c->adm_klass[n_in] = cd.klass;
        n_in++;
    }

    // 3. pages for the admitted blocks, victims and their demotions
    int err = KS_OK;
    uint32_t got = c->p.buffer_blocks ? ks_buffer_room(c, n_in, &err)
                                      : make_room(c, KS_L1, c->adm_id, c->adm_src, 0, c->adm_klass, n_in, 0, &err);
    for (uint32_t i = got; i < n_in; i++) { // no page this time: stays pending
        ks_blk_set_state(ks_blocktab_get(&c->tab, c->adm_id[i]), KS_BLK_RESIDENT);
        c->cand[keep++] = c->adm[i];
    }
    for (uint32_t i = 0; i < got; i++) {
        if (c->adm_klass[i] == KS_CLASS_WARM) {
            c->st.warmed++;
        } else if (c->adm_klass[i] != KS_CLASS_MISS) {
            c->st.pf_issued++;
            ks_blk_set_prefetched(ks_blocktab_get(&c->tab, c->adm_id[i]), 1);
        }
    }
    if (err == KS_OK)
        err = mark_early(c, got);
    // 3b. keep L1's reserve free for blocks the caller will create (new KV)
    if (err == KS_OK)
        keep_reserve(c, &err);

    // every record's block is now in flight
    for (uint32_t r = 0; r < c->n_rec; r++) {
        if (r + KS_AHEAD < c->n_rec)
            __builtin_prefetch(ks_blocktab_slot(&c->tab, c->rec[r + KS_AHEAD].id), 1);
        struct ks_block *b = ks_blocktab_get(&c->tab, c->rec[r].id);
        ks_blk_set_state(b, c->rec[r].dst < c->rec[r].src ? KS_BLK_MIG_UP : KS_BLK_MIG_DOWN);
    }
    c->n_cand = keep;
    int st = ks_cache_cand_rebuild(c);
    if (err != KS_OK || st != KS_OK)
        return KS_ENOMEM;

    // 4. batches, one layer group's blocks each
    if (order_records(c) != KS_OK)
        return KS_ENOMEM;
    uint8_t max_depth = 0;
    for (uint32_t r = 0; r < c->n_rec; r++)
        if (c->rec[r].depth > max_depth)
            max_depth = c->rec[r].depth;
    st = assemble(c, plan, max_depth);
    plan->batch = c->plan_out;
    if (st == KS_OK && c->p.count_per_req)
        st = count_per_req(c, plan);
    debug_check(c, "ks_cache_plan");
    return st == KS_OK ? c->def_status : st; // a deferred selection's settling failed (defer.c)
}

// The batch record around a batch the caller holds, if it is live.
static struct ks_batch_rec *rec_of(struct ks_cache *c, const struct ks_batch *b, uint32_t *slot)
{
    if (!b)
        return NULL;
    const struct ks_batch_rec *br = (const struct ks_batch_rec *)((const char *)b - offsetof(struct ks_batch_rec, b));
    // find it among our slots before trusting the pointer
    uint32_t at = addr_rank(c, br);
    if (at == c->n_slot || c->slot_by_addr[at] != br || !br->live)
        return NULL;
    *slot = br->slot;
    return c->slot[br->slot];
}

static int after_pending(const struct ks_cache *c, const struct ks_batch_rec *br)
{
    if (br->after_slot == KS_NONE)
        return 0;
    const struct ks_batch_rec *a = c->slot[br->after_slot];
    return a->live && a->b.id == br->b.after;
}

static void retire(struct ks_cache *c, struct ks_batch_rec *br, uint32_t slot)
{
    br->live = 0;
    c->free_slot[c->n_free_slot++] = slot;
    c->n_live_batches--;
}

int ks_cache_confirm(struct ks_cache *c, struct ks_batch *b)
{
    uint32_t slot;
    struct ks_batch_rec *br = rec_of(c, b, &slot);
    if (!br)
        return KS_EINVAL;
    if (after_pending(c, br))
        return KS_ESTATE;
    unsigned src = b->src, dst = b->dst;
    uint64_t per = move_bytes(c, src, dst);
    // what block k's move reads and writes: its entry and both its pages'
    // owners, fetched KS_AHEAD blocks before its turn, the first KS_AHEAD
    // all at once before it (most batches are shorter than KS_AHEAD)
#define CONFIRM_FETCH(k)                                                                                        \
    do {                                                                                                        \
        __builtin_prefetch(ks_blocktab_slot(&c->tab, b->blocks[k]), 1);                                          \
        __builtin_prefetch(&c->tier[src].owner[b->src_pages[k]], 1);                                            \
        __builtin_prefetch(&c->tier[dst].owner[b->dst_pages[k]]);                                               \
    } while (0)
    for (uint32_t k = 0; k < b->n && k < KS_AHEAD; k++)
        CONFIRM_FETCH(k);
    for (uint32_t i = 0; i < b->n; i++) {
        if (i + KS_AHEAD < b->n)
            CONFIRM_FETCH(i + KS_AHEAD);
        uint32_t id = b->blocks[i];
        struct ks_block *blk = ks_blocktab_get(&c->tab, id);
        KS_ASSERT(ks_blk_state(blk) == KS_BLK_MIG_UP || ks_blk_state(blk) == KS_BLK_MIG_DOWN);
        KS_ASSERT(ks_blk_tier(blk) == src && ks_blk_page(blk) == b->src_pages[i]);
        if (br->handoff[i] != KS_NONE)
            c->tier[src].owner[b->src_pages[i]] = br->handoff[i]; // the page changes owner
        else
            ks_cache_page_free(c, src, b->src_pages[i]);
        KS_ASSERT(c->tier[dst].owner[b->dst_pages[i]] == id);
        if (src == KS_L1)
            ks_agg_left_l1(c, id);
        ks_blk_set_loc(blk, b->dst_pages[i], dst, KS_BLK_RESIDENT);
        ks_blk_bump_gen(blk);
        ks_evict_note(c, id);
        if (dst < src) {
            ks_agg_settle_block(c, id); // its recency is overwritten: its pending accesses first
            blk->last = c->now; // arrival in a faster tier counts as a use for recency
            ks_l1_last_note(c, blk);
        } else if (ks_blk_prefetched(blk)) {
            c->st.pf_wasted++;
            ks_blk_set_prefetched(blk, 0);
        }
        c->tier[src].st.mig_out++;
        c->tier[dst].st.mig_in++;
        c->st.migrations[src][dst]++;
        c->st.mig_bytes[src][dst] += per;
        if (ks_blk_refs(blk) == 0) // its last request went while it moved
            ks_cache_release_block(c, id);
    }
#undef CONFIRM_FETCH
    c->st.batches++;
    retire(c, br, slot);
    debug_check(c, "ks_cache_confirm");
    return KS_OK;
}

int ks_cache_abort(struct ks_cache *c, struct ks_batch *b)
{
    uint32_t slot;
    struct ks_batch_rec *br = rec_of(c, b, &slot);
    if (!br)
        return KS_EINVAL;
    for (uint32_t s = 0; s < c->n_slot; s++) // dependents go first
        if (c->slot[s]->live && c->slot[s]->after_slot == slot && c->slot[s]->b.after == b->id)
            return KS_ESTATE;
    int pending = after_pending(c, br);
    struct ks_batch_rec *a = pending ? c->slot[br->after_slot] : NULL;
    for (uint32_t i = 0; i < b->n; i++) {
        uint32_t id = b->blocks[i];
        struct ks_block *blk = ks_blocktab_get(&c->tab, id);
        if (pending) { // the victim keeps its page: cancel the handoff
            for (uint32_t k = 0; k < a->b.n; k++)
                if (a->handoff[k] == id)
                    a->handoff[k] = KS_NONE;
        } else {
            ks_cache_page_free(c, b->dst, b->dst_pages[i]);
        }
        ks_blk_set_state(blk, KS_BLK_RESIDENT);
        ks_blk_set_prefetched(blk, 0);
        ks_evict_note(c, id); // back in the running: its heap entry may have been taken
        if (ks_blk_refs(blk) == 0)
            ks_cache_release_block(c, id);
    }
    c->st.aborted++;
    retire(c, br, slot);
    debug_check(c, "ks_cache_abort");
    return KS_OK;
}

void ks_cache_land(struct ks_cache *c)
{
    if (c->tally)
        ks_tally_land(c);
}

uint32_t ks_cache_inflight_batches(const struct ks_cache *c)
{
    return c->n_live_batches;
}
