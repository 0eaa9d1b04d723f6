// decode.c - a GPU's decode actor: its step driver (step.h) run with SimGrid
// time. Waits are condition waits on the lanes' landings, modelled work is
// a sleep, a layer's attention its modelled time after the reads outside L1
// (see engine_impl.h).
#include "engine_impl.h"

#include <simgrid/actor.h>
#include <simgrid/engine.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arch.h"
#include "engine.h"
#include "grow.h"
// Hands a request to its GPU's admission queue. KS_OK or KS_ENOMEM.
// KS_ESTATE once the run is asked to stop: the router stops releasing.
int ks_engine_push(struct gpu *g, const struct ks_request_spec *spec, double prefilled)
{
    int st = ks_engine_queue(g, spec, prefilled);
    if (st == KS_OK)
        ks_engine_flush(g->sim);
    return st;
}

int ks_engine_queue(struct gpu *g, const struct ks_request_spec *spec, double prefilled)
{
    if (ks_engine_stopped())
        return KS_ESTATE;
    int st = ks_step_push(&g->d, spec, prefilled);
    if (st == KS_OK && !g->queued) {
        struct sim *m = g->sim;
        g->queued = 1;
        m->flush[(m->flush_head + m->n_flush++) % m->n_gpu] = g->index;
    }
    return st;
}

// Each wake-up is a SimGrid call, where other actors run and may queue (or
// flush) too: the ring stays consistent at every call, a GPU is in it at
// most once, and one queued after its wake-up is woken again.
void ks_engine_flush(struct sim *m)
{
    while (m->n_flush > 0) {
        struct gpu *g = &m->gpu[m->flush[m->flush_head]];
        m->flush_head = (m->flush_head + 1) % m->n_gpu;
        m->n_flush--;
        g->queued = 0;
        sg_cond_notify_all(g->arrive);
    }
}

// Requests on a GPU or bound for it: what the load-aware routers compare.
uint32_t ks_engine_load(const struct gpu *g)
{
    return ks_step_load(&g->d) + g->incoming;
}

// A request finished (the step driver's hook): its session's next turn may
// go, and with closed arrivals the next request is released now.
static void finished(void *ctx, struct ks_active *a)
{
    struct gpu *g = ctx;
    struct sim *m = g->sim;
    if (m->s->workload.sessions.turns > 1)
        ks_engine_turn_finished(m, &a->spec, a->last_token);
    m->in_flight--;
    if (m->s->workload.arrival.kind == KS_ARRIVAL_CLOSED)
        ks_engine_release_closed(m);
}

static double op_now(void *ctx)
{
    (void)ctx;
    return simgrid_get_clock();
}

static void op_compute(void *ctx, double seconds)
{
    (void)ctx;
    sg_actor_sleep_for(seconds);
}

// A pass of prefill alone: one sleep, or, for a rank of an expert group in
// lockstep, its layers one by one, each a share of its time, meeting the
// group at each MoE layer after its compute as a decode step's layers do
// (op_layers; the waits are sync_time, not busy).
static void op_prefill_pass(void *ctx, double seconds)
{
    struct gpu *g = ctx;
    uint32_t layers = g->sim->s->model.layers; // at least 1 (scenario.c)
    if (!g->ls || !g->ls_in) {
        sg_actor_sleep_for(seconds);
        return;
    }
    for (uint32_t l = 0; l < layers; l++) {
        sg_actor_sleep_for(seconds / layers);
        ks_lockstep_layer(g, l);
    }
}

// No request admitted: waits for one, unless the run is over (it reached
// its duration, or the router is done and nothing is held back or queued).
static int op_idle(void *ctx, char *err, size_t len)
{
    (void)err, (void)len;
    struct gpu *g = ctx;
    struct sim *m = g->sim;
    ks_lockstep_leave(g); // no request: it holds no rank of its group
    if (ks_engine_stopped() || m->closing || (m->router_done && m->waiting == 0 && g->d.n_pending == 0 && g->incoming == 0))
        return 0;
    // NOTE: a plain wait: sg_cond_wait_for never returned in SimGrid 3.32
    // here (the run deadlocked at time 0); the router wakes every decoder
    // when it stops.
    sg_mutex_lock(g->mu);
    while (g->d.n_pending == 0 && !m->closing && (!m->router_done || g->incoming > 0 || m->waiting > 0))
        sg_cond_wait(g->arrive, g->mu);
    sg_mutex_unlock(g->mu);
    return 1;
}

// Another actor failed for this GPU (its message is the run's already), or
// the run was asked to stop (ks_engine_stop: a signal): the step boundary
// where a run ends early.
// With parallel.ranks = lockstep the iteration begins when the other ranks
// of its expert group have begun it (lockstep.c).
static int op_iteration(void *ctx, char *err, size_t len)
{
    struct gpu *g = ctx;
    g->d.begin_wait = !ks_engine_stopped() && !g->failed ? ks_lockstep_begin(g) : 0;
    if (ks_engine_stopped()) {
        snprintf(err, len, "interrupted");
        return KS_ESTATE;
    }
    return g->failed ? KS_ESTATE : KS_OK;
}

// Appends jobs[0 .. n), split into the layers their batches stand for
// (detail.layers: ks_step_job_split), and wakes the lanes. KS_OK or KS_ENOMEM.
static int add_jobs(struct gpu *g, const struct ks_step_job *jobs, uint32_t n)
{
    uint32_t parts = g->sim->z.layer_scale;
    if (n == 0)
        return KS_OK;
    if (ks_grow((void **)&g->jobs, &g->cap_jobs, g->n_jobs + n * parts, sizeof *g->jobs) != KS_OK)
        return KS_ENOMEM;
    ks_step_job_split(jobs, n, parts, g->jobs + g->n_jobs);
    g->n_jobs += n * parts;
    ks_engine_wake_lanes(g);
    return KS_OK;
}

static int op_queue(void *ctx, const struct ks_plan *plan, char *err, size_t len)
{
    (void)err, (void)len;
    struct gpu *g = ctx;
    // a query-dependent selection is made layer by layer, as the step runs:
    // the copies of a layer's misses start when its layer does
    g->layer_now = ks_selection_per_layer(g->sim->sparse) ? 0 : KS_NONE;
    if (ks_grow((void **)&g->whole, &g->cap_whole, plan->n, sizeof *g->whole) != KS_OK)
        return KS_ENOMEM;
    for (uint32_t i = 0; i < plan->n; i++)
        g->whole[i] = ks_step_job_of(plan->batch[i]);
    return add_jobs(g, g->whole, plan->n);
}

// detail.gpus: a follower's jobs, as op_queue queues a plan's.
static int op_queue_jobs(void *ctx, const struct ks_step_job *jobs, uint32_t n, char *err, size_t len)
{
    (void)err, (void)len;
    struct gpu *g = ctx;
    g->layer_now = ks_selection_per_layer(g->sim->sparse) ? 0 : KS_NONE;
    return add_jobs(g, jobs, n);
}

// The iteration's new KV goes to the host beside the batches, as one copy
// from HBM to host DRAM of `items` token rows (cache.copy prices it, as a
// batch's), that no layer waits for; the step's end does.
static int op_backup(void *ctx, uint64_t items, double bytes, char *err, size_t len)
{
    (void)err, (void)len;
    struct gpu *g = ctx;
    if (items == 0)
        return KS_OK;
    if (ks_grow((void **)&g->jobs, &g->cap_jobs, g->n_jobs + 1, sizeof *g->jobs) != KS_OK)
        return KS_ENOMEM;
    g->backup = (struct ks_batch){.id = KS_NONE - 1, .after = KS_NONE, .src = KS_L1, .dst = KS_L2,
                                  .klass = KS_CLASS_EVICT, .n = (uint32_t)(items < UINT32_MAX ? items : UINT32_MAX),
                                  .bytes = (uint64_t)bytes};
    g->jobs[g->n_jobs++] = (struct ks_step_job){.b = &g->backup, .bytes = g->backup.bytes};
    ks_engine_wake_lanes(g);
    return KS_OK;
}

// The decode loop waited since `since` and a landing signalled it: it runs
// again after the host's wake-up time for that idleness (counted as stall).
static void wake_up(struct gpu *g, double since)
{
    const struct ks_host_wake *w = &g->sim->s->platform.host_wake;
    if (w->n)
        sg_actor_sleep_for(ks_host_wake_time(w, simgrid_get_clock() - since));
}

// NOTE: the step driver and the lanes read and write g->jobs and
// g->layer_now without g->mu (engine_impl.h: actors switch only inside
// SimGrid calls); it is held only around a condition wait, which needs it.
// Each lock is a SimGrid call: the locks taken around every look at the jobs
// were half of a resident step's calls (cluster_64x8.lua).

// Layer `layer` starts: its selection is made now, so the copies that wait
// for it may go (the lanes are signalled when some are queued).
static void layer_starts(struct gpu *g, uint32_t layer)
{
    if (g->layer_now != KS_NONE && layer > g->layer_now) {
        g->layer_now = layer;
        if (g->n_jobs > 0)
            ks_engine_wake_lanes(g);
    }
}

// Waits until pred(g) is false (g->mu taken only to wait); whether it waited.
// The lanes signal done only when a landing makes pred false (lane.c): a
// signal at every landing woke the driver to wait again for most of them
// (cluster_64x8_loaded.lua, detail.layers=8: 9,853 waits for 2,852 calls).
static int wait_done(struct gpu *g, int (*pred)(const struct gpu *g, uint32_t layer), uint32_t layer)
{
    if (!pred(g, layer) || g->failed)
        return 0;
    g->awaited = pred;
    g->await_layer = layer;
    sg_mutex_lock(g->mu);
    while (pred(g, layer) && !g->failed)
        sg_cond_wait(g->done, g->mu);
    sg_mutex_unlock(g->mu);
    g->awaited = NULL;
    return 1;
}

static int layer_unlanded(const struct gpu *g, uint32_t layer)
{
    return ks_step_needed_unlanded(g->jobs + g->jobs_landed, g->n_jobs - g->jobs_landed, layer);
}

static int any_unlanded(const struct gpu *g, uint32_t layer)
{
    (void)layer;
    return !ks_step_all_landed(g->jobs + g->jobs_landed, g->n_jobs - g->jobs_landed);
}

static int op_wait_layer(void *ctx, uint32_t layer, uint32_t *ready, char *err, size_t len)
{
    (void)err, (void)len;
    struct gpu *g = ctx;
    double t0 = simgrid_get_clock();
    layer_starts(g, layer);
    if (wait_done(g, layer_unlanded, layer))
        wake_up(g, t0);
    // what landed while it woke up counts too (actors switch only inside SimGrid calls)
    *ready = ks_step_ready_layers(g->jobs + g->jobs_landed, g->n_jobs - g->jobs_landed, layer,
                                  g->sim->s->model.layers);
    return g->failed ? KS_ESTATE : KS_OK;
}

// Reads layers [from, from + n)'s blocks outside L1, one after the other,
// each over its tier's route to the GPU (a copy's overhead, and an SSD
// request's op time as in a batch), then computes the layers. Layers here
// are the model's; at detail.layers each reads its simulated layer's blocks
// outside L1, each block its share of their bytes (a simulated block holds
// layer_scale layers'). With cache.layer_prefetch each layer's start is
// marked as it comes (the copies its selection predicts for the next layer
// may go); without it no job waits for a layer these run through, and one
// sleep computes them all.
static int op_layers(void *ctx, uint32_t from, uint32_t n, double *extra, char *err, size_t len)
{
    (void)err, (void)len;
    struct gpu *g = ctx;
    struct sim *m = g->sim;
    const struct ks_scenario *s = m->s;
    uint32_t scale = m->z.layer_scale;
    double t0 = simgrid_get_clock();
    for (uint32_t l = from; l < from + n; l++)
        for (unsigned tier = KS_L2; tier < KS_TIERS; tier++)
            for (uint32_t i = 0; i < g->d.outside[l / scale][tier]; i++) {
                m->r->outside_reads++;
                if (s->platform.copy_overhead > 0)
                    sg_actor_sleep_for(s->platform.copy_overhead);
                double ssd = tier == KS_L3 && s->cache.l3 == KS_L3_SSD
                                 ? s->platform.ssd.read_op_time * s->platform.ssd.read_bw
                                 : 0;
                ks_engine_transfer(m, &g->routes[tier][KS_L1], ks_engine_tier_host(g, tier), g->host,
                                   (double)m->z.block_bytes[tier] / scale, ssd);
            }
    int mark = s->cache.layer_prefetch != KS_LAYER_PREFETCH_NONE && g->layer_now != KS_NONE;
    if (!g->peer && !g->xpeer && !g->ls) {
        *extra = simgrid_get_clock() - t0;
        if (!mark) {
            sg_actor_sleep_for(g->d.layer_time * n);
            return KS_OK;
        }
        for (uint32_t l = from; l < from + n; l++) {
            if (l > from)
                layer_starts(g, l);
            sg_actor_sleep_for(g->d.layer_time);
        }
        return KS_OK;
    }
    // a replica over several GPUs (or an expert group over nodes): each
    // layer's compute, then its collectives over NVLink to the next GPU of
    // the ring (counted busy, as the reads); an expert group's share on other
    // nodes first, over the network to the GPU in its place on the next node. With two-batch overlap the
    // collectives run beside the compute: the layer takes the longer of the
    // two (the compute is a sleep, so sleeping what is left of it after the
    // transfers times the same as sleeping beside them)
    double compute = 0, waited = 0;
    int overlap = s->parallel.overlap == KS_OVERLAP_TWO_BATCH;
    for (uint32_t l = from; l < from + n; l++) {
        if (mark && l > from)
            layer_starts(g, l);
        if (!overlap)
            sg_actor_sleep_for(g->d.layer_time);
        compute += g->d.layer_time;
        waited += ks_lockstep_layer(g, l); // an MoE layer's all-to-all needs the group's every rank
        double bytes = ks_arch_comm_bytes(&s->model, l, g->d.comm_tokens), c0 = simgrid_get_clock();
        double remote = g->xpeer ? ks_arch_comm_remote_bytes(&s->model, l, g->d.comm_tokens) : 0;
        if (remote > 0)
            ks_engine_transfer(m, &g->to_xpeer, g->host, g->xpeer, remote, 0);
        if (g->peer && bytes - remote > 0)
            ks_engine_transfer(m, &g->to_peer, g->host, g->peer, bytes - remote, 0);
        double comm = simgrid_get_clock() - c0;
        m->r->comm_time += comm;
        if (overlap && g->d.layer_time > comm)
            sg_actor_sleep_for(g->d.layer_time - comm);
    }
    *extra = simgrid_get_clock() - t0 - compute - waited; // the wait is sync_time, not busy
    return KS_OK;
}

static int op_wait_all(void *ctx, char *err, size_t len)
{
    (void)err, (void)len;
    struct gpu *g = ctx;
    double t0 = simgrid_get_clock();
    if (g->layer_now != KS_NONE) { // every layer has run: whatever is left may start
        g->layer_now = KS_NONE;
        if (g->n_jobs > 0)
            ks_engine_wake_lanes(g);
    }
    if (wait_done(g, any_unlanded, 0))
        wake_up(g, t0);
    if (!g->failed)
        g->n_jobs = g->jobs_landed = 0; // all landed: no lane holds one
    return g->failed ? KS_ESTATE : KS_OK;
}

// detail.follow = "time": a follower's step before the model is ready waits
// until the decode steps the sampled GPUs began by this instant have ended
// and one was published (follow.h), or a GPU failed; the run's end ends the
// wait for a first one. The actors due at this instant run first: the
// sampled GPUs' steps that begin now are counted.
static void op_await_sampled(void *ctx)
{
    struct gpu *g = ctx;
    struct sim *m = g->sim;
    sg_actor_yield();
    uint64_t begun = m->follow->begun;
    sg_mutex_lock(m->mu);
    const struct ks_follow *f = m->follow;
    while (!m->err[0] && (f->ended < begun || (!f->published && !m->closing)))
        sg_cond_wait(m->sampled_ended, m->mu);
    sg_mutex_unlock(m->mu);
}

static void op_sampled_ended(void *ctx)
{
    struct sim *m = ((struct gpu *)ctx)->sim;
    sg_mutex_lock(m->mu);
    sg_cond_notify_all(m->sampled_ended);
    sg_mutex_unlock(m->mu);
}

// A rank in lockstep lets the group's other ranks begin their step's cache
// work before it waits for its own (ks_step_ops.yield).
static void op_yield(void *ctx)
{
    (void)ctx;
    sg_actor_yield();
}

static double op_moe_tokens(void *ctx, double own)
{
    return ks_lockstep_moe_tokens(ctx, own);
}

struct ks_step_ops ks_engine_step_ops(struct gpu *g)
{
    return (struct ks_step_ops){
        .ctx = g, .now = op_now, .compute = op_compute, .prefill_pass = op_prefill_pass, .idle = op_idle,
        .iteration = op_iteration, .finished = finished, .queue = op_queue, .queue_jobs = op_queue_jobs,
        .backup = op_backup, .wait_layer = op_wait_layer, .layers = op_layers, .wait_all = op_wait_all,
        .moe_tokens = op_moe_tokens, .await_sampled = op_await_sampled, .sampled_ended = op_sampled_ended,
        .yield = g->ls ? op_yield : NULL};
}

void ks_engine_decode(int argc, char **argv)
{
    (void)argc;
    struct gpu *g = (struct gpu *)(uintptr_t)strtoull(argv[1], NULL, 16);
    struct sim *m = g->sim;
    char err[1024] = "";
    if (ks_step_run(&g->d, err, sizeof err) != KS_OK) {
        ks_engine_fail_msg(m, err);
        g->failed = 1;
        if (m->follow) // a follower waiting for this GPU's step stops waiting
            op_sampled_ended(g);
    }
    ks_lockstep_leave(g);
    m->decoders--;
}
