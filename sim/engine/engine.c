// engine.c - the simulation's actors and its cost model (see engine.h).
//
// Shared state needs no locking for correctness (SimGrid actors run one at a
// time, switching only inside SimGrid calls); the mutex exists because a
// condition variable wants one.
#define _POSIX_C_SOURCE 200809L // clock_gettime

#include "engine.h"

#include <math.h>
#include <simgrid/actor.h>
#include <simgrid/cond.h>
#include <simgrid/engine.h>
#include <simgrid/host.h>
#include <simgrid/link.h>
#include <simgrid/mutex.h>
#include <xbt/dynar.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "luapolicy.h"
#include "platform.h"
#include "cost.h"
#include "selection.h"
#include "step.h"
#include "workload.h"

// The links a transfer crosses, as indices into sg_link_list().
struct route {
    uint32_t n;
    uint32_t *link; // NULL: not looked up yet
};
#define POOL KS_TIERS // route source: the prefill pool

struct gpu {
    struct sim *sim;
    uint32_t node, index; // index: across the cluster
    sg_host_t host, cpu, l3;
    struct ks_cache *cache;
    struct ks_step d;                // its requests, iterations and decode steps
    int d_ok;                        // d initialised
    sg_mutex_t mu;
    sg_cond_t work, done, arrive;
    struct ks_step_job *jobs;        // this step's batches, for the lanes
    uint32_t n_jobs, cap_jobs;
    uint32_t incoming;               // routed here, still in the prefill pool
    struct route routes[KS_TIERS + 1][KS_TIERS]; // [source tier or POOL][destination tier]
    int failed;
};

struct sim {
    const struct ks_scenario *s;
    struct ks_run_result *r;
    struct gpu *gpu;
    uint32_t n_gpu;
    struct ks_workload *wl;
    int router_done;
    int closing;       // the run reached its duration: idle decoders stop waiting
    uint32_t rr_turn;  // round robin: the next GPU
    // multi-turn sessions: a turn is released when its previous turn
    // finished, plus think_time; until then it waits here
    struct session *sess; // [n_sess], by session id
    size_t n_sess;
    uint32_t waiting;     // turns held back (parked or timed)
    uint32_t decoders; // decode actors still running
    uint32_t prefix_home[64]; // prefix_affinity: the GPU of each prefix group, KS_NONE: none yet
    uint64_t in_flight; // closed arrivals: requests released and not finished
    sg_mutex_t mu;
    sg_cond_t slot; // a request finished (closed arrivals)
    // disaggregated prefill: requests waiting for a pool worker, in arrival order
    struct incoming *pool;
    size_t pool_head, pool_n, pool_cap;
    sg_cond_t pool_work;
    sg_host_t pool_host;
    // link accounting: SimGrid's load plugin skips the halves of SPLITDUPLEX
    // links, so every transfer adds its bytes to each link of its route
    sg_link_t *links;
    size_t n_links;
    double *link_bytes;
    double *link_bins; // [n_links][KS_RUN_LINK_SAMPLES + 1] bytes carried in each sampling interval
    struct ks_step_sizing z; // block sizes, admission bound, L1 pages
    struct ks_selection *sparse; // the sparse-attention policy
    struct ks_luapolicy lua; // cache.evict, cache.prefetch_window as Lua functions
    char err[1024];
};

// A session's progress (sessions of more than one turn).
struct session {
    double done;            // seconds: when turn_done finished
    uint32_t turn_done;
    uint8_t finished;       // turn_done is valid
    uint8_t parked;         // next waits for turn_done + 1's predecessor to finish
    struct ks_request_spec next;
};

// A request routed to a GPU, waiting for the prefill pool.
struct incoming {
    struct ks_request_spec spec;
    struct gpu *g;
};

static int initialised;

#define KS_AFFINITY_SLACK 4 // requests: how much busier a prefix's home GPU may be

static void wake_decoders(struct sim *m);

static void fail(struct sim *m, const char *msg, int st)
{
    if (!m->err[0])
        snprintf(m->err, sizeof m->err, "%s: %s", msg, ks_status_str(st));
}

// The run's error is the first one (its message complete already).
static void fail_msg(struct sim *m, const char *msg)
{
    if (!m->err[0])
        snprintf(m->err, sizeof m->err, "%s", msg);
}

// Sends `bytes` from `from` to `to` and records them on every link of the
// route (once per time the route crosses it). `extra`: bytes that only stand
// for a device's per-request time (the SSD's op time): sent, so they take
// their time on every link, but not recorded as carried.
static void transfer(struct sim *m, struct route *rt, sg_host_t from, sg_host_t to, double bytes, double extra)
{
    if (!rt->link) {
        xbt_dynar_t d = xbt_dynar_new(sizeof(sg_link_t), NULL);
        sg_host_get_route(from, to, d);
        unsigned long n = xbt_dynar_length(d);
        rt->link = malloc((n ? n : 1) * sizeof *rt->link);
        if (rt->link) {
            rt->n = 0;
            for (unsigned long i = 0; i < n; i++) {
                uintptr_t id = (uintptr_t)sg_link_get_data(xbt_dynar_get_as(d, i, sg_link_t));
                if (id) // 0: a link made after setup (none are)
                    rt->link[rt->n++] = (uint32_t)(id - 1);
            }
        }
        xbt_dynar_free(&d);
    }
    double start = simgrid_get_clock();
    sg_host_sendto(from, to, bytes + extra);
    double end = simgrid_get_clock();
    for (uint32_t i = 0; rt->link && i < rt->n; i++)
        m->link_bytes[rt->link[i]] += bytes;
    // the time series: the bytes spread evenly over the transfer's time, into
    // the sampling intervals it overlaps (the last interval takes what runs
    // past the duration)
    size_t k = KS_RUN_LINK_SAMPLES;
    double every = m->s->duration / k;
    size_t b0 = (size_t)(start / every), b1 = (size_t)(end / every);
    if (b0 > k)
        b0 = k;
    if (b1 > k)
        b1 = k;
    for (uint32_t i = 0; m->link_bins && rt->link && i < rt->n; i++) {
        double *bins = m->link_bins + (size_t)rt->link[i] * (k + 1);
        if (b0 == b1 || end <= start) {
            bins[b1] += bytes;
            continue;
        }
        for (size_t b = b0; b <= b1; b++) {
            double lo = b == b0 ? start : b * every, hi = b == b1 || b == k ? end : (b + 1) * every;
            bins[b] += bytes * (hi - lo) / (end - start);
        }
    }
}

// ---- migration lanes ---------------------------------------------------------

static sg_host_t tier_host(const struct gpu *g, unsigned tier)
{
    return tier == KS_L1 ? g->host : tier == KS_L2 ? g->cpu : g->l3;
}

static void lane(int argc, char **argv)
{
    (void)argc;
    struct gpu *g = (struct gpu *)(uintptr_t)strtoull(argv[1], NULL, 16);
    const struct ks_scenario *s = g->sim->s;
    const struct ks_host_wake *wake = &s->platform.host_wake;
    for (;;) {
        sg_mutex_lock(g->mu);
        double idle_from = simgrid_get_clock();
        int k, waited = 0;
        while ((k = ks_step_next_job(g->jobs, g->n_jobs)) < 0) {
            sg_cond_wait(g->work, g->mu);
            waited = 1;
        }
        if (waited && wake->n) {
            // a lane that slept takes this long to run once signalled; a
            // lane already awake may take the job meanwhile
            sg_mutex_unlock(g->mu);
            sg_actor_sleep_for(ks_host_wake_time(wake, simgrid_get_clock() - idle_from));
            sg_mutex_lock(g->mu);
            if ((k = ks_step_next_job(g->jobs, g->n_jobs)) < 0) {
                sg_mutex_unlock(g->mu);
                continue;
            }
        }
        g->jobs[k].running = 1;
        struct ks_batch *b = g->jobs[k].b;
        sg_mutex_unlock(g->mu);

        // one batched copy: its fixed cost, then the bytes over the route
        double t_copy = simgrid_get_clock();
        if (s->platform.copy_overhead > 0)
            sg_actor_sleep_for(s->platform.copy_overhead);
        // each block of a batch is its own SSD request (its page sits
        // anywhere in the file), and a request holds the drive for its
        // per-request time (the profile's op_time, calib/fit.h) besides its
        // bytes: as that many more bytes at the drive's rate, which SimGrid
        // then shares like the rest
        double extra = 0;
        if (s->cache.l3 == KS_L3_SSD && b->src == KS_L3)
            extra = b->n * s->platform.ssd.read_op_time * s->platform.ssd.read_bw;
        else if (s->cache.l3 == KS_L3_SSD && b->dst == KS_L3)
            extra = b->n * s->platform.ssd.write_op_time * s->platform.ssd.write_bw;
        transfer(g->sim, &g->routes[b->src][b->dst], tier_host(g, b->src), tier_host(g, b->dst), (double)b->bytes,
                 extra);

        sg_mutex_lock(g->mu);
        g->sim->r->copy_seconds += simgrid_get_clock() - t_copy;
        g->sim->r->copy_bytes += b->bytes;
        for (uint32_t i = 0; i < g->n_jobs; i++)
            if (g->jobs[i].b == b)
                g->jobs[i].landed = 1; // the step driver confirms it at the step's end
        sg_cond_notify_all(g->done);
        sg_cond_notify_all(g->work);
        sg_mutex_unlock(g->mu);
    }
}

// Hands a request to its GPU's admission queue. KS_OK or KS_ENOMEM.
static int push_pending(struct gpu *g, const struct ks_request_spec *spec, double prefilled)
{
    int st = ks_step_push(&g->d, spec, prefilled);
    if (st == KS_OK)
        sg_cond_notify_all(g->arrive);
    return st;
}

// Requests on a GPU or bound for it: what the load-aware routers compare.
static uint32_t load_of(const struct gpu *g)
{
    return ks_step_load(&g->d) + g->incoming;
}

// ---- prefill -----------------------------------------------------------------

static int pool_push(struct sim *m, struct gpu *g, const struct ks_request_spec *spec)
{
    if (m->pool_n == m->pool_cap) {
        size_t cap = m->pool_cap ? 2 * m->pool_cap : 64;
        struct incoming *p = malloc(cap * sizeof *p);
        if (!p)
            return KS_ENOMEM;
        for (size_t i = 0; i < m->pool_n; i++) // unwrap the ring
            p[i] = m->pool[(m->pool_head + i) % m->pool_cap];
        free(m->pool);
        m->pool = p;
        m->pool_head = 0;
        m->pool_cap = cap;
    }
    m->pool[(m->pool_head + m->pool_n++) % m->pool_cap] = (struct incoming){.spec = *spec, .g = g};
    g->incoming++;
    sg_cond_notify_one(m->pool_work);
    return KS_OK;
}

// One GPU of the prefill pool: prefills the oldest waiting request, sends its
// KV to the decode node's host DRAM, and queues it on its decode GPU with
// its first token already produced.
static void prefill_worker(int argc, char **argv)
{
    (void)argc;
    struct sim *m = (struct sim *)(uintptr_t)strtoull(argv[1], NULL, 16);
    for (;;) {
        sg_mutex_lock(m->mu);
        while (m->pool_n == 0)
            sg_cond_wait(m->pool_work, m->mu);
        struct incoming in = m->pool[m->pool_head];
        m->pool_head = (m->pool_head + 1) % m->pool_cap;
        m->pool_n--;
        sg_mutex_unlock(m->mu);
        double t = ks_cost_prefill(m->s, in.spec.prompt_tokens, 0);
        sg_actor_sleep_for(t);
        m->r->prefill_time += t;
        double bytes = (double)in.spec.prompt_tokens * (double)m->z.token_bytes;
        transfer(m, &in.g->routes[POOL][KS_L2], m->pool_host, in.g->cpu, bytes, 0);
        m->r->kv_sent += (uint64_t)bytes;
        in.g->incoming--;
        if (push_pending(in.g, &in.spec, simgrid_get_clock()) != KS_OK) {
            fail(m, "queueing a request", KS_ENOMEM);
            in.g->failed = 1;
        }
    }
}

// ---- router ------------------------------------------------------------------

static struct gpu *least_loaded(struct sim *m)
{
    struct gpu *best = &m->gpu[0];
    for (uint32_t i = 1; i < m->n_gpu; i++)
        if (load_of(&m->gpu[i]) < load_of(best))
            best = &m->gpu[i];
    return best;
}

// The GPU a request goes to: in turn; the least loaded (active + queued
// requests); or, for a request with a shared prefix, the GPU its prefix
// group went to first (where the prefix's blocks are, so its prefill is
// skipped) unless that GPU is much busier than the least loaded one.
static struct gpu *route(struct sim *m, const struct ks_request_spec *sp)
{
    switch (m->s->router) {
    case KS_ROUTER_ROUND_ROBIN:
        break;
    case KS_ROUTER_LEAST_LOADED:
        return least_loaded(m);
    case KS_ROUTER_PREFIX_AFFINITY: {
        struct gpu *low = least_loaded(m);
        if (sp->prefix_group == KS_NONE || sp->prefix_group >= 64)
            return low;
        uint32_t *home = &m->prefix_home[sp->prefix_group];
        if (*home == KS_NONE)
            *home = low->index;
        struct gpu *h = &m->gpu[*home];
        // affinity yields to load: a home more than KS_AFFINITY_SLACK requests
        // busier than the least loaded GPU sends the request there instead
        if (load_of(h) > load_of(low) + KS_AFFINITY_SLACK)
            return low;
        return h;
    }
    }
    return &m->gpu[m->rr_turn++ % m->n_gpu];
}

// Routes a request and queues it on its GPU (or in the prefill pool).
static int release(struct sim *m, const struct ks_request_spec *spec)
{
    struct gpu *g = route(m, spec);
    int st = m->s->prefill.mode == KS_PREFILL_DISAGGREGATED ? pool_push(m, g, spec) : push_pending(g, spec, -1);
    if (st != KS_OK)
        return st;
    m->r->arrived++;
    m->in_flight++;
    return KS_OK;
}

static struct session *session_of(struct sim *m, uint64_t id)
{
    if (id >= m->n_sess) {
        size_t n = m->n_sess ? m->n_sess : 256;
        while (n <= id)
            n *= 2;
        struct session *p = realloc(m->sess, n * sizeof *p);
        if (!p)
            return NULL;
        memset(p + m->n_sess, 0, (n - m->n_sess) * sizeof *p);
        m->sess = p;
        m->n_sess = n;
    }
    return &m->sess[id];
}

struct timed_turn {
    struct sim *m;
    struct ks_request_spec spec;
    double at; // seconds
};

// A short-lived actor: releases one turn at its time (if the run lasts that long).
static void turn_actor(int argc, char **argv)
{
    (void)argc;
    struct timed_turn *t = (struct timed_turn *)(uintptr_t)strtoull(argv[1], NULL, 16);
    struct sim *m = t->m;
    double until = t->at < m->s->duration ? t->at : m->s->duration;
    if (until > simgrid_get_clock())
        sg_actor_sleep_until(until);
    if (simgrid_get_clock() < m->s->duration) {
        t->spec.arrival = simgrid_get_clock();
        int st = release(m, &t->spec);
        if (st != KS_OK)
            fail(m, "queueing a request", st);
    }
    m->waiting--;
    free(t);
    if (m->router_done && m->waiting == 0)
        wake_decoders(m);
}

static void spawn(const char *name, sg_host_t host, void (*fn)(int, char **), void *arg, int daemon);

// Releases a held turn at time `at`; the caller counted it in m->waiting.
static void release_at(struct sim *m, const struct ks_request_spec *spec, double at)
{
    struct timed_turn *t = malloc(sizeof *t);
    if (!t) {
        fail(m, "holding a session's turn", KS_ENOMEM);
        m->waiting--;
        return;
    }
    *t = (struct timed_turn){.m = m, .spec = *spec, .at = at};
    spawn("turn", m->gpu[0].cpu, turn_actor, t, 0); // not a daemon: it ends by the duration and frees t
}

// A session's turn finished at `now`: its next turn, if it waits, comes
// think_time later.
static void turn_finished(struct sim *m, const struct ks_request_spec *sp, double now)
{
    struct session *x = session_of(m, sp->session);
    if (!x) {
        fail(m, "tracking a session", KS_ENOMEM);
        return;
    }
    x->finished = 1;
    x->done = now;
    x->turn_done = sp->turn;
    if (x->parked && x->next.turn == sp->turn + 1) {
        x->parked = 0;
        release_at(m, &x->next, now + m->s->workload.sessions.think_time);
    }
}

static void router(int argc, char **argv)
{
    (void)argc;
    struct sim *m = (struct sim *)(uintptr_t)strtoull(argv[1], NULL, 16);
    const struct ks_scenario *s = m->s;
    int closed = s->workload.arrival.kind == KS_ARRIVAL_CLOSED;
    struct ks_request_spec spec;
    int st;
    while ((st = ks_workload_next(m->wl, &spec)) == 1) {
        if (closed) {
            sg_mutex_lock(m->mu);
            while (m->in_flight >= s->workload.arrival.concurrency && m->decoders > 0)
                sg_cond_wait(m->slot, m->mu);
            sg_mutex_unlock(m->mu);
            if (m->decoders == 0)
                break;
            spec.arrival = simgrid_get_clock();
        } else if (spec.arrival > simgrid_get_clock()) {
            if (spec.arrival >= s->duration)
                break;
            sg_actor_sleep_until(spec.arrival);
        }
        if (simgrid_get_clock() >= s->duration)
            break;
        if (spec.turn > 0 && spec.prev_id != KS_WORKLOAD_NO_ID) {
            // a later turn: not before its previous turn finished, plus think_time
            struct session *x = session_of(m, spec.session);
            if (!x) {
                fail(m, "tracking a session", KS_ENOMEM);
                break;
            }
            m->waiting++;
            if (x->finished && x->turn_done + 1 == spec.turn) {
                release_at(m, &spec, x->done + s->workload.sessions.think_time);
            } else {
                x->next = spec;
                x->parked = 1;
            }
            continue;
        }
        int qst = release(m, &spec);
        if (qst != KS_OK) {
            fail(m, "queueing a request", qst);
            break;
        }
    }
    if (st < 0)
        fail(m, "reading the workload", st);
    m->router_done = 1;
    wake_decoders(m);
}

static void wake_decoders(struct sim *m)
{
    for (uint32_t i = 0; i < m->n_gpu; i++)
        sg_cond_notify_all(m->gpu[i].arrive);
}

// A daemon that ends the waits of idle decoders when the run reaches its
// duration (a session's turn may still be held then).
static void closer(int argc, char **argv)
{
    (void)argc;
    struct sim *m = (struct sim *)(uintptr_t)strtoull(argv[1], NULL, 16);
    sg_actor_sleep_until(m->s->duration);
    m->closing = 1;
    wake_decoders(m);
}

// ---- decode: the step driver's operations on SimGrid ---------------------------

// A request finished (the step driver's hook): its session's next turn may
// go, and a router waiting for a slot may release one.
static void finished(void *ctx, struct ks_active *a)
{
    struct gpu *g = ctx;
    struct sim *m = g->sim;
    if (m->s->workload.sessions.turns > 1)
        turn_finished(m, &a->spec, a->last_token);
    m->in_flight--;
    sg_cond_notify_all(m->slot);
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

// No request admitted: waits for one, unless the run is over (it reached
// its duration, or the router is done and nothing is held back or queued).
static int op_idle(void *ctx, char *err, size_t len)
{
    (void)err, (void)len;
    struct gpu *g = ctx;
    struct sim *m = g->sim;
    if (m->closing || (m->router_done && m->waiting == 0 && g->d.n_pending == 0 && g->incoming == 0))
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

// Another actor failed for this GPU (its message is the run's already).
static int op_iteration(void *ctx, char *err, size_t len)
{
    (void)err, (void)len;
    return ((struct gpu *)ctx)->failed ? KS_ESTATE : KS_OK;
}

static int op_queue(void *ctx, const struct ks_plan *plan, char *err, size_t len)
{
    (void)err, (void)len;
    struct gpu *g = ctx;
    for (uint32_t i = 0; i < plan->n; i++) {
        if (g->n_jobs == g->cap_jobs) {
            uint32_t cap = g->cap_jobs ? 2 * g->cap_jobs : 64;
            struct ks_step_job *p = realloc(g->jobs, cap * sizeof *p);
            if (!p)
                return KS_ENOMEM;
            g->jobs = p;
            g->cap_jobs = cap;
        }
        g->jobs[g->n_jobs++] = ks_step_job_of(g->cache, plan->batch[i]);
    }
    if (plan->n)
        sg_cond_notify_all(g->work);
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

static int op_wait_layer(void *ctx, uint32_t layer, uint32_t *ready, char *err, size_t len)
{
    (void)err, (void)len;
    struct gpu *g = ctx;
    double t0 = simgrid_get_clock();
    sg_mutex_lock(g->mu);
    int waited = 0;
    while (ks_step_needed_unlanded(g->jobs, g->n_jobs, layer) && !g->failed) {
        sg_cond_wait(g->done, g->mu);
        waited = 1;
    }
    sg_mutex_unlock(g->mu);
    if (waited)
        wake_up(g, t0);
    // what landed while it woke up counts too (actors switch only inside SimGrid calls)
    *ready = ks_step_ready_layers(g->jobs, g->n_jobs, layer, g->sim->s->model.layers);
    return g->failed ? KS_ESTATE : KS_OK;
}

// Reads layers [from, from + n)'s blocks outside L1, one after the other,
// each over its tier's route to the GPU (a copy's overhead, and an SSD
// request's op time as in a batch), then computes the layers.
static int op_layers(void *ctx, uint32_t from, uint32_t n, double *extra, char *err, size_t len)
{
    (void)err, (void)len;
    struct gpu *g = ctx;
    struct sim *m = g->sim;
    const struct ks_scenario *s = m->s;
    double t0 = simgrid_get_clock();
    for (uint32_t l = from; l < from + n; l++)
        for (unsigned tier = KS_L2; tier < KS_TIERS; tier++)
            for (uint32_t i = 0; i < g->d.outside[l][tier]; i++) {
                m->r->outside_reads++;
                if (s->platform.copy_overhead > 0)
                    sg_actor_sleep_for(s->platform.copy_overhead);
                double ssd = tier == KS_L3 && s->cache.l3 == KS_L3_SSD
                                 ? s->platform.ssd.read_op_time * s->platform.ssd.read_bw
                                 : 0;
                transfer(m, &g->routes[tier][KS_L1], tier_host(g, tier), g->host, (double)m->z.block_bytes[tier],
                         ssd);
            }
    *extra = simgrid_get_clock() - t0;
    sg_actor_sleep_for(g->d.layer_time * n);
    return KS_OK;
}

static int op_wait_all(void *ctx, char *err, size_t len)
{
    (void)err, (void)len;
    struct gpu *g = ctx;
    double t0 = simgrid_get_clock();
    sg_mutex_lock(g->mu);
    int waited = 0;
    while (!ks_step_all_landed(g->jobs, g->n_jobs) && !g->failed) {
        sg_cond_wait(g->done, g->mu);
        waited = 1;
    }
    if (!g->failed)
        g->n_jobs = 0; // all landed: no lane holds one
    sg_mutex_unlock(g->mu);
    if (waited)
        wake_up(g, t0);
    return g->failed ? KS_ESTATE : KS_OK;
}

static void decode(int argc, char **argv)
{
    (void)argc;
    struct gpu *g = (struct gpu *)(uintptr_t)strtoull(argv[1], NULL, 16);
    struct sim *m = g->sim;
    char err[1024] = "";
    if (ks_step_run(&g->d, err, sizeof err) != KS_OK) {
        fail_msg(m, err);
        g->failed = 1;
    }
    m->decoders--;
    sg_cond_notify_all(m->slot); // a router waiting for a slot must not wait for this one
}

// ---- progress ----------------------------------------------------------------

// A daemon that redraws a progress line on stderr every 1% of the duration
// (only when stderr is a terminal; it never touches stdout).
static void progress(int argc, char **argv)
{
    (void)argc;
    struct sim *m = (struct sim *)(uintptr_t)strtoull(argv[1], NULL, 16);
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (int pct = 1;; pct++) {
        sg_actor_sleep_until(m->s->duration * pct / 100.0);
        clock_gettime(CLOCK_MONOTONIC, &t);
        double wall = (double)(t.tv_sec - t0.tv_sec) + (double)(t.tv_nsec - t0.tv_nsec) / 1e9;
        fprintf(stderr, "\rrun: %3d%% of %gs simulated, %llu requests finished, %llu tokens, %.1fs wall ",
                pct < 100 ? pct : 100, m->s->duration, (unsigned long long)m->r->finished,
                (unsigned long long)m->r->tokens, wall);
        fflush(stderr);
    }
}

// ---- links -------------------------------------------------------------------

// Every link's totals, in sg_link_list order (the order the samples index).
static void link_records(struct sim *m, struct ks_run_result *r)
{
    r->links = calloc(m->n_links ? m->n_links : 1, sizeof *r->links);
    if (!r->links)
        return;
    for (size_t i = 0; i < m->n_links; i++) {
        struct ks_link_record *x = &r->links[i];
        snprintf(x->name, sizeof x->name, "%s", sg_link_get_name(m->links[i]));
        x->bandwidth = sg_link_get_bandwidth(m->links[i]);
        x->latency = sg_link_get_latency(m->links[i]);
        x->bytes = m->link_bytes[i];
        x->utilisation = r->sim_time > 0 ? x->bytes / (x->bandwidth * r->sim_time) : 0;
    }
    r->n_links = m->n_links;
    // the time series: each link's bytes carried up to the end of each
    // sampling interval, then at the end of the run
    size_t n = m->n_links, k = KS_RUN_LINK_SAMPLES;
    double every = m->s->duration / k;
    size_t intervals = r->sim_time > k * every ? k + 1 : k; // a last one when the run overshot its duration
    if (!m->link_bins || !(r->link_samples = malloc(n * intervals * sizeof *r->link_samples)))
        return; // the time series is lost; the totals above stand
    for (size_t i = 0; i < n; i++) {
        double sum = 0;
        for (size_t b = 0; b < intervals; b++) {
            sum += m->link_bins[i * (k + 1) + b];
            double t = b < k ? every * (b + 1) : r->sim_time;
            r->link_samples[b * n + i] = (struct ks_link_sample){.t = t < r->sim_time ? t : r->sim_time,
                                                                 .link = (uint32_t)i, .bytes = sum};
        }
    }
    r->n_link_samples = r->cap_link_samples = n * intervals;
}

// ---- setup -------------------------------------------------------------------

// Nodes of the disaggregated prefill pool (gpus_per_node GPUs each), 0 when colocated.
static uint32_t pool_nodes(const struct ks_scenario *s)
{
    if (s->prefill.mode != KS_PREFILL_DISAGGREGATED)
        return 0;
    return (s->prefill.gpus + s->platform.gpus_per_node - 1) / s->platform.gpus_per_node;
}

static void platform_of(const struct ks_scenario *s, struct ks_platform_params *p)
{
    const struct ks_scenario_platform *pl = &s->platform;
    *p = (struct ks_platform_params){
        .nodes = pl->nodes,
        .gpus_per_node = pl->gpus_per_node,
        .gpus_per_switch = pl->gpus_per_switch < pl->gpus_per_node ? pl->gpus_per_switch : pl->gpus_per_node,
        .gpu_flops = pl->flops,
        .cpu_flops = 1e12, // NOTE: host compute is not modelled; any positive speed will do
        .pcie_bw = pl->pcie_bw,
        .pcie_lat = pl->pcie_lat,
        .uplink_bw = pl->pcie_bw, // a switch uplink as wide as one GPU's link: the GPUs behind it share it
        .uplink_lat = 0,
        .dram_bw = pl->dram_bw,
        .nvlink_bw = pl->nvlink_bw,
        .nvlink_lat = 0,
        .ssds_per_node = s->cache.l3 == KS_L3_SSD ? pl->ssd.count : 0,
        .ssd_read_bw = pl->ssd.read_bw,
        .ssd_write_bw = pl->ssd.write_bw,
        .ssd_lat = pl->ssd.lat,
        .nic_bw = pl->network.bw,
        .nic_lat = pl->network.lat,
        .core_bw = pl->network.bw * (pl->nodes + pool_nodes(s)), // non-blocking core
        .core_lat = 0,
        .remote = pl->remote.present && s->cache.l3 == KS_L3_REMOTE,
        .remote_bw = pl->remote.bw,
        .remote_lat = pl->remote.lat,
        .prefill_pool = pool_nodes(s) > 0,
        .prefill_bw = pl->network.bw * pool_nodes(s), // one NIC per node of the pool
        .prefill_lat = pl->network.lat,
    };
}

static void spawn(const char *name, sg_host_t host, void (*fn)(int, char **), void *arg, int daemon)
{
    char ptr[32];
    snprintf(ptr, sizeof ptr, "%llx", (unsigned long long)(uintptr_t)arg);
    char *argv[] = {(char *)name, ptr}; // copied by SimGrid
    sg_actor_t a = sg_actor_init(name, host);
    if (daemon)
        sg_actor_daemonize(a);
    sg_actor_start(a, fn, 2, argv);
}

int ks_engine_run(const struct ks_scenario *s, struct ks_run_result *r, char *err, size_t len)
{
    memset(r, 0, sizeof *r);
    if (initialised) {
        snprintf(err, len, "one simulation per process");
        return KS_ESTATE;
    }
    if (s->cache.evict == KS_EVICT_BELADY && s->sparse.policy != KS_SPARSE_TRACE) {
        snprintf(err, len, "cache.evict: belady needs the future accesses, which only a replayed trace knows "
                           "(sparse.policy = \"trace\")");
        return KS_EINVAL;
    }
    struct sim m = {.s = s, .r = r};
    memset(m.prefix_home, 0xff, sizeof m.prefix_home);
    if (ks_run_result_init(r) != KS_OK) {
        snprintf(err, len, "out of memory");
        return KS_ENOMEM;
    }
    struct ks_cache_params cp;
    int st = ks_step_size(s, &cp, &m.z, err, len);
    if (st != KS_OK) {
        ks_run_result_fini(r);
        return st;
    }
    if (!(m.wl = ks_workload_new(s, err, len))) {
        ks_run_result_fini(r);
        return KS_EINVAL;
    }
    if (!(m.sparse = ks_selection_new(s, err, len))) {
        ks_workload_free(m.wl);
        ks_run_result_fini(r);
        return KS_EINVAL;
    }
    int lua_evict = s->cache.evict == KS_EVICT_CALLBACK;
    if ((lua_evict || s->cache.prefetch_lua) &&
        ks_luapolicy_init(&m.lua, s->file, lua_evict ? "cache.evict" : NULL,
                          s->cache.prefetch_lua ? "cache.prefetch_window" : NULL, err, len) != KS_OK) {
        ks_selection_free(m.sparse);
        ks_workload_free(m.wl);
        ks_run_result_fini(r);
        return KS_EINVAL;
    }
    if (lua_evict) {
        cp.evict_fn = ks_luapolicy_evict;
        cp.evict_ud = &m.lua;
    }
    if (s->cache.prefetch_lua) {
        cp.prefetch_fn = ks_luapolicy_prefetch;
        cp.prefetch_ud = &m.lua;
    }
    initialised = 1;
    int argc = 4;
    char *argv[] = {"kvstrata", KS_PLATFORM_CFG_MODEL, KS_PLATFORM_CFG_CROSS, "--log=root.thres:critical", NULL};
    simgrid_init(&argc, argv);
    struct ks_platform_params pp;
    platform_of(s, &pp);
    if ((st = ks_platform_load(&pp, err, len)) != KS_OK) {
        ks_workload_free(m.wl);
        ks_selection_free(m.sparse);
        ks_luapolicy_fini(&m.lua);
        ks_run_result_fini(r);
        return st;
    }
    m.n_links = sg_link_count();
    m.links = sg_link_list();
    m.link_bytes = calloc(m.n_links ? m.n_links : 1, sizeof *m.link_bytes);
    m.link_bins = calloc((m.n_links ? m.n_links : 1) * (KS_RUN_LINK_SAMPLES + 1), sizeof *m.link_bins);
    if (!m.links || !m.link_bytes || !m.link_bins)
        st = KS_ENOMEM;
    for (size_t i = 0; st == KS_OK && i < m.n_links; i++)
        sg_link_set_data(m.links[i], (void *)(uintptr_t)(i + 1));
    m.n_gpu = s->platform.nodes * s->platform.gpus_per_node;
    m.gpu = calloc(m.n_gpu, sizeof *m.gpu);
    m.mu = sg_mutex_init();
    m.slot = sg_cond_init();
    m.pool_work = sg_cond_init();
    m.pool_host = pp.prefill_pool ? sg_host_by_name(KS_PLATFORM_PREFILL) : NULL;
    char name[32];
    for (uint32_t i = 0; st == KS_OK && i < m.n_gpu; i++) {
        struct gpu *g = &m.gpu[i];
        g->sim = &m;
        g->node = i / s->platform.gpus_per_node;
        g->index = i;
        ks_platform_gpu(name, sizeof name, g->node, i % s->platform.gpus_per_node);
        g->host = sg_host_by_name(name);
        ks_platform_cpu(name, sizeof name, g->node);
        g->cpu = sg_host_by_name(name);
        if (pp.ssds_per_node) {
            ks_platform_ssd(name, sizeof name, g->node, (i % s->platform.gpus_per_node) % pp.ssds_per_node);
            g->l3 = sg_host_by_name(name);
        } else {
            g->l3 = pp.remote ? sg_host_by_name(KS_PLATFORM_REMOTE) : g->cpu;
        }
        cp.seed = s->seed + i;
        if (!(g->cache = ks_cache_new(&cp, err, len))) {
            st = KS_EINVAL;
            break;
        }
        struct ks_step_ops ops = {
            .ctx = g, .now = op_now, .compute = op_compute, .idle = op_idle, .iteration = op_iteration,
            .finished = finished, .queue = op_queue, .wait_layer = op_wait_layer, .layers = op_layers,
            .wait_all = op_wait_all};
        if (ks_step_init(&g->d, &(struct ks_step_params){
                .s = s, .cache = g->cache, .sparse = m.sparse, .r = r, .lua = &m.lua, .z = m.z, .gpu = i,
                .ops = ops}) != KS_OK) {
            snprintf(err, len, "out of memory for GPU %u's step buffers", i);
            st = KS_ENOMEM;
        }
        g->d_ok = 1;
        if (st != KS_OK)
            break;
        g->mu = sg_mutex_init();
        g->work = sg_cond_init();
        g->done = sg_cond_init();
        g->arrive = sg_cond_init();
    }
    struct timespec w0, w1;
    clock_gettime(CLOCK_MONOTONIC, &w0);
    if (st == KS_OK) {
        for (uint32_t i = 0; i < m.n_gpu; i++) {
            struct gpu *g = &m.gpu[i];
            spawn("decode", g->host, decode, g, 0);
            for (int l = 0; l < KS_STEP_LANES; l++)
                spawn("lane", g->host, lane, g, 1);
        }
        m.decoders = m.n_gpu;
        for (uint32_t i = 0; m.pool_host && i < s->prefill.gpus; i++)
            spawn("prefill", m.pool_host, prefill_worker, &m, 1);
        spawn("router", m.gpu[0].cpu, router, &m, 0);
        spawn("closer", m.gpu[0].cpu, closer, &m, 1);
        int tty = isatty(STDERR_FILENO);
        if (tty)
            spawn("progress", m.gpu[0].cpu, progress, &m, 1);
        simgrid_run();
        if (tty)
            fputs("\r\033[K", stderr);
        r->sim_time = simgrid_get_clock();
        link_records(&m, r);
    }
    clock_gettime(CLOCK_MONOTONIC, &w1);
    r->wall_s = (double)(w1.tv_sec - w0.tv_sec) + (double)(w1.tv_nsec - w0.tv_nsec) / 1e9;
    r->tiers = calloc((size_t)m.n_gpu * KS_TIERS, sizeof *r->tiers);
    for (uint32_t i = 0; i < m.n_gpu; i++) {
        struct gpu *g = &m.gpu[i];
        if (g->failed && st == KS_OK)
            st = KS_EINVAL;
        if (g->cache)
            ks_run_result_add_tiers(r, g->cache, i, m.z.block_bytes);
        ks_cache_free(g->cache);
        if (g->mu) {
            sg_mutex_destroy(g->mu);
            sg_cond_destroy(g->work);
            sg_cond_destroy(g->done);
            sg_cond_destroy(g->arrive);
        }
        for (unsigned a = 0; a <= KS_TIERS; a++)
            for (unsigned b = 0; b < KS_TIERS; b++)
                free(g->routes[a][b].link);
        free(g->jobs);
        if (g->d_ok)
            ks_step_fini(&g->d);
    }
    r->unplanned += r->cache.unplanned;
    free(m.gpu);
    if (m.mu) {
        sg_mutex_destroy(m.mu);
        sg_cond_destroy(m.slot);
        sg_cond_destroy(m.pool_work);
    }
    free(m.pool);
    free(m.sess);
    free(m.links);
    free(m.link_bytes);
    free(m.link_bins);
    ks_workload_free(m.wl);
    ks_selection_free(m.sparse);
    ks_luapolicy_fini(&m.lua);
    if (st == KS_OK && m.err[0])
        st = KS_EINVAL;
    if (st != KS_OK && err[0] == '\0')
        snprintf(err, len, "%s", m.err[0] ? m.err : ks_status_str(st));
    return st;
}
