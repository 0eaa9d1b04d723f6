// test_step.c - the step driver (sim/step/step.h) under a scripted clock: a fake backend written here (no
// SimGrid, no threads) whose copies land at scripted times. It proves the design rule the driver rests on: the
// decode step exists once, both backends only lend it their operations, and a step's time is the sum of its
// parts (README "A decode step"): host (scheduling, a table rebuild when L1's mapping changed) + stall (waits
// per layer for the batches that layer needs, then for all) + layers x layer time, with the batches confirmed
// in plan order once all have landed.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arch.h"
#include "cost.h"
#include "hist.h"
#include "step.h"
#include "step_util.h"
#include "unit_util.h"

#define LAYERS 4
#define BS 16            // tokens per block
#define BATCH 4          // blocks per migration batch: a 4-block request's layer fills one
#define TB 1024          // KV bytes of one token, all layers
#define BLOCK_BYTES 4096 // ks_test_params' block size in every tier
#define MAX_JOBS 64

// Every time below is a dyadic rational of modest size (weights, bandwidths and host costs are powers of two),
// so the driver's sums and the test's closed forms are exact in binary floating point whatever the order of
// the additions: times are compared exactly (assert_exact).
#define WEIGHTS 1048576.0   // 2^20 bytes
#define HBM_BW 1073741824.0 // 2^30 bytes/s
#define SCHED (1.0 / 1024)  // seconds of scheduling per step
#define REBUILD (1.0 / 512) // seconds per pointer-table rebuild
#define FLOPS 1099511627776.0 // 2^40 FLOP/s
#define Q_HEADS 2
#define HEAD_DIM 8
#define T_START 8.0 // the scripted clock's reading when a test begins

// Two times compared exactly, as doubles (cmocka 1.1's assert_float_equal converts to float, which would hide
// a difference below a float's precision).
#define assert_exact(a, b) assert_exact_at((a), (b), #a, #b, __FILE__, __LINE__)
static void assert_exact_at(double a, double b, const char *sa, const char *sb, const char *file, int line)
{
    if (a == b)
        return;
    print_error("%s = %.17g != %s = %.17g\n", sa, a, sb, b);
    _fail(file, line);
}

// A backend whose clock moves only when an operation says so. Each batch of a plan lands dur[i] seconds (i: its
// index in the plan) after it was queued, or after its `after` batch landed (a lane starts it only then).
struct fake {
    double clock;
    struct ks_step *d; // the driver: layer_time, and its queue for idle
    struct ks_cache *c;
    // this step's jobs, as a backend's lanes would hold them
    struct ks_step_job jobs[MAX_JOBS];
    double land[MAX_JOBS];
    uint32_t n_jobs, last_n;
    // script
    double dur[MAX_JOBS];
    double dur_lone;  // > 0: instead of dur[i] for a batch no layer waits for, directly or through a later batch
    double extra;     // seconds layers() spends besides the layers' compute, reported as *extra
    int wait_layer_st, layers_st, wait_all_st; // what those operations return
    const char *why;  // written into err by a failing wait_layer or layers
    const char *wait_all_msg;        // written into err by every wait_all (the driver must keep an earlier reason)
    struct ks_request_spec later[4]; // what idle delivers, one per call, at its arrival time
    uint32_t n_later, next_later;
    // what happened
    char log[2048];
    uint32_t queued[MAX_JOBS], queued_after[MAX_JOBS]; // the last step's batches (ids, `after`) in queue order
    uint32_t lo_layer[MAX_JOBS], hi_layer[MAX_JOBS];   // the layers of each one's blocks (cache's view)
    double computed;                                   // seconds passed to compute
    uint32_t inflight_at_layers, inflight_at_wait_all; // ks_cache_inflight_batches then (the last call)
};

static void note(struct fake *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void note(struct fake *f, const char *fmt, ...)
{
    size_t n = strlen(f->log);
    if (n)
        n += (size_t)snprintf(f->log + n, sizeof f->log - n, " ");
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(f->log + n, sizeof f->log - n, fmt, ap);
    va_end(ap);
}

// Every job whose landing time has come has landed.
static void settle(struct fake *f)
{
    for (uint32_t i = 0; i < f->n_jobs; i++)
        if (f->land[i] <= f->clock)
            f->jobs[i].landed = 1;
}

static double f_now(void *ctx)
{
    return ((struct fake *)ctx)->clock;
}

static void f_compute(void *ctx, double seconds)
{
    struct fake *f = ctx;
    note(f, "compute");
    f->clock += seconds;
    f->computed += seconds;
}

static int f_idle(void *ctx, char *err, size_t len)
{
    (void)err, (void)len;
    struct fake *f = ctx;
    note(f, "idle");
    if (f->next_later == f->n_later)
        return 0;
    const struct ks_request_spec *sp = &f->later[f->next_later++];
    if (f->clock < sp->arrival)
        f->clock = sp->arrival;
    assert_int_equal(ks_step_push(f->d, sp, -1), KS_OK);
    return 1;
}

static int f_iteration(void *ctx, char *err, size_t len)
{
    (void)err, (void)len;
    note(ctx, "iteration");
    return KS_OK;
}

static int f_admitted(void *ctx, struct ks_active *a, char *err, size_t len)
{
    (void)err, (void)len;
    note(ctx, "admitted(%llu)", (unsigned long long)a->spec.id);
    return KS_OK;
}

static int f_queue(void *ctx, const struct ks_plan *plan, char *err, size_t len)
{
    (void)err, (void)len;
    struct fake *f = ctx;
    note(f, "queue(%u)", plan->n);
    assert_int_equal(f->n_jobs, 0); // the last step's wait_all let go of its jobs
    assert_true(plan->n <= MAX_JOBS);
    uint8_t waited_for[MAX_JOBS] = {0}; // a later batch comes after it
    for (uint32_t i = 0; i < plan->n; i++)
        for (uint32_t k = 0; k < i; k++)
            waited_for[k] |= plan->batch[k]->id == plan->batch[i]->after;
    for (uint32_t i = 0; i < plan->n; i++) {
        struct ks_batch *b = plan->batch[i];
        f->jobs[i] = ks_step_job_of(b);
        int lone = !f->jobs[i].needed && !waited_for[i];
        double start = f->clock;
        if (b->after != KS_NONE) {
            uint32_t k = 0;
            while (k < i && f->jobs[k].b->id != b->after)
                k++;
            if (k == i)
                fail_msg("batch %u (index %u) comes after %u, not queued before it", b->id, i, b->after);
            start = f->land[k];
        }
        f->land[i] = start + (lone && f->dur_lone > 0 ? f->dur_lone : f->dur[i]);
        f->queued[i] = b->id;
        f->queued_after[i] = b->after;
        f->lo_layer[i] = UINT32_MAX;
        f->hi_layer[i] = 0;
        for (uint32_t j = 0; j < b->n; j++) {
            uint32_t g = ks_cache_block_group(f->c, b->blocks[j]);
            f->lo_layer[i] = g < f->lo_layer[i] ? g : f->lo_layer[i];
            f->hi_layer[i] = g > f->hi_layer[i] ? g : f->hi_layer[i];
        }
    }
    f->n_jobs = f->last_n = plan->n;
    return KS_OK;
}

// To the latest landing among the needed jobs of layers up to `layer` that have not landed.
static int f_wait_layer(void *ctx, uint32_t layer, uint32_t *ready, char *err, size_t len)
{
    struct fake *f = ctx;
    note(f, "wait_layer(%u)", layer);
    if (f->wait_layer_st != KS_OK) {
        snprintf(err, len, "%s", f->why);
        return f->wait_layer_st;
    }
    settle(f);
    double t = f->clock;
    for (uint32_t i = 0; i < f->n_jobs; i++)
        if (f->jobs[i].needed && !f->jobs[i].landed && f->jobs[i].layer <= layer && f->land[i] > t)
            t = f->land[i];
    f->clock = t;
    settle(f);
    assert_false(ks_step_needed_unlanded(f->jobs, f->n_jobs, layer));
    *ready = ks_step_ready_layers(f->jobs, f->n_jobs, layer, LAYERS);
    return KS_OK;
}

static int f_layers(void *ctx, uint32_t from, uint32_t n, double *extra, char *err, size_t len)
{
    struct fake *f = ctx;
    note(f, "layers(%u,%u)", from, n);
    f->inflight_at_layers = ks_cache_inflight_batches(f->c);
    if (f->layers_st != KS_OK) {
        snprintf(err, len, "%s", f->why);
        return f->layers_st;
    }
    f->clock += f->d->layer_time * n;
    f->clock += f->extra;
    *extra = f->extra;
    return KS_OK;
}

static int f_wait_all(void *ctx, char *err, size_t len)
{
    struct fake *f = ctx;
    note(f, "wait_all");
    f->inflight_at_wait_all = ks_cache_inflight_batches(f->c);
    for (uint32_t i = 0; i < f->n_jobs; i++)
        if (f->land[i] > f->clock)
            f->clock = f->land[i];
    settle(f);
    f->n_jobs = 0;
    if (f->wait_all_msg)
        snprintf(err, len, "%s", f->wait_all_msg);
    return f->wait_all_st;
}

static int f_stepped(void *ctx, char *err, size_t len)
{
    (void)err, (void)len;
    note(ctx, "stepped");
    return KS_OK;
}

struct fixture {
    struct ks_scenario s;
    struct ks_cache_params p;
    struct ks_cache *c;
    struct ks_selection *sp;
    struct ks_run_result r;
    struct ks_step d;
    struct fake k;
    char err[256];
};

// A driver over a cache of l1 + l2 pages (no L3) with dense selection; modelled: the backend has `compute` (the
// simulator's kind of time), else not (the runtime's).
static struct fixture *setup(uint32_t l1, uint32_t l2, int modelled)
{
    struct fixture *f = calloc(1, sizeof *f);
    assert_non_null(f);
    struct ks_scenario *s = &f->s;
    s->seed = 1;
    s->duration = 1e6;
    s->model.layers = LAYERS;
    s->model.kv_heads = 1;
    s->model.q_heads = Q_HEADS;
    s->model.head_dim = HEAD_DIM;
    s->model.weight_bytes = (uint64_t)WEIGHTS;
    s->model.weights_given = 1;
    s->model.max_context = 1u << 12;
    ks_arch_derive(&s->model, NULL, 0); // as the loader does
    s->cache.block_size = BS;
    s->cache.migration_batch = BATCH;
    s->sparse.policy = KS_SPARSE_DENSE;
    s->platform.hbm_bw = HBM_BW;
    s->platform.pcie_bw = 0; // the prefetch budget is then one full batch (there is nothing to prefetch)
    s->platform.flops = FLOPS;
    s->platform.prefill_efficiency = 1;
    s->platform.sched_overhead = SCHED;
    s->platform.table_rebuild = REBUILD;
    s->scheduler.kind = KS_SCHED_SERIAL; // a step's time alone (the fused iteration: tests/engine)
    f->p = ks_test_params(l1, l2, 0);
    f->p.groups = LAYERS;
    f->p.migration_batch = BATCH;
    f->c = ks_test_new(&f->p);
    f->sp = ks_selection_new(s, f->err, sizeof f->err);
    assert_non_null(f->sp);
    assert_int_equal(ks_run_result_init(&f->r), KS_OK);
    f->k.clock = T_START;
    f->k.d = &f->d;
    f->k.c = f->c;
    struct ks_step_ops ops = {.ctx = &f->k, .now = f_now, .compute = modelled ? f_compute : NULL, .idle = f_idle,
                              .iteration = f_iteration, .admitted = f_admitted, .queue = f_queue,
                              .wait_layer = f_wait_layer, .layers = f_layers, .wait_all = f_wait_all,
                              .stepped = f_stepped};
    struct ks_step_params sp = {
        .s = s, .cache = f->c, .sparse = f->sp, .r = &f->r, .gpu = 0, .ops = ops,
        .z = {.block_bytes = {BLOCK_BYTES, BLOCK_BYTES, BLOCK_BYTES}, .token_bytes = TB, .admit_blocks = 1u << 20,
              .l1_pages = l1, .groups = LAYERS, .layer_scale = 1, .floor_blocks = BATCH}};
    assert_int_equal(ks_step_init(&f->d, &sp), KS_OK);
    return f;
}

static void teardown(struct fixture *f)
{
    ks_step_fini(&f->d);
    ks_test_check(f->c);
    ks_cache_free(f->c);
    ks_selection_free(f->sp);
    ks_run_result_fini(&f->r);
    free(f);
}

// A request in the driver's active set, its prompt placed in `tier`, prefilled at no cost and with its first token
// emitted now, so that the next decode step reads it (what admission and an iteration do, without their time).
// prompt + 1 must stay within the prompt's blocks: the first token then opens no block. Returns its cache request.
static uint32_t decoding(struct fixture *f, uint64_t id, uint32_t prompt, uint32_t output, unsigned tier)
{
    assert_true((prompt + BS - 1) / BS == (prompt + 1 + BS - 1) / BS);
    struct ks_request_spec sp = ks_test_spec(id, prompt, output, f->k.clock);
    struct ks_active *a = NULL;
    assert_int_equal(ks_active_admit(&f->d.act, &sp, f->k.clock, tier, &a, f->err, sizeof f->err), KS_OK);
    assert_non_null(a);
    uint32_t req = a->req;
    ks_active_prefill_chunk(&f->d.act, NULL, NULL);
    assert_int_equal(ks_active_emit(&f->d.act, f->k.clock, 1, f->err, sizeof f->err), KS_OK);
    return req;
}

// Seconds of one layer when the step's selections read `tokens` tokens' KV (README: (weight bytes + KV bytes of
// the selected tokens) / HBM bandwidth / layers).
static double layer_time(double tokens)
{
    return (WEIGHTS + tokens * TB) / HBM_BW / LAYERS;
}

// Seconds to prefill a whole prompt of n tokens (README's formula with c = 0 cached tokens).
static double prefill(double n)
{
    double params = WEIGHTS / 2;
    return (2 * params * n + 4.0 * LAYERS * Q_HEADS * HEAD_DIM * (n * (n + 1) / 2)) / FLOPS;
}

// The step's batches, as queued, each carry the blocks of one layer: layers[i] for batch i.
static void batches_by_layer(const struct fake *k, const uint32_t *layers, uint32_t n)
{
    assert_int_equal(k->last_n, n);
    for (uint32_t i = 0; i < n; i++) {
        assert_int_equal(k->lo_layer[i], layers[i]);
        assert_int_equal(k->hi_layer[i], layers[i]);
    }
}

// One request, everything in L1, modelled time: step = scheduling + a table rebuild (the first step: L1 was
// filled since version 0) + layers x layer time, nothing else; a second step with no change in L1 charges no
// rebuild.
static void resident_step(void **state)
{
    (void)state;
    struct fixture *f = setup(64, 64, 1);
    decoding(f, 0, 49, 8, KS_L1); // context 50: 4 blocks per layer, the last one partly filled
    double t0 = f->k.clock, lt = layer_time(50); // dense: every one of the 50 tokens
    assert_int_equal(ks_step_decode(&f->d, f->err, sizeof f->err), KS_OK);
    assert_string_equal(f->k.log, "queue(0) compute wait_layer(0) layers(0,4) wait_all stepped");
    assert_exact(f->d.kv_bytes, 50.0 * TB);
    assert_exact(f->d.layer_time, lt);
    double step1 = SCHED + REBUILD + LAYERS * lt;
    assert_exact(f->d.last_step, step1);
    assert_exact(f->k.clock - t0, step1);
    assert_exact(f->k.computed, SCHED + REBUILD);
    assert_int_equal(f->r.steps, 1);
    assert_exact(f->r.stall, 0);
    assert_exact(f->d.last_stall, 0);
    assert_exact(f->r.host_time, SCHED + REBUILD);
    assert_exact(f->r.busy, LAYERS * lt);
    assert_int_equal(f->r.table_rebuilds, 1);
    // the same step again: L1's mapping did not change, so no rebuild
    f->k.log[0] = 0;
    t0 = f->k.clock;
    assert_int_equal(ks_step_decode(&f->d, f->err, sizeof f->err), KS_OK);
    assert_string_equal(f->k.log, "queue(0) compute wait_layer(0) layers(0,4) wait_all stepped");
    double step2 = SCHED + LAYERS * lt;
    assert_exact(f->d.last_step, step2);
    assert_exact(f->k.clock - t0, step2);
    assert_int_equal(f->r.steps, 2);
    assert_int_equal(f->r.table_rebuilds, 1);
    assert_exact(f->r.host_time, 2 * SCHED + REBUILD);
    assert_exact(f->r.busy, 2 * LAYERS * lt);
    assert_exact(f->r.stall, 0);
    teardown(f);
}

// Without `compute` (the runtime's real time) nothing modelled is charged: no compute call, host_time 0, and
// busy = step - stall, what layers() reports besides the compute included once, not twice. The rebuild is still
// counted (validate compares the count). The prompt is in L2: four miss batches, one per layer.
static void real_time_step(void **state)
{
    (void)state;
    struct fixture *f = setup(64, 64, 0);
    decoding(f, 0, 63, 8, KS_L2); // context 64: 4 full blocks per layer, all in L2
    double script[] = {1.0, 0.5, 3.0, 0.25}, x = 1.0 / 16;
    memcpy(f->k.dur, script, sizeof script);
    f->k.extra = x;
    double t0 = f->k.clock, lt = layer_time(64);
    assert_int_equal(ks_step_decode(&f->d, f->err, sizeof f->err), KS_OK);
    batches_by_layer(&f->k, (const uint32_t[]){0, 1, 2, 3}, 4);
    // layer 0 waits for its batch (1.0); layer 1's landed meanwhile (0.5) so layers 0-1 run at once; layer 2
    // waits for its batch (3.0); layer 3's landed long before (0.25)
    assert_string_equal(f->k.log, "queue(4) wait_layer(0) layers(0,2) wait_layer(2) layers(2,2) wait_all stepped");
    double stall = 1.0 + (3.0 - (1.0 + 2 * lt + x)), step = 3.0 + 2 * lt + x;
    assert_exact(f->d.last_step, step);
    assert_exact(f->k.clock - t0, step);
    assert_exact(f->d.last_stall, stall);
    assert_exact(f->r.stall, stall);
    assert_exact(f->k.computed, 0);
    assert_exact(f->r.host_time, 0);
    assert_exact(f->r.busy, step - stall);
    assert_exact(f->r.busy, LAYERS * lt + 2 * x);
    assert_int_equal(f->r.table_rebuilds, 1);
    assert_int_equal(f->r.steps, 1);
    teardown(f);
}

// Modelled time, the prompt in L2: a layer waits only for the batch that carries its own blocks (or an earlier
// layer's), as late as it can; stall = landing - the time the layer was ready; step = host + stall + layers x
// layer time. The plan took L1 pages for the 16 incoming blocks: L1's mapping changed, a rebuild is charged.
static void waits_per_layer(void **state)
{
    (void)state;
    struct fixture *f = setup(64, 64, 1);
    uint32_t req = decoding(f, 0, 63, 8, KS_L2);
    double script[] = {1.0, 0.5, 3.0, 0.25};
    memcpy(f->k.dur, script, sizeof script);
    double t0 = f->k.clock, lt = layer_time(64), host = SCHED + REBUILD;
    assert_int_equal(ks_step_decode(&f->d, f->err, sizeof f->err), KS_OK);
    batches_by_layer(&f->k, (const uint32_t[]){0, 1, 2, 3}, 4);
    assert_string_equal(f->k.log,
                        "queue(4) compute wait_layer(0) layers(0,2) wait_layer(2) layers(2,2) wait_all stepped");
    // layer 0 is ready after the host work and waits for its batch at 1.0; layer 2 is ready after layers 0-1
    // and waits for its batch at 3.0; wait_all finds everything landed
    double stall = (1.0 - host) + (3.0 - (1.0 + 2 * lt));
    assert_exact(f->d.last_stall, stall);
    assert_exact(f->r.stall, stall);
    assert_exact(f->d.last_step, host + stall + LAYERS * lt);
    assert_exact(f->d.last_step, 3.0 + 2 * lt);
    assert_exact(f->k.clock - t0, 3.0 + 2 * lt);
    assert_exact(f->r.host_time, host);
    assert_exact(f->r.busy, LAYERS * lt);
    assert_int_equal(f->r.table_rebuilds, 1);
    for (uint32_t g = 0; g < LAYERS; g++)
        for (uint32_t j = 0; j < 4; j++)
            assert_int_equal(ks_test_tier(f->c, req, g, j), KS_L1);
    teardown(f);
}

// Layers 0-2 resident, layer 3 in L2: the layers before the first one that needs a batch run in one call with no
// wait; layer 3 then waits for its batch.
static void resident_layers_run_at_once(void **state)
{
    (void)state;
    struct fixture *f = setup(64, 64, 1);
    uint32_t req = decoding(f, 0, 63, 8, KS_L2);
    // bring layers 0-2 into L1 beforehand, in a step 0 of the cache's own
    uint32_t blocks[] = {0, 1, 2, 3};
    assert_int_equal(ks_cache_step(f->c, 0), KS_OK);
    for (uint32_t g = 0; g < 3; g++)
        ks_test_access(f->c, req, g, blocks, 4, 1.0f);
    assert_int_equal(ks_test_plan_confirm(f->c, &f->p, 1u << 20), 12);
    f->k.dur[0] = 1.0;
    double t0 = f->k.clock, lt = layer_time(64), host = SCHED + REBUILD;
    assert_int_equal(ks_step_decode(&f->d, f->err, sizeof f->err), KS_OK);
    batches_by_layer(&f->k, (const uint32_t[]){3}, 1);
    assert_string_equal(f->k.log,
                        "queue(1) compute wait_layer(0) layers(0,3) wait_layer(3) layers(3,1) wait_all stepped");
    double stall = 1.0 - (host + 3 * lt);
    assert_exact(f->d.last_stall, stall);
    assert_exact(f->d.last_step, host + stall + LAYERS * lt);
    assert_exact(f->k.clock - t0, 1.0 + lt);
    teardown(f);
}

// L1 full: request A (decoding) and a cold request the driver does not know; request B's prompt in L2. B's blocks
// take the cold blocks' pages (a block this step reads is no victim), each promotion batch `after` the demotion
// that vacates its pages, and more cold blocks go to keep L1's reserve free. The batches reach the lanes in plan
// order, nothing is confirmed before wait_all (called once, after the last layers), and the confirms that follow
// succeed in plan order: confirming a promotion before its demotion fails (KS_ESTATE), and so would the step.
static void confirms_in_plan_order(void **state)
{
    (void)state;
    struct fixture *f = setup(24, 64, 1);
    uint32_t a = decoding(f, 0, 31, 8, KS_L1); // 2 blocks x 4 layers, context 32
    uint32_t cold = ks_test_req(f->c);
    ks_test_grow(f->c, cold, 4, KS_L1); // 4 blocks x 4 layers: L1's 24 pages are full
    uint32_t b = decoding(f, 1, 31, 8, KS_L2); // 2 blocks x 4 layers, context 32
    assert_int_equal(ks_test_used(f->c, KS_L1), 24);
    for (uint32_t i = 0; i < MAX_JOBS; i++)
        f->k.dur[i] = 1.0;
    f->k.dur_lone = 5.0; // the reserve's demotions: the step waits for them at its end
    double t0 = f->k.clock, lt = layer_time(32 + 32), host = SCHED + REBUILD;
    assert_int_equal(ks_step_decode(&f->d, f->err, sizeof f->err), KS_OK);
    uint32_t n = f->k.last_n, promotions = 0, chained = 0;
    assert_true(n >= 3);
    for (uint32_t i = 0; i < n; i++) {
        promotions += f->k.jobs[i].needed;
        if (f->k.queued_after[i] == KS_NONE)
            continue;
        chained++;
        uint32_t k = 0;
        while (k < i && f->k.queued[k] != f->k.queued_after[i])
            k++;
        assert_true(k < i); // its `after` reached the lanes first
    }
    assert_true(promotions >= 1);
    assert_true(promotions < n);           // the reserve's demotions are needed by no layer
    assert_int_equal(chained, promotions); // L1 was full: every promotion waits for a demotion
    char want[256];
    snprintf(want, sizeof want, "queue(%u) compute wait_layer(0) layers(0,4) wait_all stepped", n);
    assert_string_equal(f->k.log, want);
    assert_int_equal(f->k.inflight_at_layers, n);
    assert_int_equal(f->k.inflight_at_wait_all, n);
    assert_int_equal(ks_cache_inflight_batches(f->c), 0);
    assert_int_equal(ks_cache_stats(f->c)->batches, n);
    ks_test_check(f->c);
    for (uint32_t g = 0; g < LAYERS; g++)
        for (uint32_t j = 0; j < 2; j++) {
            struct ks_loc l = ks_test_loc(f->c, b, g, j);
            assert_int_equal(l.tier, KS_L1);
            assert_int_equal(l.state, KS_BLK_RESIDENT);
            assert_int_equal(ks_test_tier(f->c, a, g, j), KS_L1);
        }
    // the reserve: one page per request and layer (8), at most a quarter of L1 (6)
    uint32_t reserve = 24 / 4, cold_in_l1 = 0;
    assert_int_equal(ks_test_used(f->c, KS_L1), 24 - reserve);
    for (uint32_t g = 0; g < LAYERS; g++)
        for (uint32_t j = 0; j < 4; j++)
            cold_in_l1 += ks_test_tier(f->c, cold, g, j) == KS_L1;
    assert_int_equal(cold_in_l1, 16 - 2 * LAYERS - reserve);
    // the demotions that make room land at 1.0, the promotions after them at 2.0: layer 0 waits for that, all
    // layers run, and wait_all waits for the reserve's demotions (5.0)
    double stall = (2.0 - host) + (5.0 - (2.0 + LAYERS * lt));
    assert_exact(f->d.last_stall, stall);
    assert_exact(f->r.stall, stall);
    assert_exact(f->d.last_step, host + stall + LAYERS * lt);
    assert_exact(f->d.last_step, 5.0);
    assert_exact(f->k.clock - t0, 5.0);
    teardown(f);
}

// A run: two requests queued, prefilled here (modelled, README's prefill formula), admitted one per iteration;
// the run ends when idle says nothing more comes. TTFT, ITL, TPOT and E2EL in closed form from the prefills and
// the steps.
static void run_two_requests(void **state)
{
    (void)state;
    struct fixture *f = setup(64, 64, 1);
    double t0 = f->k.clock;
    struct ks_request_spec x = ks_test_spec(0, 63, 3, t0), y = ks_test_spec(1, 31, 2, t0);
    assert_int_equal(ks_step_push(&f->d, &x, -1), KS_OK);
    assert_int_equal(ks_step_push(&f->d, &y, -1), KS_OK);
    assert_int_equal(ks_step_load(&f->d), 2);
    assert_int_equal(ks_step_run(&f->d, f->err, sizeof f->err), KS_OK);
    // iteration 1: admits x, prefills it, x's first token; iteration 2: admits y, prefills it, a step of x, x's
    // second token and y's first; iteration 3: a step of both, their last tokens; then idle ends the run
    assert_string_equal(f->k.log,
                        "admitted(0) iteration compute "
                        "admitted(1) iteration compute queue(0) compute wait_layer(0) layers(0,4) wait_all stepped "
                        "iteration queue(0) compute wait_layer(0) layers(0,4) wait_all stepped idle");
    double px = prefill(63), py = prefill(31);
    // every step finds L1 changed (the prompts placed, then x's 65th token opening a block)
    double h = SCHED + REBUILD;
    double lt1 = layer_time(64), lt2 = layer_time(65 + 32);
    double s1 = h + LAYERS * lt1, s2 = h + LAYERS * lt2;
    assert_int_equal(f->r.admitted, 2);
    assert_int_equal(f->r.finished, 2);
    assert_int_equal(f->r.tokens, x.output_tokens + y.output_tokens);
    assert_int_equal(f->r.steps, 2);
    assert_int_equal(f->r.table_rebuilds, 2);
    assert_exact(f->k.clock - t0, px + py + s1 + s2);
    assert_exact(f->r.prefill_time, px + py);
    assert_exact(f->r.host_time, 2 * h);
    assert_exact(f->r.busy, px + py + LAYERS * lt1 + LAYERS * lt2);
    assert_exact(f->r.stall, 0);
    assert_int_equal(f->r.ttft->count, 2);
    assert_exact(f->r.ttft->sum, px + (px + py + s1));
    assert_int_equal(f->r.itl->count, 3);
    assert_exact(f->r.itl->sum, (py + s1) + s2 + s2);
    assert_exact(f->r.itl->max, py + s1 > s2 ? py + s1 : s2);
    // per request: x's two gaps over its 2 tokens after the first, y's one; both arrived at t0 and end together
    assert_int_equal(f->r.tpot->count, 2);
    assert_float_equal(f->r.tpot->sum, (py + s1 + s2) / 2 + s2, 1e-15);
    assert_int_equal(f->r.e2el->count, 2);
    assert_float_equal(f->r.e2el->sum, 2 * (px + py + s1 + s2), 1e-15);
    assert_int_equal(f->r.prompt_tokens, x.prompt_tokens + y.prompt_tokens);
    assert_int_equal(f->r.n_rec, 2);
    for (size_t i = 0; i < 2; i++) {
        const struct ks_request_record *rec = &f->r.rec[i];
        assert_exact(rec->finish, t0 + px + py + s1 + s2);
        assert_exact(rec->first_token, rec->id == 0 ? t0 + px : t0 + px + py + s1);
        assert_exact(rec->admitted, t0 + (rec->id == 0 ? 0 : px));
    }
    assert_int_equal(f->d.act.n, 0);
    assert_int_equal(ks_step_load(&f->d), 0);
    teardown(f);
}

// idle delivers a request that arrives later, with the GPU empty: the clock moves to its arrival, and its TTFT
// is its prefill alone.
static void run_idle_delivers(void **state)
{
    (void)state;
    struct fixture *f = setup(64, 64, 1);
    struct ks_request_spec x = ks_test_spec(0, 63, 1, f->k.clock);
    assert_int_equal(ks_step_push(&f->d, &x, -1), KS_OK);
    f->k.later[0] = ks_test_spec(1, 31, 1, 100.0);
    f->k.n_later = 1;
    assert_int_equal(ks_step_run(&f->d, f->err, sizeof f->err), KS_OK);
    // one output token each: the prefill's first token finishes a request, no decode step
    assert_string_equal(f->k.log, "admitted(0) iteration compute idle admitted(1) iteration compute idle");
    assert_exact(f->k.clock, 100.0 + prefill(31));
    assert_int_equal(f->r.finished, 2);
    assert_int_equal(f->r.steps, 0);
    assert_exact(f->r.ttft->sum, prefill(63) + prefill(31));
    teardown(f);
}

// Lets go of a failed step's batches (the caller's duty: they were not confirmed).
static void abort_step(struct fixture *f)
{
    assert_int_equal(ks_cache_inflight_batches(f->c), f->k.last_n);
    for (uint32_t i = f->k.last_n; i-- > 0;)
        assert_int_equal(ks_cache_abort(f->c, f->k.jobs[i].b), KS_OK);
}

// A failing wait_layer: the step returns its status with its message (not wait_all's, which gets a spare
// buffer), still waits for all (the lanes must let go of the plan), confirms nothing and counts no step.
static void failing_wait_layer(void **state)
{
    (void)state;
    struct fixture *f = setup(64, 64, 1);
    decoding(f, 0, 63, 8, KS_L2);
    f->k.wait_layer_st = KS_EIO;
    f->k.why = "lane 2: injected read error";
    f->k.wait_all_msg = "wait_all's words";
    assert_int_equal(ks_step_decode(&f->d, f->err, sizeof f->err), KS_EIO);
    assert_string_equal(f->err, "lane 2: injected read error");
    assert_string_equal(f->k.log, "queue(4) compute wait_layer(0) wait_all");
    assert_int_equal(f->k.n_jobs, 0);
    assert_int_equal(f->r.steps, 0);
    abort_step(f);
    teardown(f);
}

// A failing layers(): the same, after the layers that ran.
static void failing_layers(void **state)
{
    (void)state;
    struct fixture *f = setup(64, 64, 1);
    decoding(f, 0, 63, 8, KS_L2);
    double script[] = {1.0, 0.5, 3.0, 0.25};
    memcpy(f->k.dur, script, sizeof script);
    f->k.layers_st = KS_EINVAL;
    f->k.why = "kernel: bad launch";
    assert_int_equal(ks_step_decode(&f->d, f->err, sizeof f->err), KS_EINVAL);
    assert_string_equal(f->err, "kernel: bad launch");
    assert_string_equal(f->k.log, "queue(4) compute wait_layer(0) layers(0,2) wait_all");
    assert_int_equal(f->r.steps, 0);
    abort_step(f);
    teardown(f);
}

// A failing wait_all with no message of its own: the driver names what failed.
static void failing_wait_all(void **state)
{
    (void)state;
    struct fixture *f = setup(64, 64, 1);
    decoding(f, 0, 63, 8, KS_L2);
    f->k.wait_all_st = KS_EIO;
    assert_int_equal(ks_step_decode(&f->d, f->err, sizeof f->err), KS_EIO);
    char want[128];
    snprintf(want, sizeof want, "waiting for a migration batch: %s", ks_status_str(KS_EIO));
    assert_string_equal(f->err, want);
    assert_string_equal(f->k.log, "queue(4) compute wait_layer(0) layers(0,4) wait_all");
    assert_int_equal(f->r.steps, 0);
    abort_step(f);
    teardown(f);
}

// Where a layer's selection is made when the layer runs, the copies of its
// misses start then: a needed job waits for layer_now to reach its start
// layer (its own; the one before for an early batch, which the previous
// layer's selection predicted); jobs that no layer needs (prefetches,
// demotions) never wait.
static void jobs_wait_their_layer(void **state)
{
    (void)state;
    struct ks_batch b[4] = {
        {.id = 0, .after = KS_NONE, .klass = KS_CLASS_MISS},
        {.id = 1, .after = KS_NONE, .klass = KS_CLASS_MISS},
        {.id = 2, .after = KS_NONE, .klass = KS_CLASS_EVICT},
        {.id = 3, .after = KS_NONE, .klass = KS_CLASS_MISS, .early = 1},
    };
    struct ks_step_job j[4] = {
        {.b = &b[0], .needed = 1, .layer = 2, .start = 2},
        {.b = &b[1], .needed = 1, .layer = 0, .start = 0},
        {.b = &b[2], .needed = 0, .layer = 0, .start = 0},
        {.b = &b[3], .needed = 1, .layer = 3, .start = 2},
    };
    assert_int_equal(ks_step_next_job(j, 4, 0, KS_NONE), 0); // ungated: the first of the most urgent
    assert_int_equal(ks_step_next_job(j, 4, 0, 0), 1);       // layer 2's copy waits for layer 2
    j[1].running = 1;
    assert_int_equal(ks_step_next_job(j, 4, 0, 1), 2); // the demotion needs no layer
    j[2].running = 1;
    assert_int_equal(ks_step_next_job(j, 4, 0, 1), -1);
    assert_int_equal(ks_step_next_job(j, 4, 0, 2), 0);
    j[0].running = 1;
    assert_int_equal(ks_step_next_job(j, 4, 0, 2), 3); // layer 3's early copy goes with layer 2
}

// The layers that can run without waiting (one pass over the jobs) are
// what asking layer by layer whether an unlanded needed job holds each one
// up gives, on random job lists (some needed, some landed, layers past the
// model's and KS_NONE among them), from every layer.
static void ready_layers_by_definition(void **state)
{
    (void)state;
    struct ks_rng rng;
    ks_rng_seed(&rng, 7);
    struct ks_step_job j[12];
    for (int t = 0; t < 2000; t++) {
        uint32_t n = (uint32_t)(ks_rng_next(&rng) % 13), layers = 1 + (uint32_t)(ks_rng_next(&rng) % 10);
        for (uint32_t i = 0; i < n; i++) {
            uint64_t r = ks_rng_next(&rng);
            j[i] = (struct ks_step_job){.needed = r & 1, .landed = (r >> 1) % 3 == 0,
                                        .layer = (r >> 8) % 16 == 0 ? KS_NONE : (uint32_t)((r >> 16) % (layers + 3))};
        }
        for (uint32_t layer = 0; layer < layers; layer++) {
            uint32_t want = layers - layer;
            if (ks_step_needed_unlanded(j, n, UINT32_MAX - 1)) {
                want = 1;
                while (layer + want < layers && !ks_step_needed_unlanded(j, n, layer + want))
                    want++;
            }
            assert_int_equal(ks_step_ready_layers(j, n, layer, layers), want);
        }
    }
}

// The job of a batch: needed from its first missed layer, early batches
// starting a layer before (never before layer 0).
static void job_start_layer(void **state)
{
    (void)state;
    struct ks_cache_params p = ks_test_params(32, 64, 0);
    p.groups = 3;
    p.migration_batch = 1; // a batch per block: one layer's each
    struct ks_cache *c = ks_test_new(&p);
    uint32_t r = ks_test_req(c);
    ks_test_grow(c, r, 4, KS_L2); // 4 blocks in each of the 3 groups
    assert_int_equal(ks_cache_step(c, 1), KS_OK);
    for (uint32_t g = 0; g < 3; g++) {
        struct ks_access a = {.block = 1, .mass = 1, .next = KS_NONE, .ahead = 1};
        assert_int_equal(ks_cache_access(c, r, g, &a, 1, NULL, NULL), KS_OK);
    }
    struct ks_plan plan;
    assert_int_equal(ks_cache_plan(c, UINT64_MAX, &plan), KS_OK);
    uint32_t seen = 0;
    for (uint32_t i = 0; i < plan.n; i++) {
        struct ks_step_job j = ks_step_job_of(plan.batch[i]);
        assert_true(j.needed);
        assert_int_equal(j.start, j.layer > 0 ? j.layer - 1 : 0);
        seen |= 1u << j.layer;
    }
    assert_int_equal(seen, 0x7);
    for (uint32_t i = 0; i < plan.n; i++)
        assert_int_equal(ks_cache_confirm(c, plan.batch[i]), KS_OK);
    ks_cache_free(c);
}

// Jobs no layer waits for hold 3 lanes at most: a fourth bulk job waits
// while a needed one may still go (job.h).
static void jobs_keep_a_lane(void **state)
{
    (void)state;
    struct ks_batch b[6];
    struct ks_step_job j[6];
    for (uint32_t i = 0; i < 6; i++) {
        b[i] = (struct ks_batch){.id = i, .after = KS_NONE, .klass = i < 5 ? KS_CLASS_EVICT : KS_CLASS_MISS};
        j[i] = (struct ks_step_job){.b = &b[i], .needed = i == 5, .layer = i == 5 ? 1 : 0, .start = i == 5 ? 1 : 0};
    }
    for (uint32_t i = 0; i < 3; i++) {
        assert_int_equal(ks_step_next_job(j, 6, 0, 0), (int)i); // layer 1's copy cannot start yet
        j[i].running = 1;
    }
    assert_int_equal(ks_step_next_job(j, 6, 0, 0), -1); // the fourth lane is kept
    assert_int_equal(ks_step_next_job(j, 6, 0, 1), 5);  // for this one
    j[0].landed = 1;
    assert_int_equal(ks_step_next_job(j, 6, 0, 0), 3); // a bulk job's lane came free
    assert_int_equal(ks_step_next_job(j, 6, 1, 0), 3); // the same, the landed job not read
    j[1].landed = j[2].landed = 1;
    j[3].running = j[4].running = 1; // bulk: two of three lanes
    assert_int_equal(ks_step_next_job(j, 6, 3, 0), -1); // the needed one's layer is still ahead
    assert_int_equal(ks_step_next_job(j, 6, 3, 1), 5);
}

// detail.layers: a simulated layer's jobs as the model layers' copies:
// group 1 of layers of 4 is layers 4-7, each its share of the bytes (the
// rest on the last), an early one starting a layer before its own; a job no
// layer waits for stays at layer 0; `after` finds the same part of its
// batch. Batches of one group go part by part, a new group after them.
static void job_split_by_layer(void **state)
{
    (void)state;
    struct ks_batch b[3] = {
        {.id = 6, .after = KS_NONE, .klass = KS_CLASS_EVICT, .group = 1, .n = 3, .bytes = 1003},
        {.id = 7, .after = 6, .klass = KS_CLASS_MISS, .early = 1, .group = 1, .n = 3, .bytes = 1003},
        {.id = 8, .after = KS_NONE, .klass = KS_CLASS_MISS, .group = 2, .n = 1, .bytes = 8},
    };
    struct ks_step_job in[3] = {
        {.b = &b[0], .bytes = 1003},
        {.b = &b[1], .bytes = 1003, .needed = 1, .layer = 1, .start = 0},
        {.b = &b[2], .bytes = 8, .needed = 1, .layer = 2, .start = 2},
    };
    struct ks_step_job j[12];
    ks_step_job_split(in, 3, 4, j);
    uint64_t bytes[4] = {250, 250, 250, 253};
    for (uint32_t p = 0; p < 4; p++) {
        const struct ks_step_job *e = &j[2 * p], *m = &j[2 * p + 1], *x = &j[8 + p];
        assert_ptr_equal(e->b, &b[0]); // group 1: the demotion's part p, then the miss's
        assert_ptr_equal(m->b, &b[1]);
        assert_int_equal(e->bytes, bytes[p]);
        assert_int_equal(m->bytes, bytes[p]);
        assert_int_equal(e->part, p);
        assert_int_equal(m->part, p);
        assert_false(e->needed);
        assert_int_equal(e->layer, 0);
        assert_true(m->needed);
        assert_int_equal(m->layer, 4 + p);
        assert_int_equal(m->start, 3 + p);
        assert_int_equal(ks_step_job_after(j, 12, 2 * p + 1), 2 * p);
        assert_ptr_equal(x->b, &b[2]); // group 2 after
        assert_int_equal(x->layer, 8 + p);
        assert_int_equal(x->bytes, 2);
    }
    ks_step_job_split(in + 1, 1, 1, j); // full detail: the job itself
    assert_int_equal(j[0].bytes, 1003);
    assert_int_equal(j[0].layer, 1);
    assert_int_equal(j[0].start, 0);
}

// detail.layers: the model layer a request's selections of group g come
// from lies in the group and, over requests, each of its layers is drawn
// alike (8000 requests, 4 layers: 2000 each within 10%); at full detail g.
static void layer_drawn_per_request(void **state)
{
    (void)state;
    for (uint32_t g = 0; g < 3; g++) {
        uint32_t count[4] = {0};
        for (uint64_t id = 0; id < 8000; id++) {
            uint32_t l = ks_step_layer_of(4, g, id);
            assert_true(l >= 4 * g && l < 4 * g + 4);
            count[l - 4 * g]++;
            assert_int_equal(ks_step_layer_of(1, g, id), g);
        }
        for (uint32_t k = 0; k < 4; k++)
            assert_true(count[k] > 1800 && count[k] < 2200);
    }
}

// Prefill's attention pairs when each query token reads at most k earlier
// tokens (a DSA model's prefill; cost.h), counted by hand.
static void prefill_pairs_closed_form(void **state)
{
    (void)state;
    assert_true(ks_cost_prefill_pairs(4, 0, 0) == 10);  // 1 + 2 + 3 + 4
    assert_true(ks_cost_prefill_pairs(4, 0, 2) == 7);   // 1 + 2 + 2 + 2
    assert_true(ks_cost_prefill_pairs(4, 1, 3) == 11);  // 2 + 3 + 3 + 3
    assert_true(ks_cost_prefill_pairs(3, 5, 2) == 6);   // 2 + 2 + 2
    assert_true(ks_cost_prefill_pairs(4, 0, 10) == 10); // the bound never reached
    // 32K-token prompt, top-k 2048: 2048 x 2049 / 2 + (32768 - 2048) x 2048
    assert_true(ks_cost_prefill_pairs(32768, 0, 2048) == 2048.0 * 2049 / 2 + 30720.0 * 2048);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(resident_step),
        cmocka_unit_test(real_time_step),
        cmocka_unit_test(waits_per_layer),
        cmocka_unit_test(resident_layers_run_at_once),
        cmocka_unit_test(confirms_in_plan_order),
        cmocka_unit_test(run_two_requests),
        cmocka_unit_test(run_idle_delivers),
        cmocka_unit_test(failing_wait_layer),
        cmocka_unit_test(failing_layers),
        cmocka_unit_test(failing_wait_all),
        cmocka_unit_test(jobs_wait_their_layer),
        cmocka_unit_test(job_start_layer),
        cmocka_unit_test(jobs_keep_a_lane),
        cmocka_unit_test(ready_layers_by_definition),
        cmocka_unit_test(job_split_by_layer),
        cmocka_unit_test(layer_drawn_per_request),
        cmocka_unit_test(prefill_pairs_closed_form),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
