// step.c - one GPU's iterations and decode steps (see step.h).
//
// The driver calls the cache manager and the sparse policy itself; it never
// blocks except inside an operation of its backend, and it keeps no state
// between steps that a backend could change behind its back: the lanes only
// mark their jobs landed, and batches are confirmed here, in plan order,
// once all have landed, so the mapping a step starts from never depends on
// the copies' timing.
#include "step.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arch.h"
#include "cost.h"
#include "grow.h"

// A selected block that was not in L1 when accessed (ks_cache_access).
struct ks_step_miss {
    uint32_t req, layer, block;
};

// A block of one of the step's batches, and where the batch takes it.
struct ks_step_moving {
    uint32_t id;
    unsigned dst;
};

// The reason for a failed call, unless an operation already wrote one.
static int failed(char *err, size_t len, const char *what, int st)
{
    if (!err[0])
        snprintf(err, len, "%s: %s", what, ks_status_str(st));
    return st == KS_OK ? KS_EINVAL : st;
}

static void hold(const struct ks_step *d, int on)
{
    if (d->p.ops.hold)
        d->p.ops.hold(d->p.ops.ctx, on);
}

static double now(const struct ks_step *d)
{
    return d->p.ops.now(d->p.ops.ctx);
}

static int settle_draws(void *ud, struct ks_cache *c, uint32_t req, uint32_t g, const struct ks_deferred *e,
                        uint32_t n);

int ks_step_init(struct ks_step *d, const struct ks_step_params *p)
{
    const struct ks_scenario *s = p->s;
    // step 1: blocks placed before the first step count as used at step 0
    *d = (struct ks_step){.p = *p, .step = 1, .last_sample = -INFINITY};
    if (!p->r->sample_every)
        p->r->sample_every = ks_run_horizon(s, &p->r->sample_grows) / KS_RUN_SAMPLES;
    ks_active_init(&d->act, &(struct ks_active_params){
        .s = s, .cache = p->cache, .sparse = p->sparse, .r = p->r, .gpu = p->gpu,
        .admit_blocks = p->z.admit_blocks, .groups = p->z.groups,
        .hooks = {.ctx = p->ops.ctx, .fill = p->ops.fill, .finished = p->ops.finished}});
    ks_rng_seed(&d->rng, s->seed * 1000003u + p->gpu);
    d->cap = (uint32_t)fmin((double)ks_step_blocks(s, s->model.max_context) + 1, 1u << 24);
    d->sel = malloc(d->cap * sizeof *d->sel);
    d->dist = malloc(d->cap * sizeof *d->dist);
    d->mass = malloc(d->cap * sizeof *d->mass);
    d->acc = malloc(d->cap * sizeof *d->acc);
    d->where = malloc(d->cap);
    d->outside = calloc(p->z.groups ? p->z.groups : 1, sizeof *d->outside);
    if (p->pool && ks_selection_ahead(p->sparse) &&
        !(d->ahead = ks_step_ahead_new(p->pool, p->z.groups, p->z.layer_scale, ks_selection_per_layer(p->sparse))))
        return KS_ENOMEM;
    if (p->follow && !p->sampled && ks_follow_out_init(&d->fo, p->z.groups ? p->z.groups : 1) != KS_OK)
        return KS_ENOMEM;
    // cache.accounting = "aggregate": the access model's draws of a request
    // all in L1 wait until the cache reads those blocks (settle_draws), where
    // nothing else watches a selection (the runtime's ops, the previous
    // layer's marks)
    d->defer = s->cache.accounting == KS_ACCOUNT_AGGREGATE && s->sparse.policy == KS_SPARSE_MODEL &&
               !p->ops.selected && !p->ops.hold && s->cache.layer_prefetch != KS_LAYER_PREFETCH_PREVIOUS;
    if (d->defer)
        ks_cache_set_settle(p->cache, settle_draws, d);
    return d->sel && d->dist && d->mass && d->acc && d->where && d->outside ? KS_OK : KS_ENOMEM;
}

void ks_step_fini(struct ks_step *d)
{
    ks_step_ahead_free(d->ahead); // its job done before the requests' selection state goes
    ks_active_fini(&d->act);
    free(d->sel);
    free(d->dist);
    free(d->mass);
    free(d->acc);
    free(d->where);
    free(d->outside);
    free(d->miss);
    free(d->moving);
    free(d->mark);
    free(d->pending);
    ks_follow_out_fini(&d->fo);
    memset(d, 0, sizeof *d);
}

int ks_step_push(struct ks_step *d, const struct ks_request_spec *spec, double prefilled)
{
    if (ks_grow((void **)&d->pending, &d->cap_pending, d->n_pending + 1, sizeof *d->pending) != KS_OK)
        return KS_ENOMEM;
    d->pending[d->n_pending++] = (struct ks_step_queued){.spec = *spec, .prefilled = prefilled};
    return KS_OK;
}

uint32_t ks_step_load(const struct ks_step *d)
{
    return d->act.n + d->act.n_out + d->n_pending;
}

uint32_t ks_step_decode_tokens(const struct ks_step *d)
{
    return ks_active_decoding_count(&d->act) * (1 + d->p.s->speculative.draft_tokens);
}

// What one GPU reads of the weights in an iteration of its rank's `tokens`
// tokens: the expert group's tokens decide which routed experts it reads.
static double weights_read(const struct ks_step *d, double tokens)
{
    const struct ks_step_ops *o = &d->p.ops;
    const struct ks_scenario_model *m = &d->p.s->model;
    return ks_arch_gpu_read_bytes(m, o->moe_tokens ? o->moe_tokens(o->ctx, tokens) : tokens * m->arch.moe_ranks);
}

// ---- admission ---------------------------------------------------------------

// Belady: the step at which each prompt block is first read, from the trace.
// Its first decode step is taken as the GPU's next step (a colocated prefill
// may delay it by a few iterations: an approximation that keeps the order of
// the request's own blocks exact).
static void first_uses(struct ks_step *d, struct ks_active *a)
{
    uint32_t nb = ks_cache_req_len(d->p.cache, a->req), steps = a->spec.output_tokens - 1;
    for (uint32_t g = 0; g < d->p.z.groups; g++) {
        uint32_t layer = ks_step_layer_of(d->p.z.layer_scale, g, a->spec.id);
        for (uint32_t b = 0; b < nb; b++) {
            uint32_t f;
            if (ks_selection_first_use(a->sr, layer, b, &f) == 0 && f != KS_SELECTION_NEVER && f < steps)
                ks_cache_set_next_use(d->p.cache, a->req, g, b, d->step + f);
        }
    }
}

// Admits the oldest queued request if the GPU can hold its share and
// scheduler.max_running_requests allows (later requests wait behind it);
// *admitted says whether it did. Its prompt's KV is placed now: in L1 when it
// is prefilled here, chunk by chunk (ks_active_prefill_chunk), in L2 (host
// DRAM) where a prefill pool sent it. Retracted requests (active.h) come
// before any queued one: they arrived first.
static int admit(struct ks_step *d, int *admitted, char *err, size_t len)
{
    *admitted = 0;
    uint32_t cap = d->p.s->scheduler.max_running_requests;
    if ((d->n_pending == 0 && d->act.n_out == 0) || (cap && d->act.n >= cap))
        return KS_OK;
    struct ks_active *a;
    if (d->act.n_out > 0) {
        hold(d, 1);
        int st = ks_active_resume(&d->act, &a, err, len);
        hold(d, 0);
        *admitted = a != NULL;
        return st;
    }
    const struct ks_step_queued *q = &d->pending[0];
    const struct ks_request_spec *sp = &q->spec;
    int pooled = q->prefilled >= 0; // prefilled by the pool: the first token exists
    hold(d, 1);
    int st = ks_active_admit(&d->act, sp, now(d), pooled ? KS_L2 : KS_L1, &a, err, len);
    hold(d, 0);
    if (st != KS_OK)
        return st;
    if (!a)
        return KS_OK;
    *admitted = 1;
    if (d->p.s->cache.evict == KS_EVICT_BELADY)
        first_uses(d, a);
    if (d->p.ops.admitted && (st = d->p.ops.admitted(d->p.ops.ctx, a, err, len)) != KS_OK)
        return failed(err, len, "admitting a request", st);
    if (pooled) {
        // the pool produced the first token; the next token's interval
        // counts from admission (the wait for room here shows in
        // /requests as admitted - first_token)
        a->generated = 1;
        ks_active_first_token(&d->act, a, q->prefilled);
        a->last_token = a->admitted;
        a->prefilled = sp->prompt_tokens;
        d->p.r->tokens++;
        d->act.tokens++;
        a->ctx++; // that token's K and V join the first decode step
        if ((st = ks_active_grow(&d->act, a, err, len)) != KS_OK)
            return st;
        if (a->generated >= sp->output_tokens)
            ks_active_finish(&d->act, d->act.n - 1);
    }
    memmove(d->pending, d->pending + 1, (d->n_pending - 1) * sizeof *d->pending);
    d->n_pending--;
    return KS_OK;
}

// Admits what the scheduler allows this iteration: the oldest queued request
// (serial), or queued requests in order while they fit (fused).
static int admit_some(struct ks_step *d, char *err, size_t len)
{
    int more = 1, st = KS_OK;
    while (st == KS_OK && more) {
        st = admit(d, &more, err, len);
        if (d->p.s->scheduler.kind == KS_SCHED_SERIAL)
            break;
    }
    return st;
}

// ---- reads outside L1 --------------------------------------------------------

// cache.layer_prefetch = "previous": marks d->acc[0 .. k) `ahead` where the
// request's previous group (l - 1) selected the same block in this step,
// then remembers this group's selection for the next. nb: the request's blocks.
static int mark_ahead(struct ks_step *d, uint32_t l, uint32_t nb, uint32_t k)
{
    uint32_t had = d->cap_mark;
    if (ks_grow((void **)&d->mark, &d->cap_mark, nb, sizeof *d->mark) != KS_OK)
        return KS_ENOMEM;
    if (d->cap_mark > had) // new entries mark nothing (stamps start at 1)
        memset(d->mark + had, 0, (size_t)(d->cap_mark - had) * sizeof *d->mark);
    if (l > 0)
        for (uint32_t j = 0; j < k; j++)
            d->acc[j].ahead = d->mark[d->acc[j].block] == d->stamp;
    if (++d->stamp == 0) { // wrapped: no mark may look current
        memset(d->mark, 0, (size_t)d->cap_mark * sizeof *d->mark);
        d->stamp = 1;
    }
    for (uint32_t j = 0; j < k; j++)
        d->mark[d->acc[j].block] = d->stamp;
    return KS_OK;
}

// Notes the accesses of acc[0..n) that missed L1 (where[], from
// ks_cache_access). KS_OK or KS_ENOMEM.
static int note_misses(struct ks_step *d, uint32_t req, uint32_t layer, uint32_t n)
{
    if (ks_grow((void **)&d->miss, &d->cap_miss, d->n_miss + n, sizeof *d->miss) != KS_OK) // room for all
        return KS_ENOMEM;
    // NOTE: every access written, the count moved past the misses: no
    // branch on where the block was (a fifth of them miss, in no order)
    uint32_t m = d->n_miss;
    for (uint32_t j = 0; j < n; j++) {
        d->miss[m] = (struct ks_step_miss){.req = req, .layer = layer, .block = d->acc[j].block};
        m += d->where[j] != KS_AT_L1;
    }
    d->n_miss = m;
    return KS_OK;
}

// Where the probe for block id starts in the step's table of moving blocks
// (2^bits slots): a multiplicative hash's top bits.
static uint32_t moving_slot_start(unsigned bits, uint32_t id)
{
    return (id * UINT32_C(0x9e3779b1)) >> (32 - bits);
}

// The slot of block id in that table: where it is, or the empty slot where
// it would go (linear probing).
static uint32_t moving_slot(const struct ks_step_moving *t, unsigned bits, uint32_t id)
{
    uint32_t mask = (UINT32_C(1) << bits) - 1, h = moving_slot_start(bits, id);
    while (t[h].id != id && t[h].id != KS_NONE)
        h = (h + 1) & mask;
    return h;
}

// Where the plan's batches take block id into *dst (KS_TIERS: in none of
// them); KS_OK, or KS_ENOMEM when the table cannot grow. The table of their
// blocks, at most half full, is built on the first call of a step; should a
// block be in two batches, the later one's destination is kept.
// NOTE: a hash, not a sorted array: the misses arrive in no order of id, so
// a binary search's probes were a chain of dependent loads, after a sort of
// every moving block (radix passes); one 32K request of
// hisparse_missrate.lua, 256 steps: 9.50 -> 9.00 wall s (speed.sh's hs_one,
// median of 5, 2026-12-05), its datasets identical.
static int moving_to(struct ks_step *d, const struct ks_plan *plan, uint32_t id, unsigned *dst)
{
    if (!d->moving_built) {
        uint32_t n = 0;
        for (uint32_t i = 0; i < plan->n; i++)
            n += plan->batch[i]->n;
        unsigned bits = 6;
        while ((UINT32_C(1) << bits) < 2 * (uint64_t)n)
            bits++;
        uint32_t slots = UINT32_C(1) << bits;
        if (slots > d->cap_moving) {
            struct ks_step_moving *p = realloc(d->moving, (size_t)slots * sizeof *p);
            if (!p)
                return KS_ENOMEM;
            d->moving = p;
            d->cap_moving = slots;
        }
        memset(d->moving, 0xff, (size_t)slots * sizeof *d->moving); // every slot's id KS_NONE: empty
        d->moving_bits = bits;
        for (uint32_t i = 0; i < plan->n; i++) {
            const struct ks_batch *b = plan->batch[i];
            for (uint32_t j = 0; j < b->n; j++) {
                uint32_t h = moving_slot(d->moving, bits, b->blocks[j]);
                d->moving[h] = (struct ks_step_moving){.id = b->blocks[j], .dst = b->dst};
            }
        }
        d->moving_built = 1;
    }
    const struct ks_step_moving *e = &d->moving[moving_slot(d->moving, d->moving_bits, id)];
    *dst = e->id == id ? e->dst : KS_TIERS;
    return KS_OK;
}

// Counts, per layer and tier, the selected blocks the kernel must read
// outside L1 this step: the misses whose promotion found no room (still in
// L2 or L3 once the step's batches are planned), and blocks that a batch
// takes elsewhere than L1, read where it lands. The runtime reads each into
// a scratch page before its layer's kernel; the simulator charges the copy.
// KS_OK or KS_ENOMEM.
static int count_outside(struct ks_step *d, const struct ks_plan *plan)
{
    struct ks_cache *c = d->p.cache;
    memset(d->outside, 0, d->p.z.groups * sizeof *d->outside);
    d->moving_built = 0;
    // misses located ahead of their turn, so that the memory misses overlap:
    // the entry 2 x AHEAD misses ahead, the moving table's slot of a block in
    // flight (once the table is built) AHEAD ahead, when its entry is in
    enum { AHEAD = 16 };
    for (uint32_t i = 0; i < d->n_miss; i++) {
        if (i + 2 * AHEAD < d->n_miss) {
            const struct ks_step_miss *y = &d->miss[i + 2 * AHEAD];
            ks_cache_locate_ahead(c, y->req, y->layer, y->block);
        }
        struct ks_loc ahead;
        if (d->moving_built && i + AHEAD < d->n_miss &&
            ks_cache_locate(c, d->miss[i + AHEAD].req, d->miss[i + AHEAD].layer, d->miss[i + AHEAD].block,
                            &ahead) == KS_OK &&
            ahead.state != KS_BLK_RESIDENT)
            __builtin_prefetch(&d->moving[moving_slot_start(d->moving_bits, ahead.id)]);
        const struct ks_step_miss *x = &d->miss[i];
        struct ks_loc loc;
        if (ks_cache_locate(c, x->req, x->layer, x->block, &loc) != KS_OK)
            continue;
        unsigned tier = loc.tier;
        if (loc.state != KS_BLK_RESIDENT) {
            unsigned dst;
            if (moving_to(d, plan, loc.id, &dst) != KS_OK) {
                d->n_miss = 0;
                return KS_ENOMEM;
            }
            if (dst < KS_TIERS)
                tier = dst;
        }
        if (tier != KS_L1)
            d->outside[x->layer][tier]++;
    }
    d->n_miss = 0;
    return KS_OK;
}

// Bytes one GPU writes for the iteration's prefill chunks: their KV and
// index keys or page summaries, every layer.
static double prefill_write(const struct ks_step *d)
{
    const struct ks_scenario_model *m = &d->p.s->model;
    return (double)d->prefill_tokens * ((double)m->arch.gpu_kv_token_bytes + ks_arch_scan_bytes(&m->arch)) * m->layers;
}

// Device buffers: the host holds every block, so the KV of `tokens` tokens
// (every layer) an iteration writes is copied there as it is written, beside
// the batches (ops.backup). A status, KS_OK when there is nothing to copy.
static int backup_kv(struct ks_step *d, uint32_t tokens, char *err, size_t len)
{
    const struct ks_step_ops *o = &d->p.ops;
    if (d->p.s->cache.organisation != KS_ORG_PER_REQUEST || !o->backup || tokens == 0)
        return KS_OK;
    double bytes = (double)tokens * (double)d->p.z.token_bytes;
    d->p.r->backup_bytes += bytes;
    return o->backup(o->ctx, (uint64_t)tokens * d->p.s->model.layers, bytes, err, len);
}

// ---- the decode step -----------------------------------------------------------

// Whether L1's mapping (its placements and removals) changed since the
// version in *version, which it updates: a step that begins so rebuilds the
// resident-block pointer table (the simulator charges table_rebuild; the
// runtime mends its table entry by entry and counts it the same way).
static int l1_changed(const struct ks_cache *c, uint64_t *version)
{
    struct ks_tier_view v;
    ks_cache_tier_view(c, KS_L1, &v);
    uint64_t now = v.allocs + v.frees + v.mig_in + v.mig_out;
    int changed = now != *version;
    *version = now;
    return changed;
}

// Request a's selection at its decode step `step` for group g (the model's
// `layer`) over nb blocks: *k blocks at *sel, their masses at *mass, where a
// worker drew them ahead (ahead.h: valid until draw_ahead clears them) or
// drawn now into d->sel and d->mass.
static int select_blocks(struct ks_step *d, struct ks_active *a, uint32_t step, uint32_t g, uint32_t layer,
                         uint32_t nb, const uint32_t **sel, const float **mass, uint32_t *k, char *err, size_t len)
{
    int got = d->ahead ? ks_step_ahead_take(d->ahead, a->spec.id, step, g, nb, sel, mass, k, err, len) : 0;
    if (got < 0)
        return got;
    if (got > 0)
        return KS_OK;
    *sel = d->sel;
    *mass = d->mass;
    return ks_selection_get(a->sr, step, layer, nb, &d->rng, d->sel, d->mass, k, err, len);
}

// The cache's settle_fn (ks_cache_set_settle): request req's deferred
// selections of group g, drawn in order and applied each as in its step.
// The step's buffers are free whenever the cache settles (it does so from
// access_all before a draw, from the plan, a retraction, a request's
// placement or the clock), so the draws use them.
static int settle_draws(void *ud, struct ks_cache *c, uint32_t req, uint32_t g, const struct ks_deferred *e,
                        uint32_t n)
{
    struct ks_step *d = ud;
    struct ks_active *a = NULL;
    for (uint32_t i = 0; i < d->act.n && !a; i++)
        if (d->act.a[i].req == req)
            a = &d->act.a[i];
    if (!a)
        return KS_EINVAL;
    uint32_t layer = ks_step_layer_of(d->p.z.layer_scale, g, a->spec.id);
    char err[256];
    for (uint32_t i = 0; i < n; i++) {
        uint32_t k = 0;
        int st = ks_selection_get(a->sr, e[i].step, layer, e[i].arg, NULL, d->sel, d->mass, &k, err, sizeof err);
        for (uint32_t j = 0; st == KS_OK && j < k; j++)
            d->acc[j] = (struct ks_access){.block = d->sel[j], .mass = d->mass[j], .next = KS_NONE};
        if (st != KS_OK || (st = ks_cache_access_past(c, req, g, &e[i], d->acc, k)) != KS_OK)
            return st;
    }
    return KS_OK;
}

// Whether request a's next selections will likely be deferred (its steps
// deferred so far not settled, or its blocks all in L1): they are then not
// drawn ahead, which would draw a step before those deferred.
static int defers(struct ks_step *d, const struct ks_active *a)
{
    return d->defer && ks_cache_deferrable(d->p.cache, a->req);
}

// Request a's selection of group g (the model's `layer`) over nb blocks,
// deferred where the cache may account it unseen (ks_cache_access_deferred:
// its count known before the draw, the last block among them, every block
// in L1): then *done = 1, with the count in *k and the tokens it reads in
// *tokens (every block but the last is whole). Otherwise *done = 0, and the
// request's deferred selections are settled before the caller draws this
// one. KS_OK or a status.
static int defer_select(struct ks_step *d, struct ks_active *a, uint32_t g, uint32_t layer, uint32_t nb,
                        uint32_t *k, uint64_t *tokens, int *done)
{
    struct ks_cache *c = d->p.cache;
    uint32_t behind = ks_cache_deferred(c, a->req, g), bs = d->p.s->cache.block_size;
    *done = 0;
    if (ks_selection_count(a->sr, layer, behind, nb, k)) {
        int st = ks_cache_access_deferred(c, a->req, g, *k, nb, done, NULL);
        if (st != KS_OK)
            return st;
    }
    if (*done) {
        uint64_t end = (uint64_t)nb * bs;
        *tokens = (uint64_t)(*k - 1) * bs + (end <= a->ctx ? end : a->ctx) - (uint64_t)(nb - 1) * bs;
        return KS_OK;
    }
    return behind ? ks_cache_settle(c, a->req) : KS_OK;
}

// Marks every request that will decode in the next step (`listed`), and
// lists each for d->ahead's worker, when there is one, with the step and
// context it will then select for (`drawn`: not those whose selections will
// likely be deferred, which are not deferred then), and starts it.
// The emission that follows this step (ks_active_emit) decides both: a
// request that sat this step out asks again for the same step and context;
// one that produces its tokens (ks_active_kept: one, or several with
// speculative decoding) has that many more of context and, unless they were
// its last, selects for the position they bring it to.
static int draw_ahead(struct ks_step *d)
{
    struct ks_step_ahead *x = d->ahead;
    if (x)
        ks_step_ahead_clear(x);
    for (uint32_t i = 0; i < d->act.n; i++) {
        struct ks_active *a = &d->act.a[i];
        a->listed = a->drawn = 0;
        if (!ks_active_decodes(a))
            continue; // still in prefill: its first selection is drawn when it comes
        uint32_t step = a->generated - 1, ctx = a->ctx;
        if (!a->sitting) {
            uint32_t kept = ks_active_kept(&d->act, a);
            if (a->generated + kept >= a->spec.output_tokens)
                continue; // finishes with this step
            step += kept;
            ctx += kept;
        }
        a->listed = 1;
        if (defers(d, a))
            continue;
        a->drawn = 1; // with or without a worker, so that the same selections are deferred for any thread count
        if (x && ks_step_ahead_add(x, a->sr, a->spec.id, step, ks_step_blocks(d->p.s, ctx)) != KS_OK)
            return KS_ENOMEM;
    }
    if (x)
        ks_step_ahead_start(x);
    return KS_OK;
}

// Requests retracted (ks_active_make_room) after their next selection was
// listed: a worker drew it and nobody takes it. Without a worker (or not
// handed to it) the same draw is made and dropped, so that a selection
// stream (the access model's) stands where it would with one: results
// identical for any thread count. (The retraction settled the request's
// deferred selections: ks_active_make_room.)
static int drop_listed(struct ks_step *d, char *err, size_t len)
{
    struct ks_active_set *set = &d->act;
    int per_layer = ks_selection_per_layer(d->p.sparse), ahead = ks_selection_ahead(d->p.sparse);
    for (uint32_t i = 0; i < set->n_out; i++) {
        struct ks_active *a = &set->out[i];
        if (!a->listed)
            continue;
        a->listed = 0;
        if ((d->ahead && a->drawn) || !ahead)
            continue;
        uint32_t nb = ks_step_blocks(d->p.s, a->ctx), k = 0;
        int st = KS_OK;
        hold(d, 1);
        for (uint32_t g = 0; st == KS_OK && g < (per_layer ? d->p.z.groups : 1); g++) {
            uint32_t layer = per_layer ? ks_step_layer_of(d->p.z.layer_scale, g, a->spec.id) : 0;
            st = ks_selection_get(a->sr, a->generated - 1, layer, nb, NULL, d->sel, d->mass, &k, err, len);
        }
        hold(d, 0);
        if (st != KS_OK)
            return st;
    }
    return KS_OK;
}

// The HBM bytes of request a's index scan in every layer.
static double index_bytes(const struct ks_step *d, const struct ks_active *a)
{
    return (double)a->ctx * ks_arch_scan_bytes(&d->p.s->model.arch) * d->p.s->model.layers;
}

// Request a's index scan in every layer: its HBM bytes into *kv_hbm, its
// flops (for each query token) into *iflops where the indexer has a rate of
// its own (ks_cost_index_apart), else into *aflops.
static void index_scan(struct ks_step *d, const struct ks_active *a, double *kv_hbm, double *aflops, double *iflops)
{
    const struct ks_arch *arch = &d->p.s->model.arch;
    uint32_t layers = d->p.s->model.layers, verify = 1 + d->p.s->speculative.draft_tokens;
    *kv_hbm += index_bytes(d, a);
    *(ks_cost_index_apart(d->p.s) ? iflops : aflops) += (double)a->ctx * arch->index_pair_flops * layers * verify;
}

// The step's index scans into the run's total, request by request as they
// were summed when the step wrote them itself (the same additions in the
// same order: the total does not depend on where the step's work ran).
static void index_reads(struct ks_step *d)
{
    for (uint32_t i = 0; i < d->act.n; i++)
        if (ks_active_decodes(&d->act.a[i]))
            d->p.r->index_read_bytes += index_bytes(d, &d->act.a[i]);
}

// Request a's tokens of the step: their weights' flops, the tokens verified
// and kept.
static void step_tokens(struct ks_step *d, const struct ks_active *a, uint32_t *tokens_out, uint32_t *kept,
                        double *wflops)
{
    const struct ks_arch *arch = &d->p.s->model.arch;
    uint32_t verify = 1 + d->p.s->speculative.draft_tokens;
    *wflops += (arch->token_flops + arch->head_flops) * verify;
    *tokens_out += verify;
    *kept += ks_active_kept(&d->act, a);
}

// The requests whose selections the step may defer (defer_select): their
// cache and selection state fetched in stages, each request's stage made
// before any request's next, so that the misses of the step's first reads of
// them overlap (a GPU's requests are cold again by its next step when
// thousands of GPUs share the CPU's caches). Changes no result.
static void warm_deferred(const struct ks_step *d)
{
    if (!d->defer)
        return;
    for (int stage = 0; stage < 3; stage++)
        for (uint32_t i = 0; i < d->act.n; i++) {
            const struct ks_active *a = &d->act.a[i];
            if (!ks_active_decodes(a) || a->drawn)
                continue;
            ks_cache_warm_req(d->p.cache, a->req, stage);
            if (stage < 2)
                ks_selection_warm_counts(a->sr, stage);
        }
}

// Request a's coming accesses in group l + 1, drawn ahead: their entries
// fetched while group l's accesses run, and group l + 2's map of blocks
// (which the fetch reads) the group before (at l == 0 also group 1's), so
// that their misses overlap (ks_cache_warm_access). Changes no result.
static void warm_access(const struct ks_step *d, const struct ks_active *a, uint32_t l, uint32_t groups)
{
    struct ks_cache *c = d->p.cache;
    for (uint32_t g = l == 0 ? 1 : l + 2; g <= l + 2 && g < groups; g++)
        ks_cache_warm_access(c, a->req, g, NULL, 0, 0);
    const uint32_t *sel;
    uint32_t k;
    if (l + 1 < groups && ks_step_ahead_peek(d->ahead, a->spec.id, l + 1, &sel, &k))
        ks_cache_warm_access(c, a->req, l + 1, sel, k, 1);
}

// Selects, and reports the accesses of, every decoding request in every
// layer; sums what the step's attention costs (kv_bytes, and the modelled
// *kv_hbm bytes timed at HBM bandwidth and *attn seconds of measured kernel)
// and counts its *tokens (one per decoding request, 1 + draft_tokens with
// speculative decoding: each verifies that many, which share its selection:
// its KV is read once, its attention computed for each) and *kept, the tokens the
// step keeps (ks_active_kept). An indexer's keys (or page summaries) of
// every token of a request are scanned in every layer: HBM bytes read once,
// scores for each query.
//
// Cold regions (cache.cold_share > 0; the seed's section 5.5): a request
// whose selections miss L1 in more than that share of its blocks sits the
// step out. Its misses warm up at low priority (ks_cache_defer: after the
// others' misses, within the budget), it produces no token, and the step
// charges its index scan (its selection was computed) but not its attention
// nor its token's weights; it selects again next step.
//
// What the selections read is also summed in d->shape (detail.gpus: a
// sampled GPU publishes it). The run's result is not written (the step's
// cache work may run on a worker: ks_step_front): the requests sat out go
// to d->front.sat_out, the index scans' bytes are summed by index_reads.
static int access_all(struct ks_step *d, uint32_t now_step, double *kv_hbm, double *attn, uint32_t *tokens_out,
                      uint32_t *kept, double *wflops, double *aflops, double *iflops, char *err, size_t len)
{
    const struct ks_arch *arch = &d->p.s->model.arch;
    const struct ks_scenario *s = d->p.s;
    struct ks_cache *c = d->p.cache;
    const struct ks_kernel_time *kt = &s->platform.kernel_time;
    int belady = s->cache.evict == KS_EVICT_BELADY;
    int per_layer = ks_selection_per_layer(d->p.sparse);
    // dense attention reads every block with one mass: the cache may account it in aggregate
    int uniform = s->sparse.policy == KS_SPARSE_DENSE && s->cache.accounting == KS_ACCOUNT_AGGREGATE && !per_layer;
    // detail.layers (sizing.h): the cache's groups are the layers simulated,
    // each standing for `scale` of the model's; a per-layer selection is
    // made for the middle one of them and counts for all of them
    uint32_t layers = s->model.layers, groups = d->p.z.groups;
    double scale = d->p.z.layer_scale, per_sel = per_layer ? scale : layers; // layers one selection serves
    uint32_t verify = 1 + s->speculative.draft_tokens; // query tokens a request verifies a step
    int layer_ahead = per_layer && s->cache.layer_prefetch == KS_LAYER_PREFETCH_PREVIOUS;
    warm_deferred(d);
    for (uint32_t i = 0; i < d->act.n; i++) {
        struct ks_active *a = &d->act.a[i];
        if (!ks_active_decodes(a))
            continue; // still in prefill
        // its output position (its decode step, with one token a step)
        uint32_t nb = ks_step_blocks(d->p.s, a->ctx), step = a->generated - 1;
        uint32_t k = 0, miss_mark = d->n_miss;
        const uint32_t *sel = d->sel; // the selection, kept for every group when it is the same in each
        const float *mass = d->mass;
        uint64_t selected = 0, missed = 0;
        index_scan(d, a, kv_hbm, aflops, iflops);
        // the request's attention and token, added once it is known not to sit out
        double r_hbm = 0, r_attn = 0, r_kv = 0, r_flops = 0;
        for (uint32_t l = 0; l < groups; l++) {
            int done = 0;
            if (l == 0 || per_layer) {
                uint32_t layer = per_layer ? ks_step_layer_of(d->p.z.layer_scale, l, a->spec.id) : 0;
                uint64_t tokens = 0;
                int st = d->defer && !a->drawn ? defer_select(d, a, l, layer, nb, &k, &tokens, &done) : KS_OK;
                if (st != KS_OK)
                    return failed(err, len, "a decode step", st);
                if (!done) {
                    if (per_layer && !d->ahead) // drawn here: the next draws' state fetched while this layer runs
                        ks_step_warm_request(a->sr, a->spec.id, d->p.z.layer_scale, groups, l);
                    hold(d, 1);
                    st = select_blocks(d, a, step, l, layer, nb, &sel, &mass, &k, err, len);
                    if (st != KS_OK) {
                        hold(d, 0);
                        return st;
                    }
                    if (d->p.ops.selected)
                        d->p.ops.selected(d->p.ops.ctx, a, layer, sel, mass, k);
                    hold(d, 0);
                    if (belady) // the trace knows when each block is read again
                        ks_selection_next_uses(a->sr, d->dist);
                    // a block before the context's last is whole: only the
                    // last one (or one past it) counts its tokens apart
                    uint64_t bs = s->cache.block_size;
                    uint32_t last = nb ? nb - 1 : 0;
                    tokens += (uint64_t)k * bs;
                    for (uint32_t j = 0; j < k; j++) {
                        uint32_t next = KS_NONE;
                        if (belady && d->dist[j] != KS_SELECTION_NEVER &&
                            step + d->dist[j] < a->spec.output_tokens - 1)
                            next = now_step + d->dist[j];
                        d->acc[j] = (struct ks_access){.block = sel[j], .mass = mass[j], .next = next};
                        if (sel[j] >= last) {
                            uint64_t end = (uint64_t)(sel[j] + 1) * bs;
                            tokens += (end <= a->ctx ? end : a->ctx) - (uint64_t)sel[j] * bs - bs;
                        }
                    }
                }
                if (!done && layer_ahead && mark_ahead(d, l, nb, k) != KS_OK)
                    return failed(err, len, "a decode step", KS_ENOMEM);
                // KV bytes this selection reads: in every layer, or in the layers of this group
                double bytes = (double)tokens * (double)d->p.z.token_bytes;
                if (per_layer)
                    bytes = bytes / layers * scale;
                // a replayed trace's kernel time where the scenario asks for it (NAN: none)
                double rec = s->sparse.kernel_time == KS_KERNEL_TIME_TRACE ? ks_selection_kernel_time(a->sr) : NAN;
                r_kv += bytes;
                r_flops += (double)tokens * arch->decode_pair_flops * per_sel;
                if (rec >= 0)
                    r_attn += rec * per_sel;
                else if (kt->n)
                    r_attn += ks_cost_kernel(kt, now_step - 1, k) * per_sel;
                else
                    r_hbm += bytes;
            }
            if (d->ahead && per_layer && !done)
                warm_access(d, a, l, groups);
            int st = KS_OK;
            struct ks_access_report rep = {0};
            if (!done && uniform && k == nb && k > 0)
                st = ks_cache_access_uniform(c, a->req, l, mass[0], &done, NULL);
            if (st == KS_OK && !done)
                st = ks_cache_access(c, a->req, l, d->acc, k, d->where, &rep);
            if (st == KS_OK && !done && rep.misses > 0) // most accesses of a loaded GPU find L1
                st = note_misses(d, a->req, l, k);
            if (st != KS_OK)
                return failed(err, len, "a decode step", st);
            selected += k;
        }
        missed = d->n_miss - miss_mark;
        if (s->cache.cold_share > 0 && (double)missed > s->cache.cold_share * (double)selected) {
            a->sitting = 1;
            a->sat_out++;
            d->front.sat_out++;
            ks_cache_defer(c, a->req);
            d->n_miss = miss_mark; // nothing of it is read this step
            continue;
        }
        d->kv_bytes += r_kv;
        d->shape.n_dec++;
        d->shape.hbm += r_hbm;
        d->shape.attn += r_attn;
        d->shape.flops += r_flops;
        *kv_hbm += r_hbm;
        *attn += r_attn;
        *aflops += r_flops * verify;
        step_tokens(d, a, tokens_out, kept, wflops);
    }
    return KS_OK;
}

// detail.gpus, a follower's step (follow.h): every decoding request scans
// its index and makes its tokens as in access_all; what the selections read
// is the shape's, `scale` times.
static void follow_access(struct ks_step *d, const struct ks_follow_shape *sh, double scale, double *kv_hbm,
                          double *attn, uint32_t *tokens_out, uint32_t *kept, double *wflops, double *aflops,
                          double *iflops)
{
    for (uint32_t i = 0; i < d->act.n; i++) {
        struct ks_active *a = &d->act.a[i];
        if (!ks_active_decodes(a))
            continue; // still in prefill
        index_scan(d, a, kv_hbm, aflops, iflops);
        step_tokens(d, a, tokens_out, kept, wflops);
    }
    d->kv_bytes = sh->kv * scale;
    *kv_hbm += sh->hbm * scale;
    *attn += sh->attn * scale;
    *aflops += sh->flops * scale * (1 + d->p.s->speculative.draft_tokens);
}

// The decoding requests, the young ones of them and their age (follow.h).
static void count_decoding(const struct ks_step *d, uint32_t *n_dec, uint32_t *n_young, uint32_t *age)
{
    uint64_t generated = 0;
    *n_dec = *n_young = 0;
    for (uint32_t i = 0; i < d->act.n; i++) {
        const struct ks_active *a = &d->act.a[i];
        if (ks_active_decodes(a)) {
            (*n_dec)++;
            *n_young += a->generated <= KS_FOLLOW_YOUNG;
            generated += a->generated;
        }
    }
    uint64_t mean = *n_dec ? generated / *n_dec : 0;
    *age = ks_follow_age(mean);
}

// detail.gpus, a sampled GPU: its step's shape (d->shape, the plan's jobs,
// the reads outside L1) into the model. KS_OK or KS_ENOMEM.
static int publish(struct ks_step *d, const struct ks_plan *plan)
{
    if (d->shape.n_dec == 0)
        return KS_OK;
    uint32_t decoding; // d->shape.n_dec: those that did not sit out
    count_decoding(d, &decoding, &d->shape.n_young, &d->shape.age);
    struct ks_follow_out *o = &d->fo;
    if (plan->n > o->cap) {
        struct ks_step_job *j = realloc(o->job, plan->n * sizeof *j);
        if (!j)
            return KS_ENOMEM;
        o->job = j;
        o->cap = plan->n;
    }
    for (uint32_t i = 0; i < plan->n; i++)
        o->job[i] = ks_step_job_of(plan->batch[i]);
    d->shape.kv = d->kv_bytes;
    return ks_follow_publish(d->p.follow, &d->shape, o->job, plan->n, (const uint32_t (*)[KS_TIERS])d->outside);
}

// The run's stall and this step's grow by the time since t0.
static void stalled(struct ks_step *d, double t0, double *stall)
{
    double w = now(d) - t0;
    d->p.r->stall += w;
    *stall += w;
}

// Waits for the layers' needed batches and runs them, as few waits as the
// landings allow; *stall grows by the waits, *extra by what the layers spent
// besides their own compute.
static int run_layers(struct ks_step *d, double *stall, double *extra, char *err, size_t len)
{
    const struct ks_step_ops *o = &d->p.ops;
    uint32_t layers = d->p.s->model.layers, done = 0; // the model's (a simulated layer's copies are split: job.h)
    while (done < layers) {
        double t0 = now(d);
        uint32_t ready = 1;
        int st = o->wait_layer(o->ctx, done, &ready, err, len);
        stalled(d, t0, stall);
        if (st != KS_OK)
            return failed(err, len, "waiting for a layer's blocks", st);
        if (ready < 1 || ready > layers - done)
            ready = 1;
        double x = 0;
        if ((st = o->layers(o->ctx, done, ready, &x, err, len)) != KS_OK)
            return failed(err, len, "a layer's attention", st);
        d->p.r->busy += x;
        *extra += x;
        done += ready;
    }
    return KS_OK;
}

static int decode(struct ks_step *d, char *err, size_t len);

// The step, with the next one's selections drawn ahead meanwhile where a
// pool draws them: the worker hands the requests' selection state back
// before the step returns (its tokens are emitted next, which may close
// requests).
int ks_step_decode(struct ks_step *d, char *err, size_t len)
{
    int st = decode(d, err, len);
    if (d->ahead)
        ks_step_ahead_wait(d->ahead);
    return st;
}

// A follower's shape for this step, or NULL: it steps in full. *scale: its
// decoding requests over the shape's; *waited: the seconds it waited for the
// sampled steps under way (in time, before the model is ready: follow.h).
static const struct ks_follow_shape *follow_pick(struct ks_step *d, uint32_t now_step, double *scale, double *waited)
{
    const struct ks_step_ops *o = &d->p.ops;
    const struct ks_follow *f = d->p.follow;
    int ready = ks_follow_ready(f);
    if (!ready && d->p.s->detail.follow == KS_FOLLOW_TIME && o->await_sampled) {
        double t0 = now(d);
        o->await_sampled(o->ctx);
        *waited = now(d) - t0;
        ready = f->published > 0;
    }
    if (!ready)
        return NULL;
    uint32_t n_dec, n_young, age;
    count_decoding(d, &n_dec, &n_young, &age);
    const struct ks_follow_shape *sh =
        ks_follow_pick(f, n_dec, n_young, age, ks_rng_mix((uint64_t)d->p.gpu << 32 ^ now_step));
    if (sh)
        *scale = (double)n_dec / sh->n_dec;
    return sh;
}

// The decode step's cache work up to its plan, once the cache's clock has
// moved (ks_cache_step): every selection and access (or, for a follower, a
// sampled step's shape sh, `scale` times), the next step's selections
// listed, L1's reserve, the plan and the reads outside L1. It takes no
// simulated time, calls no operation but hold and selected (which the
// simulator does not set), and writes only this GPU's state (its cache
// manager, its requests and their streams, the driver's buffers) and
// d->front, not the run's result. KS_OK, or a status with the reason in err.
static int prepare(struct ks_step *d, const struct ks_follow_shape *sh, double scale, char *err, size_t len)
{
    const struct ks_scenario *s = d->p.s;
    struct ks_cache *c = d->p.cache;
    struct ks_step_front *x = &d->front;
    int st;
    if (sh)
        follow_access(d, sh, scale, &x->kv_hbm, &x->attn, &x->tokens, &x->kept, &x->wflops, &x->aflops, &x->iflops);
    else if ((st = access_all(d, x->now_step, &x->kv_hbm, &x->attn, &x->tokens, &x->kept, &x->wflops, &x->aflops,
                              &x->iflops, err, len)) != KS_OK)
        return st;
    if (!sh && draw_ahead(d) != KS_OK)
        return failed(err, len, "listing the next step's selections", KS_ENOMEM);
    // room in L1 for the blocks this step's tokens may open (one per request and layer)
    ks_cache_set_reserve(c, ks_step_reserve(s, &d->p.z, d->act.n));
    // a follower's cache plans only the evictions that keep L1's reserve
    // (it saw no access): they are confirmed without a copy, the shape's
    // batches carrying the step's traffic
    st = ks_cache_plan(c, sh ? 0 : ks_step_budget(s, &d->p.z, d->kv_bytes), &x->plan);
    if (st == KS_OK && d->p.lua && d->p.lua->failed) {
        snprintf(err, len, "cache.%s (Lua): %s: %s", d->p.lua->failed, d->p.lua->err, ks_status_str(KS_EINVAL));
        return KS_EINVAL;
    }
    if (st != KS_OK)
        return failed(err, len, "a decode step", st);
    if (!sh && (st = count_outside(d, &x->plan)) != KS_OK)
        return failed(err, len, "counting the reads outside L1", st);
    return KS_OK;
}

// The step's cache work as a pool job (ops.yield): the cache's clock, then
// prepare; its status and reason go to d->front.
static void front_job(void *arg)
{
    struct ks_step *d = arg;
    struct ks_step_front *x = &d->front;
    x->st = ks_cache_step(d->p.cache, x->now_step);
    if (x->st != KS_OK)
        x->st = failed(x->err, sizeof x->err, "a decode step", x->st);
    else
        x->st = prepare(d, NULL, 1, x->err, sizeof x->err);
}

// Whether the step hands its cache work to the pool (ops.yield): not with
// detail.gpus (a follower's shape waits in simulated time), nor with Lua
// policies (one interpreter for every GPU) or the hooks prepare may call.
static int hands_off(const struct ks_step *d)
{
    const struct ks_step_ops *o = &d->p.ops;
    const struct ks_luapolicy *lua = d->p.lua;
    return d->p.pool && o->yield && !o->hold && !o->selected && !d->p.follow &&
           !(lua && (lua->evict || lua->prefetch));
}

static int decode(struct ks_step *d, char *err, size_t len)
{
    const struct ks_scenario *s = d->p.s;
    const struct ks_step_ops *o = &d->p.ops;
    struct ks_cache *c = d->p.cache;
    struct ks_run_result *r = d->p.r;
    struct ks_step_front *x = &d->front;
    uint32_t now_step = d->step++;
    d->kv_bytes = 0;
    d->n_miss = 0;
    d->shape = (struct ks_follow_shape){0};
    *x = (struct ks_step_front){.job = {.fn = front_job, .arg = d}, .now_step = now_step};
    double scale = 1, waited = 0;
    int in_time = s->detail.follow == KS_FOLLOW_TIME, st;
    struct ks_follow *f = d->p.follow;
    const struct ks_follow_shape *sh = NULL;
    if (hands_off(d)) {
        // the other ranks of this instant hand theirs before this one waits
        ks_pool_submit(d->p.pool, &x->job);
        o->yield(o->ctx);
        ks_pool_wait(d->p.pool, &x->job);
        if (x->st != KS_OK) {
            snprintf(err, len, "%s", x->err);
            return x->st;
        }
    } else {
        if ((st = ks_cache_step(c, now_step)) != KS_OK)
            return failed(err, len, "a decode step", st);
        // detail.gpus: a follower takes a sampled GPU's step (follow.h), once they are published
        if (f && d->p.sampled && in_time)
            f->begun++;
        if (f && !d->p.sampled)
            sh = follow_pick(d, now_step, &scale, &waited);
        if (sh)
            r->steps_followed++;
        else if (f && !d->p.sampled && in_time) // its cache is a tally (sim/cache/tally.c): no step in full
            return failed(err, len, "detail.follow = \"time\": a follower found no sampled decode step to follow (the "
                                    "first detail.gpus GPUs ended none before the run's end)", KS_ESTATE);
        if ((st = prepare(d, sh, scale, err, len)) != KS_OK)
            return st;
    }
    // detail.follow = "time": a follower takes the shape's waits, without its
    // batches (nor its reads outside L1: no layer of its reads d->outside);
    // a sampled GPU publishes its step once the waits are known (follow.h)
    int timed = sh && in_time;
    struct ks_plan plan = x->plan;
    double kv_hbm = x->kv_hbm, attn = x->attn, wflops = x->wflops, aflops = x->aflops, iflops = x->iflops;
    index_reads(d);
    r->sat_out += x->sat_out;
    r->decode_flops += wflops + aflops + iflops;
    // a fused iteration's prefill chunks (set by ks_step_run) join the step's work
    uint32_t n_tok = x->tokens + d->prefill_tokens;
    double weights = weights_read(d, n_tok); // one GPU's, as each of its rank's
    r->weight_read_bytes += weights * s->model.arch.attn_tp;
    d->comm_tokens = n_tok;
    double step_start = now(d) - waited, stall = 0, extra = 0;
    if (!sh && waited > 0) { // waited, and no sampled step was published: in full after all
        stall = waited;
        r->stall += waited;
    }
    if (s->scheduler.kind == KS_SCHED_FUSED) {
        double compute = ks_cost_compute(s, wflops, aflops, iflops) + d->prefill_compute;
        double roof = ks_cost_roofline(s, weights + kv_hbm + prefill_write(d), attn, compute);
        double it = roof + ks_cost_pass_overhead(s);
        d->layer_time = it / s->model.layers;
        if (compute >= roof) // compute, not memory, set its time
            r->compute_bound_time += it;
    } else {
        d->layer_time = ks_cost_layer(s, weights, kv_hbm, attn);
    }
    if (sh && !timed && (st = ks_follow_jobs(&d->fo, sh, scale)) != KS_OK)
        return failed(err, len, "a followed step's batches", st);
    st = timed ? KS_OK : sh ? o->queue_jobs(o->ctx, d->fo.job, d->fo.n, err, len) : o->queue(o->ctx, &plan, err, len);
    if (st != KS_OK)
        return failed(err, len, "queueing a migration batch", st);
    // the KV the iteration keeps: the decode tokens kept (speculative: not the rejected drafts) and the prompts'
    if ((st = backup_kv(d, x->kept + d->prefill_tokens, err, len)) != KS_OK)
        return failed(err, len, "backing up new KV", st);
    if (sh && !timed)
        ks_follow_outside(&d->fo, sh, scale, d->p.z.groups, d->outside);
    // host work while the copies run: scheduling the batch, and rebuilding
    // the resident-block pointer table when L1's mapping changed
    int rebuild = l1_changed(c, &d->l1_version) || (sh && sh->promotes);
    if (rebuild)
        r->table_rebuilds++;
    if (d->p.follow && d->p.sampled && !in_time && (st = publish(d, &plan)) != KS_OK)
        return failed(err, len, "publishing a sampled step", st);
    double host = 0;
    if (o->compute) {
        host = s->platform.sched_overhead;
        if (rebuild)
            host += s->platform.table_rebuild;
        if (host > 0 && !timed)
            o->compute(o->ctx, host);
        r->host_time += host;
    }
    // speculative decoding: the draft model proposes the next step's tokens,
    // draft_tokens passes of its draft_layers layers, each as long as one of
    // the model's layers in this step
    double draft = (double)s->speculative.draft_tokens * s->speculative.draft_layers * d->layer_time;
    if (timed) { // one wait: the host's work, the layers' compute and the shape's waits, scaled
        stall = sh->stall * scale;
        extra = sh->extra * scale;
        double work = host + stall + extra + d->layer_time * s->model.layers + draft;
        if (waited > work) // the wait for the shape outlasted the step: the rest is stall
            stall += waited - work;
        r->stall += stall;
        r->busy += extra;
        if (work > waited)
            o->compute(o->ctx, work - waited);
    } else {
        // layer by layer: a layer waits only for the batches carrying its own
        // missed blocks (or an earlier layer's); copies for later layers overlap
        // the compute of earlier ones
        st = run_layers(d, &stall, &extra, err, len);
        if (st == KS_OK && o->compute && draft > 0)
            o->compute(o->ctx, draft);
    }
    if (st == KS_OK && o->compute)
        r->draft_time += draft;
    // the step ends when all its batches have landed (prefetches and
    // demotions included, waited for as stall); they are confirmed then, in
    // plan order, so the next step's accesses and this step's new blocks
    // meet a mapping (pages included) that does not depend on the copies'
    // timing. A failed layer still waits: the lanes must let go of the plan.
    double t_end = now(d);
    char spare[256] = "";
    int all = o->wait_all(o->ctx, st == KS_OK ? err : spare, st == KS_OK ? len : sizeof spare);
    stalled(d, t_end, &stall);
    if (st != KS_OK)
        return st;
    if (all != KS_OK)
        return failed(err, len, "waiting for a migration batch", all);
    if (f && d->p.sampled && in_time) {
        d->shape.stall = stall;
        d->shape.extra = extra;
        if ((st = publish(d, &plan)) != KS_OK)
            return failed(err, len, "publishing a sampled step", st);
        f->ended++;
        if (o->sampled_ended)
            o->sampled_ended(o->ctx);
    }
    for (uint32_t i = 0; i < plan.n; i++)
        if ((st = ks_cache_confirm(c, plan.batch[i])) != KS_OK)
            return failed(err, len, "confirming a migration batch", st);
    ks_cache_land(c); // a tally's demotions, which no batch carried
    r->steps++;
    d->last_step = now(d) - step_start;
    d->last_stall = stall;
    if (o->compute) // modelled time: the layers' modelled compute, the draft's
        r->busy += d->layer_time * s->model.layers + draft;
    else // real time: all but the waits
        r->busy += d->last_step - stall - extra;
    if (o->stepped && (st = o->stepped(o->ctx, err, len)) != KS_OK)
        return failed(err, len, "a decode step", st);
    return KS_OK;
}

// ---- the iteration -------------------------------------------------------------

// Device buffers: the host holds every block, so prompt KV that an iteration
// wrote without a decode step goes there before the iteration ends (its wait
// counts as stall).
static int backup_alone(struct ks_step *d, uint32_t tokens, char *err, size_t len)
{
    const struct ks_step_ops *o = &d->p.ops;
    if (d->p.s->cache.organisation != KS_ORG_PER_REQUEST || !o->backup || tokens == 0)
        return KS_OK;
    double stall = 0, t0 = now(d);
    int st = backup_kv(d, tokens, err, len);
    if (st == KS_OK)
        st = o->wait_all(o->ctx, err, len);
    stalled(d, t0, &stall);
    return st == KS_OK ? KS_OK : failed(err, len, "backing up prompt KV", st);
}

// A /steps record at the first step boundary in each sampling interval.
static void sample(struct ks_step *d)
{
    struct ks_run_result *r = d->p.r;
    double t = now(d);
    while (r->sample_grows && t >= KS_RUN_SAMPLES * r->sample_every)
        ks_run_result_thin_steps(r);
    if (floor(t / r->sample_every) <= floor(d->last_sample / r->sample_every))
        return;
    d->last_sample = t;
    struct ks_step_record *x = ks_run_result_add_step(r, d->p.cache);
    if (!x)
        return;
    x->t = t;
    x->gpu = d->p.gpu;
    x->batch = d->act.n;
    x->pending = d->n_pending + d->act.n_out; // retracted requests wait too
    x->step_time = d->last_step + d->begin_wait;
    x->tokens = d->act.tokens;
    x->stall = d->last_stall;
}

int ks_step_run(struct ks_step *d, char *err, size_t len)
{
    const struct ks_scenario *s = d->p.s;
    const struct ks_step_ops *o = &d->p.ops;
    struct ks_run_result *r = d->p.r;
    int st = KS_OK;
    while (st == KS_OK && now(d) < s->duration) {
        if ((st = admit_some(d, err, len)) != KS_OK)
            break;
        if (d->act.n == 0) {
            int go = o->idle(o->ctx, err, len);
            if (go < 0)
                st = failed(err, len, "waiting for requests", go);
            if (go <= 0)
                break;
            continue;
        }
        if (o->iteration && (st = o->iteration(o->ctx, err, len)) != KS_OK)
            break;
        // SGLang's estimated reservations: room for this step's tokens, or retractions
        if (ks_active_decoding_count(&d->act) > 0 && ks_active_make_room(&d->act) != KS_OK) {
            st = failed(err, len, "retracting requests", KS_ENOMEM);
            break;
        }
        if (d->act.n_out > 0 && (st = drop_listed(d, err, len)) != KS_OK)
            break;
        uint32_t n_dec = ks_active_decoding_count(&d->act);
        int decoding = n_dec > 0;
        double prefill = 0, share = 0; // the iteration's prefill time, and what prefill_seconds counts of it
        int prefill_bound = 0;         // that time is its compute's
        uint32_t chunk_tokens = 0;     // serial: prompt tokens of the iteration's chunk
        d->prefill_tokens = 0;
        d->prefill_compute = 0;
        if (s->scheduler.kind == KS_SCHED_FUSED) {
            // one iteration: every decoding request's token and prefill
            // chunks up to the token budget, one time for the mixed batch
            uint32_t cap = s->scheduler.max_batched_tokens;
            uint32_t budget = cap == 0 ? UINT32_MAX : n_dec < cap ? cap - n_dec : 0;
            d->prefill_compute = ks_active_prefill_budget(&d->act, budget, o->compute ? ks_cost_prefill : NULL,
                                                          &d->prefill_tokens);
            if (o->compute && d->prefill_tokens) {
                share = d->prefill_compute; // what the chunks' compute alone takes
                if (!decoding) { // an iteration of prefill only: its roofline time
                    double roof = ks_cost_roofline(
                        s, weights_read(d, d->prefill_tokens) + prefill_write(d), 0, d->prefill_compute);
                    prefill = roof + ks_cost_pass_overhead(s);
                    prefill_bound = d->prefill_compute >= roof;
                }
            }
        } else {
            // one iteration: a chunk of prefill, then a decode step of the
            // requests past their prefill (both hold the GPU: their times add)
            share = prefill = ks_active_prefill_chunk(&d->act, o->compute ? ks_cost_prefill : NULL, &chunk_tokens);
            if (prefill > 0) // a pass of its own
                share = prefill += ks_cost_pass_overhead(s);
        }
        r->prefill_time += share;
        if (prefill > 0) {
            double t = now(d);
            if (t + prefill > s->duration) {
                // the run ends during this prefill: its work past the end is not counted
                double left = s->duration - t;
                o->compute(o->ctx, left);
                r->busy += left;
                r->compute_bound_time += prefill_bound ? left : 0;
                r->prefill_time -= share * (1 - left / prefill);
                break;
            }
            if (!decoding && o->prefill_pass) // its layers meet the group's (a decode step's are their own)
                o->prefill_pass(o->ctx, prefill);
            else
                o->compute(o->ctx, prefill);
            r->busy += prefill;
            r->compute_bound_time += prefill_bound ? prefill : 0;
        }
        // prompt KV written outside a decode step (which backs up its own)
        uint32_t alone = s->scheduler.kind == KS_SCHED_FUSED ? (decoding ? 0 : d->prefill_tokens) : chunk_tokens;
        if ((st = backup_alone(d, alone, err, len)) != KS_OK)
            break;
        if (decoding && (st = ks_step_decode(d, err, len)) != KS_OK)
            break;
        double t = now(d);
        if (decoding && (st = ks_active_emit(&d->act, t, 0, err, len)) != KS_OK)
            break;
        // prefills completed in this iteration: their first token
        if ((st = ks_active_emit(&d->act, t, 1, err, len)) != KS_OK)
            break;
        sample(d);
    }
    ks_active_record_rest(&d->act); // cut off by the end of the run
    return st;
}
