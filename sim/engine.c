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

#include "active.h"
#include "luapolicy.h"
#include "platform.h"
#include "rng.h"
#include "sparse.h"
#include "workload.h"

// A request waiting for admission on its GPU.
struct queued {
    struct ks_request_spec spec;
    double prefilled; // seconds: when the prefill pool produced its first token; < 0: colocated prefill
};

// The links a transfer crosses, as indices into sg_link_list().
struct route {
    uint32_t n;
    uint32_t *link; // NULL: not looked up yet
};
#define POOL KS_TIERS // route source: the prefill pool

// A selected block that was not in L1 when accessed (ks_cache_access).
struct miss {
    uint32_t req, layer, block;
};

// A block of one of the step's batches, and where the batch takes it.
struct moving {
    uint32_t id;
    unsigned dst;
};

struct gpu {
    struct sim *sim;
    uint32_t node, index; // index: across the cluster
    sg_host_t host, cpu, l3;
    struct ks_cache *cache;
    struct ks_rng rng;
    sg_mutex_t mu;
    sg_cond_t work, done, arrive;
    struct ks_engine_job *jobs;
    uint32_t n_jobs, cap_jobs;
    struct queued *pending;          // released to this GPU, not admitted yet
    uint32_t n_pending, cap_pending;
    uint32_t incoming;               // routed here, still in the prefill pool
    uint64_t l1_version;             // L1 placements + removals when the pointer table was last built
    struct route routes[KS_TIERS + 1][KS_TIERS]; // [source tier or POOL][destination tier]
    struct ks_active_set act; // the requests admitted here
    struct miss *miss;           // this step's accesses that missed L1
    uint32_t n_miss, cap_miss;
    struct moving *moving;       // this step's batches' blocks, by id (built when needed)
    uint32_t n_moving, cap_moving;
    uint32_t (*outside)[KS_TIERS]; // [layers]: this step's reads outside L1, per layer and tier
    uint32_t step;
    double next_sample;          // simulated time of the next /steps record
    double last_step, last_stall; // seconds
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
    double *link_bins; // [n_links][KS_ENGINE_LINK_SAMPLES + 1] bytes carried in each sampling interval
    struct ks_engine_sizing z; // block sizes, admission bound, L1 pages
    struct ks_sparse *sparse; // the sparse-attention policy
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

static uint32_t blocks_of(const struct sim *m, uint64_t tokens)
{
    return (uint32_t)((tokens + m->s->cache.block_size - 1) / m->s->cache.block_size);
}

static void fail(struct sim *m, const char *msg, int st)
{
    if (!m->err[0])
        snprintf(m->err, sizeof m->err, "%s: %s", msg, ks_status_str(st));
}

// Sends bytes from one host to another and adds them to every link of the
// route (looked up once per GPU, source and destination).
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
    size_t k = KS_ENGINE_LINK_SAMPLES;
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

// ---- records ----------------------------------------------------------------

void ks_run_result_add_request(struct ks_run_result *r, const struct ks_request_record *rec)
{
    if (r->n_rec == r->cap_rec) {
        size_t cap = r->cap_rec ? 2 * r->cap_rec : 1024;
        struct ks_request_record *p = realloc(r->rec, cap * sizeof *p);
        if (!p)
            return;
        r->rec = p;
        r->cap_rec = cap;
    }
    r->rec[r->n_rec++] = *rec;
}

struct ks_step_record *ks_run_result_add_step(struct ks_run_result *r, const struct ks_cache *c)
{
    if (r->n_samples == r->cap_samples) {
        size_t cap = r->cap_samples ? 2 * r->cap_samples : 4096;
        struct ks_step_record *p = realloc(r->samples, cap * sizeof *p);
        if (!p)
            return NULL;
        r->samples = p;
        r->cap_samples = cap;
    }
    const struct ks_cache_stats *cs = ks_cache_stats(c);
    struct ks_step_record *x = &r->samples[r->n_samples++];
    *x = (struct ks_step_record){0};
    for (unsigned t = 0; t < KS_TIERS; t++) {
        struct ks_tier_view v;
        ks_cache_tier_view(c, t, &v);
        x->occupancy[t] = v.used;
        x->found[t] = cs->found[t];
        for (unsigned u = 0; u < KS_TIERS; u++) {
            if (u < t)
                x->bytes_up += cs->mig_bytes[t][u];
            else if (u > t)
                x->bytes_down += cs->mig_bytes[t][u];
        }
    }
    return x;
}

// ---- migration lanes ---------------------------------------------------------

static sg_host_t tier_host(const struct gpu *g, unsigned tier)
{
    return tier == KS_L1 ? g->host : tier == KS_L2 ? g->cpu : g->l3;
}

// Whether the batch `batch_id` is still on its way.
static int job_unlanded(const struct ks_engine_job *jobs, uint32_t n, uint32_t batch_id)
{
    for (uint32_t i = 0; i < n; i++)
        if (jobs[i].b->id == batch_id)
            return !jobs[i].landed;
    return 0;
}

int ks_engine_next_job(const struct ks_engine_job *jobs, uint32_t n)
{
    int best = -1;
    for (uint32_t i = 0; i < n; i++) {
        const struct ks_engine_job *j = &jobs[i];
        if (j->running || j->landed || (j->b->after != KS_NONE && job_unlanded(jobs, n, j->b->after)))
            continue;
        if (best < 0 || j->b->klass < jobs[best].b->klass)
            best = (int)i;
    }
    return best;
}

int ks_engine_needed_unlanded(const struct ks_engine_job *jobs, uint32_t n, uint32_t layer)
{
    for (uint32_t i = 0; i < n; i++)
        if (jobs[i].needed && !jobs[i].landed && jobs[i].layer <= layer)
            return 1;
    return 0;
}

int ks_engine_all_landed(const struct ks_engine_job *jobs, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++)
        if (!jobs[i].landed)
            return 0;
    return 1;
}

int ks_engine_l1_changed(const struct ks_cache *c, uint64_t *version)
{
    struct ks_tier_view v;
    ks_cache_tier_view(c, KS_L1, &v);
    uint64_t now = v.allocs + v.frees + v.mig_in + v.mig_out;
    int changed = now != *version;
    *version = now;
    return changed;
}

struct ks_engine_job ks_engine_job_of(const struct ks_cache *c, struct ks_batch *b)
{
    int needed = b->klass == KS_CLASS_MISS;
    uint32_t l = UINT32_MAX;
    for (uint32_t i = 0; needed && i < b->n; i++) {
        if (b->block_klass[i] != KS_CLASS_MISS)
            continue; // a prefetch riding along: this step reads it in no layer
        uint32_t g = ks_cache_block_group(c, b->blocks[i]);
        if (g < l)
            l = g;
    }
    return (struct ks_engine_job){.b = b, .needed = (uint8_t)needed, .layer = needed ? l : 0};
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
        while ((k = ks_engine_next_job(g->jobs, g->n_jobs)) < 0) {
            sg_cond_wait(g->work, g->mu);
            waited = 1;
        }
        if (waited && wake->n) {
            // a lane that slept takes this long to run once signalled; a
            // lane already awake may take the job meanwhile
            sg_mutex_unlock(g->mu);
            sg_actor_sleep_for(ks_host_wake_time(wake, simgrid_get_clock() - idle_from));
            sg_mutex_lock(g->mu);
            if ((k = ks_engine_next_job(g->jobs, g->n_jobs)) < 0) {
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
                g->jobs[i].landed = 1; // decode confirms it at the step's end
        sg_cond_notify_all(g->done);
        sg_cond_notify_all(g->work);
        sg_mutex_unlock(g->mu);
    }
}

// Hands a request to its GPU's admission queue. KS_OK or KS_ENOMEM.
static int push_pending(struct gpu *g, const struct ks_request_spec *spec, double prefilled)
{
    if (g->n_pending == g->cap_pending) {
        uint32_t cap = g->cap_pending ? 2 * g->cap_pending : 64;
        struct queued *p = realloc(g->pending, cap * sizeof *p);
        if (!p)
            return KS_ENOMEM;
        g->pending = p;
        g->cap_pending = cap;
    }
    g->pending[g->n_pending++] = (struct queued){.spec = *spec, .prefilled = prefilled};
    sg_cond_notify_all(g->arrive);
    return KS_OK;
}

// Requests on a GPU or bound for it: what the load-aware routers compare.
static uint32_t load_of(const struct gpu *g)
{
    return g->act.n + g->n_pending + g->incoming;
}

// ---- prefill -----------------------------------------------------------------

// Seconds to prefill n prompt tokens after c tokens whose KV exists.
static double prefill_time(const struct ks_scenario *s, double n, double c)
{
    double params = (double)s->model.weight_bytes / 2.0; // 16-bit weights
    double attn = 4.0 * s->model.layers * (double)s->model.q_heads * s->model.head_dim * (n * c + n * (n + 1) / 2);
    return (2.0 * params * n + attn) / (s->platform.flops * s->platform.prefill_efficiency);
}

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
        double t = prefill_time(m->s, in.spec.prompt_tokens, 0);
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

// ---- decode ------------------------------------------------------------------

// Belady: the step at which each prompt block is first read, from the trace.
// Its first decode step is taken as the GPU's next step (a colocated prefill
// may delay it by a few iterations: an approximation that keeps the order of
// the request's own blocks exact).
static void first_uses(struct gpu *g, struct ks_active *a)
{
    const struct ks_scenario *s = g->sim->s;
    uint32_t nb = ks_cache_req_len(g->cache, a->req), steps = a->spec.output_tokens - 1;
    for (uint32_t l = 0; l < s->model.layers; l++)
        for (uint32_t b = 0; b < nb; b++) {
            uint32_t f;
            if (ks_sparse_first_use(a->sr, l, b, &f) == 0 && f != KS_SPARSE_NEVER && f < steps)
                ks_cache_set_next_use(g->cache, a->req, l, b, g->step + f);
        }
}

// Admits the oldest pending request if the GPU can hold its share (one per
// iteration). Its prompt's KV is placed now: in L1 for a colocated prefill,
// which then runs chunk by chunk (ks_active_prefill_chunk), in L2 (host
// DRAM) where the prefill pool sent it.
static void admit(struct gpu *g)
{
    struct sim *m = g->sim;
    if (g->n_pending == 0)
        return;
    const struct queued *q = &g->pending[0];
    const struct ks_request_spec *sp = &q->spec;
    int pooled = q->prefilled >= 0; // prefilled by the pool: the first token exists
    struct ks_active *a;
    int st = ks_active_admit(&g->act, sp, simgrid_get_clock(), pooled ? KS_L2 : KS_L1, &a);
    if (st != KS_OK) {
        fail(m, g->act.why, st);
        g->failed = 1;
        return;
    }
    if (!a)
        return; // FIFO: later requests wait behind this one
    if (m->s->cache.evict == KS_EVICT_BELADY)
        first_uses(g, a);
    if (pooled) {
        // the pool produced the first token; the next token's interval
        // counts from admission (the wait for room here shows in
        // /requests as admitted - first_token)
        a->generated = 1;
        a->first_token = q->prefilled;
        a->last_token = a->admitted;
        a->prefilled = sp->prompt_tokens;
        ks_hist_add(m->r->ttft, q->prefilled - sp->arrival);
        m->r->tokens++;
        a->ctx++; // that token's K and V join the first decode step
        ks_active_grow(&g->act, a);
        if (a->generated >= sp->output_tokens)
            ks_active_finish(&g->act, g->act.n - 1);
    }
    memmove(g->pending, g->pending + 1, (g->n_pending - 1) * sizeof *g->pending);
    g->n_pending--;
}

// A request finished (ks_active_set's hook): its session's next turn may go,
// and a router waiting for a slot may release one.
static void finished(void *ctx, struct ks_active *a)
{
    struct gpu *g = ctx;
    struct sim *m = g->sim;
    if (m->s->workload.sessions.turns > 1)
        turn_finished(m, &a->spec, a->last_token);
    m->in_flight--;
    sg_cond_notify_all(m->slot);
}

// A /steps record when its sampling time has come.
static void sample(struct gpu *g)
{
    struct sim *m = g->sim;
    struct ks_run_result *r = m->r;
    double now = simgrid_get_clock();
    if (now < g->next_sample)
        return;
    double every = m->s->duration / KS_ENGINE_SAMPLES;
    while (g->next_sample <= now)
        g->next_sample += every;
    struct ks_step_record *x = ks_run_result_add_step(r, g->cache);
    if (!x)
        return;
    x->t = now;
    x->gpu = g->index;
    x->batch = g->act.n;
    x->pending = g->n_pending;
    x->step_time = g->last_step;
    x->stall = g->last_stall;
}

// The decode loop waited since `since` and a landing signalled it: it runs
// again after the host's wake-up time for that idleness (counted as stall).
static void wake_up(struct gpu *g, double since)
{
    const struct ks_host_wake *w = &g->sim->s->platform.host_wake;
    if (w->n)
        sg_actor_sleep_for(ks_host_wake_time(w, simgrid_get_clock() - since));
}

// Whether a batch that layer `layer` (or an earlier one) needs is in flight.
static int has_needed(const struct gpu *g, uint32_t layer)
{
    return ks_engine_needed_unlanded(g->jobs, g->n_jobs, layer);
}

// Seconds of one layer of the measured attention kernel for one sequence
// selecting k blocks in decode step `step` (0-based): a replayed run's speed
// of that step when there is one, else the table's time at k (linear between
// points, the end segments extended, never below 0), shared by the table's
// batch.
static double kernel_time(const struct ks_kernel_time *kt, uint32_t step, uint32_t k)
{
    if (step < kt->n_steps && isfinite(kt->steps[step]))
        return kt->steps[step] * k;
    uint32_t i = 1;
    if (kt->n == 1)
        return kt->seconds[0] * k / kt->blocks[0] / kt->batch;
    while (i + 1 < kt->n && kt->blocks[i] < k)
        i++;
    double x0 = kt->blocks[i - 1], x1 = kt->blocks[i], y0 = kt->seconds[i - 1], y1 = kt->seconds[i];
    double t = y0 + (y1 - y0) * ((double)k - x0) / (x1 - x0);
    return t > 0 ? t / kt->batch : 0;
}

// Notes the accesses of acc[0..n) that missed L1 (where[], from
// ks_cache_access). KS_OK or KS_ENOMEM.
static int note_misses(struct gpu *g, uint32_t req, uint32_t layer, const struct ks_access *acc, uint32_t n,
                       const uint8_t *where)
{
    for (uint32_t j = 0; j < n; j++) {
        if (where[j] == KS_AT_L1)
            continue;
        if (g->n_miss == g->cap_miss) {
            uint32_t cap = g->cap_miss ? 2 * g->cap_miss : 256;
            struct miss *p = realloc(g->miss, cap * sizeof *p);
            if (!p)
                return KS_ENOMEM;
            g->miss = p;
            g->cap_miss = cap;
        }
        g->miss[g->n_miss++] = (struct miss){.req = req, .layer = layer, .block = acc[j].block};
    }
    return KS_OK;
}

static int cmp_moving(const void *a, const void *b)
{
    uint32_t x = ((const struct moving *)a)->id, y = ((const struct moving *)b)->id;
    return x < y ? -1 : x > y;
}

// Where the step's batches take block id (KS_TIERS: in none of them). The
// sorted list of their blocks is built on the first call of a step.
static unsigned moving_to(struct gpu *g, uint32_t id)
{
    if (g->n_moving == 0) {
        uint32_t n = 0;
        for (uint32_t i = 0; i < g->n_jobs; i++)
            n += g->jobs[i].b->n;
        if (n > g->cap_moving) {
            struct moving *p = realloc(g->moving, n * sizeof *p);
            if (!p)
                return KS_TIERS;
            g->moving = p;
            g->cap_moving = n;
        }
        for (uint32_t i = 0; i < g->n_jobs; i++) {
            const struct ks_batch *b = g->jobs[i].b;
            for (uint32_t j = 0; j < b->n; j++)
                g->moving[g->n_moving++] = (struct moving){.id = b->blocks[j], .dst = b->dst};
        }
        qsort(g->moving, g->n_moving, sizeof *g->moving, cmp_moving);
    }
    struct moving key = {.id = id}, *hit = bsearch(&key, g->moving, g->n_moving, sizeof key, cmp_moving);
    return hit ? hit->dst : KS_TIERS;
}

// Counts, per layer and tier, the selected blocks the kernel must read
// outside L1 this step: the misses whose promotion found no room (still in
// L2 or L3 once the step's batches are planned), and blocks that a batch
// takes elsewhere than L1, read where it lands. The runtime reads each into
// a scratch page before its layer's kernel (kernels/runtime.c, page_for).
static void count_outside(struct gpu *g)
{
    struct ks_cache *c = g->cache;
    memset(g->outside, 0, g->sim->s->model.layers * sizeof *g->outside);
    g->n_moving = 0;
    for (uint32_t i = 0; i < g->n_miss; i++) {
        const struct miss *x = &g->miss[i];
        struct ks_loc loc;
        if (ks_cache_locate(c, x->req, x->layer, x->block, &loc) != KS_OK)
            continue;
        unsigned tier = loc.tier;
        if (loc.state != KS_BLK_RESIDENT) {
            unsigned dst = moving_to(g, loc.id);
            if (dst < KS_TIERS)
                tier = dst;
        }
        if (tier != KS_L1) {
            g->outside[x->layer][tier]++;
            g->sim->r->outside_reads++;
        }
    }
    g->n_miss = 0;
}

// Reads layers [from, from + n)'s blocks outside L1, one after the other,
// each over its tier's route to the GPU (a copy's overhead, and an SSD
// request's op time as in a batch). Returns the seconds it took.
static double read_outside(struct gpu *g, uint32_t from, uint32_t n)
{
    struct sim *m = g->sim;
    const struct ks_scenario *s = m->s;
    double t0 = simgrid_get_clock();
    for (uint32_t l = from; l < from + n; l++)
        for (unsigned tier = KS_L2; tier < KS_TIERS; tier++)
            for (uint32_t i = 0; i < g->outside[l][tier]; i++) {
                if (s->platform.copy_overhead > 0)
                    sg_actor_sleep_for(s->platform.copy_overhead);
                double extra = tier == KS_L3 && s->cache.l3 == KS_L3_SSD
                                   ? s->platform.ssd.read_op_time * s->platform.ssd.read_bw
                                   : 0;
                transfer(m, &g->routes[tier][KS_L1], tier_host(g, tier), g->host, (double)m->z.block_bytes[tier],
                         extra);
            }
    return simgrid_get_clock() - t0;
}

// A decode step: accesses, migrations, stall, compute. Returns the step's
// KV bytes read, or -1 on failure.
static int decode_step(struct gpu *g, uint32_t *sel, float *mass, uint32_t *dist, struct ks_access *acc,
                       uint8_t *where)
{
    struct sim *m = g->sim;
    const struct ks_scenario *s = m->s;
    struct ks_cache *c = g->cache;
    uint32_t now = g->step;
    int st = ks_cache_step(c, g->step++);
    int belady = s->cache.evict == KS_EVICT_BELADY;
    int per_layer = ks_sparse_per_layer(m->sparse);
    // kv_bytes: KV the selections read; attn: measured kernel seconds, all
    // layers (a trace's own, else the profile's table); kv_hbm: the KV bytes
    // of the selections no measured time covers, timed at HBM bandwidth
    double kv_bytes = 0, kv_hbm = 0, attn = 0;
    const struct ks_kernel_time *kt = &s->platform.kernel_time;
    for (uint32_t i = 0; st == KS_OK && i < g->act.n; i++) {
        struct ks_active *a = &g->act.a[i];
        if (a->generated == 0)
            continue; // still in prefill
        uint32_t nb = blocks_of(m, a->ctx), step = a->generated - 1; // the request's decode step
        uint32_t k = 0;
        for (uint32_t l = 0; st == KS_OK && l < s->model.layers; l++) {
            if (l == 0 || per_layer) {
                k = ks_sparse_select(a->sr, step, l, nb, &g->rng, sel, mass);
                if (k == 0 && ks_sparse_error(a->sr)[0]) {
                    fail(m, ks_sparse_error(a->sr), KS_EINVAL);
                    return -1;
                }
                uint64_t tokens = 0;
                if (belady) // the trace knows when each block is read again
                    ks_sparse_next_uses(a->sr, dist);
                for (uint32_t j = 0; j < k; j++) {
                    uint32_t next = KS_NONE;
                    if (belady && dist[j] != KS_SPARSE_NEVER && step + dist[j] < a->spec.output_tokens - 1)
                        next = now + dist[j];
                    acc[j] = (struct ks_access){.block = sel[j], .mass = mass[j], .next = next};
                    uint64_t end = (uint64_t)(sel[j] + 1) * s->cache.block_size;
                    tokens += (end <= a->ctx ? end : a->ctx) - (uint64_t)sel[j] * s->cache.block_size;
                }
                // KV bytes this selection reads: in every layer, or in this one
                double bytes = (double)tokens * (double)m->z.token_bytes / (per_layer ? s->model.layers : 1);
                // a replayed trace's kernel time where the scenario asks for it (NAN: none)
                double rec = s->sparse.kernel_time == KS_KERNEL_TIME_TRACE ? ks_sparse_kernel_time(a->sr) : NAN;
                kv_bytes += bytes;
                if (rec >= 0)
                    attn += rec * (per_layer ? 1 : s->model.layers);
                else if (kt->n)
                    attn += kernel_time(kt, now - 1, k) * (per_layer ? 1 : s->model.layers);
                else
                    kv_hbm += bytes;
            }
            st = ks_cache_access(c, a->req, l, acc, k, where, NULL);
            if (st == KS_OK)
                st = note_misses(g, a->req, l, acc, k, where);
        }
    }
    // room in L1 for the blocks this step's tokens may open (one per request and layer)
    ks_cache_set_reserve(c, ks_engine_reserve(s, &m->z, g->act.n));
    double step_start = simgrid_get_clock(), stall_before = m->r->stall;
    struct ks_plan plan;
    uint64_t budget = ks_engine_budget(s, &m->z, kv_bytes);
    if (st == KS_OK)
        st = ks_cache_plan(c, budget, &plan);
    if (st == KS_OK && m->lua.failed) {
        char msg[600];
        snprintf(msg, sizeof msg, "cache.%s (Lua): %s", m->lua.failed, m->lua.err);
        fail(m, msg, KS_EINVAL);
        return -1;
    }
    if (st != KS_OK) {
        fail(m, "a decode step", st);
        return -1;
    }
    for (uint32_t i = 0; i < plan.n; i++) {
        if (g->n_jobs == g->cap_jobs) {
            uint32_t cap = g->cap_jobs ? 2 * g->cap_jobs : 64;
            struct ks_engine_job *p = realloc(g->jobs, cap * sizeof *p);
            if (!p) {
                fail(m, "queueing a migration batch", KS_ENOMEM);
                return -1;
            }
            g->jobs = p;
            g->cap_jobs = cap;
        }
        g->jobs[g->n_jobs++] = ks_engine_job_of(c, plan.batch[i]);
    }
    if (plan.n)
        sg_cond_notify_all(g->work);
    count_outside(g);
    // host work while the copies run: scheduling the batch, and rebuilding
    // the resident-block pointer table when L1's mapping changed
    double host = s->platform.sched_overhead;
    if (ks_engine_l1_changed(c, &g->l1_version)) {
        host += s->platform.table_rebuild;
        m->r->table_rebuilds++;
    }
    if (host > 0)
        sg_actor_sleep_for(host);
    m->r->host_time += host;
    // layer by layer: a layer waits only for the batches carrying its own
    // missed blocks (or an earlier layer's); copies for later layers overlap
    // the compute of earlier ones
    // a layer: its weights over HBM, plus per request the measured attention
    // kernel (the trace's time for that record, else the profile's table)
    // or, where neither exists, its selected KV over HBM
    // NOTE: with no measured time kv_hbm = kv_bytes and attn = 0, and with the
    // table alone kv_hbm = 0: both give the earlier formulas bit for bit
    double layer_time =
        (((double)s->model.weight_bytes + kv_hbm) / s->platform.hbm_bw + attn) / s->model.layers;
    uint32_t done = 0;
    while (done < s->model.layers) {
        double t0 = simgrid_get_clock();
        sg_mutex_lock(g->mu);
        int waited = 0;
        while (has_needed(g, done) && !g->failed) {
            sg_cond_wait(g->done, g->mu);
            waited = 1;
        }
        int more = has_needed(g, UINT32_MAX - 1);
        sg_mutex_unlock(g->mu);
        if (waited)
            wake_up(g, t0);
        m->r->stall += simgrid_get_clock() - t0;
        // no needed copy left in flight: the remaining layers run in one go
        uint32_t run = 1;
        if (!more)
            run = s->model.layers - done;
        else
            while (done + run < s->model.layers && !has_needed(g, done + run))
                run++;
        // the run's blocks outside L1, then its layers
        m->r->busy += read_outside(g, done, run);
        sg_actor_sleep_for(layer_time * run);
        done += run;
    }
    // the step ends when all its batches have landed (prefetches and
    // demotions included, waited for as stall); they are confirmed then, in
    // plan order, so the next step's accesses and this step's new blocks
    // meet a mapping (pages included) that does not depend on the copies'
    // timing: the runtime (kernels/runtime.h) does the same, and the two
    // make the same decisions
    double t_end = simgrid_get_clock();
    sg_mutex_lock(g->mu);
    int waited = 0;
    while (!ks_engine_all_landed(g->jobs, g->n_jobs) && !g->failed) {
        sg_cond_wait(g->done, g->mu);
        waited = 1;
    }
    for (uint32_t i = 0; i < g->n_jobs && !g->failed; i++)
        if ((st = ks_cache_confirm(c, g->jobs[i].b)) != KS_OK) {
            fail(m, "confirming a migration batch", st);
            g->failed = 1;
        }
    g->n_jobs = 0;
    sg_mutex_unlock(g->mu);
    if (waited)
        wake_up(g, t_end);
    m->r->stall += simgrid_get_clock() - t_end;
    if (g->failed)
        return -1;
    m->r->busy += layer_time * s->model.layers;
    m->r->steps++;
    g->last_step = simgrid_get_clock() - step_start;
    g->last_stall = m->r->stall - stall_before;
    return 0;
}

static void decode(int argc, char **argv)
{
    (void)argc;
    struct gpu *g = (struct gpu *)(uintptr_t)strtoull(argv[1], NULL, 16);
    struct sim *m = g->sim;
    const struct ks_scenario *s = m->s;
    uint32_t cap = (uint32_t)fmin((double)blocks_of(m, s->model.max_context) + 1, 1u << 24);
    uint32_t *sel = malloc(cap * sizeof *sel);
    float *mass = malloc(cap * sizeof *mass);
    uint32_t *dist = malloc(cap * sizeof *dist);
    struct ks_access *acc = malloc(cap * sizeof *acc);
    uint8_t *where = malloc(cap);
    g->outside = calloc(s->model.layers, sizeof *g->outside);
    if (!sel || !mass || !dist || !acc || !where || !g->outside) {
        fail(m, "decode buffers", KS_ENOMEM);
        g->failed = 1;
    }
    while (!g->failed && simgrid_get_clock() < s->duration) {
        admit(g);
        if (g->act.n == 0) {
            if (m->closing || (m->router_done && m->waiting == 0 && g->n_pending == 0 && g->incoming == 0))
                break;
            // NOTE: a plain wait: sg_cond_wait_for never returned in SimGrid 3.32
            // here (the run deadlocked at time 0); the router wakes every
            // decoder when it stops.
            sg_mutex_lock(g->mu);
            while (g->n_pending == 0 && !m->closing && (!m->router_done || g->incoming > 0 || m->waiting > 0))
                sg_cond_wait(g->arrive, g->mu);
            sg_mutex_unlock(g->mu);
            continue;
        }
        // one iteration: a chunk of prefill, then a decode step of the
        // requests past their prefill (both hold the GPU: their times add)
        int decoding = ks_active_decoding(&g->act);
        double prefill = ks_active_prefill_chunk(&g->act, prefill_time);
        if (prefill > 0) {
            if (simgrid_get_clock() + prefill > s->duration) {
                // the run ends during this prefill: its work past the end is not counted
                double left = s->duration - simgrid_get_clock();
                sg_actor_sleep_until(s->duration);
                m->r->busy += left;
                m->r->prefill_time += left;
                break;
            }
            sg_actor_sleep_for(prefill);
            m->r->busy += prefill;
            m->r->prefill_time += prefill;
        }
        if (decoding && decode_step(g, sel, mass, dist, acc, where) != 0) {
            g->failed = 1;
            break;
        }
        double now = simgrid_get_clock();
        if (decoding)
            ks_active_emit(&g->act, now, 0);
        ks_active_emit(&g->act, now, 1); // prefills completed in this iteration: their first token
        sample(g);
    }
    ks_active_record_rest(&g->act); // cut off by the end of the run
    m->decoders--;
    sg_cond_notify_all(m->slot); // a router waiting for a slot must not wait for this one
    free(sel);
    free(mass);
    free(dist);
    free(acc);
    free(where);
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
    size_t n = m->n_links, k = KS_ENGINE_LINK_SAMPLES;
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

static uint64_t dtype_bytes(enum ks_dtype d)
{
    switch (d) {
    case KS_DTYPE_FP32: return 4;
    case KS_DTYPE_FP16: case KS_DTYPE_BF16: return 2;
    case KS_DTYPE_FP8: case KS_DTYPE_INT8: return 1;
    }
    return 2;
}

int ks_engine_size(const struct ks_scenario *s, struct ks_cache_params *cp, struct ks_engine_sizing *z, char *err,
                   size_t len)
{
    ks_cache_params_default(cp);
    uint64_t tb = (uint64_t)s->model.kv_heads * s->model.head_dim * 2 * dtype_bytes(s->model.dtype);
    z->token_bytes = tb * s->model.layers;
    z->block_bytes[KS_L1] = tb * s->cache.block_size;
    uint64_t low = s->cache.compression == KS_COMPRESSION_INT8 ? (z->block_bytes[KS_L1] + 1) / 2 : z->block_bytes[KS_L1];
    z->block_bytes[KS_L2] = z->block_bytes[KS_L3] = low;
    uint64_t bb = z->block_bytes[KS_L1];
    double hbm_free = (double)s->platform.hbm_bytes - (double)s->model.weight_bytes;
    double l1 = s->cache.l1.is_share ? hbm_free : s->cache.l1.value;
    double l2 = s->cache.l2.is_share ? s->cache.l2.value * (double)s->platform.l2 : s->cache.l2.value;
    l2 /= s->platform.gpus_per_node; // host DRAM is shared by the node's GPUs
    uint64_t l1p = (uint64_t)(l1 / (double)bb), l2p = (uint64_t)(l2 / (double)z->block_bytes[KS_L2]);
    if (l1p == 0) {
        snprintf(err, len, "cache.l1: less than one %llu-byte block per GPU", (unsigned long long)bb);
        return KS_EINVAL;
    }
    // admission: the batch's blocks may exceed L1 by the share's inverse
    z->admit_blocks = s->cache.l1.is_share && s->cache.l1.value > 0 ? (uint64_t)((double)l1p / s->cache.l1.value)
                                                                     : l1p + l2p;
    // L3: the node's drives (or the remote pool) shared by its GPUs; without
    // a capacity, room for twice what the admitted requests can hold
    uint64_t l3p = s->cache.l3 == KS_L3_NONE ? 0 : 2 * z->admit_blocks + 1024;
    double l3_bytes = s->cache.l3 == KS_L3_SSD      ? (double)s->platform.ssd.bytes * s->platform.ssd.count
                      : s->cache.l3 == KS_L3_REMOTE ? (double)s->platform.remote.bytes / s->platform.nodes
                                                    : 0;
    if (l3_bytes > 0)
        l3p = (uint64_t)(l3_bytes / s->platform.gpus_per_node / (double)z->block_bytes[KS_L3]);
    uint64_t cap = KS_PAGE_MAX;
    cp->tier_blocks[KS_L1] = (uint32_t)(l1p < cap ? l1p : cap);
    z->l1_pages = cp->tier_blocks[KS_L1];
    cp->tier_blocks[KS_L2] = (uint32_t)(l2p < cap ? l2p : cap);
    cp->tier_blocks[KS_L3] = (uint32_t)(l3p < cap ? l3p : cap);
    uint64_t ids = (uint64_t)cp->tier_blocks[0] + cp->tier_blocks[1] + cp->tier_blocks[2] +
                   (uint64_t)KS_CHUNK * s->model.layers * 64; // room for partly used chunks
    cp->n_blocks = (uint32_t)(ids < (UINT32_C(1) << 31) - KS_CHUNK ? ids : (UINT32_C(1) << 31) - KS_CHUNK);
    for (int t = 0; t < KS_TIERS; t++)
        cp->block_bytes[t] = (uint32_t)z->block_bytes[t];
    cp->groups = s->model.layers;
    cp->heat_half_life = s->cache.heat_half_life;
    cp->prefetch_window = s->cache.prefetch_window;
    cp->migration_batch = s->cache.migration_batch;
    cp->evict = s->cache.evict;
    cp->seed = s->seed;
    return KS_OK;
}

uint32_t ks_engine_reserve(const struct ks_scenario *s, const struct ks_engine_sizing *z, uint32_t n_act)
{
    uint64_t reserve = (uint64_t)n_act * s->model.layers, quarter = z->l1_pages / 4;
    return (uint32_t)(reserve < quarter ? reserve : quarter);
}

uint64_t ks_engine_budget(const struct ks_scenario *s, const struct ks_engine_sizing *z, double kv_bytes)
{
    double link_step = (double)s->platform.pcie_bw * (s->platform.hbm_bw > 0 ? kv_bytes / s->platform.hbm_bw : 0);
    return (uint64_t)fmax(link_step, (double)z->block_bytes[KS_L1] * s->cache.migration_batch);
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
    r->ttft = malloc(sizeof *r->ttft);
    r->tpot = malloc(sizeof *r->tpot);
    if (!r->ttft || !r->tpot) {
        ks_run_result_fini(r);
        snprintf(err, len, "out of memory");
        return KS_ENOMEM;
    }
    ks_hist_init(r->ttft);
    ks_hist_init(r->tpot);
    struct ks_cache_params cp;
    int st = ks_engine_size(s, &cp, &m.z, err, len);
    if (st != KS_OK) {
        ks_run_result_fini(r);
        return st;
    }
    if (!(m.wl = ks_workload_new(s, err, len))) {
        ks_run_result_fini(r);
        return KS_EINVAL;
    }
    if (!(m.sparse = ks_sparse_new(s, err, len))) {
        ks_workload_free(m.wl);
        ks_run_result_fini(r);
        return KS_EINVAL;
    }
    int lua_evict = s->cache.evict == KS_EVICT_CALLBACK;
    if ((lua_evict || s->cache.prefetch_lua) &&
        ks_luapolicy_init(&m.lua, s->file, lua_evict ? "cache.evict" : NULL,
                          s->cache.prefetch_lua ? "cache.prefetch_window" : NULL, err, len) != KS_OK) {
        ks_sparse_free(m.sparse);
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
        ks_sparse_free(m.sparse);
        ks_luapolicy_fini(&m.lua);
        ks_run_result_fini(r);
        return st;
    }
    m.n_links = sg_link_count();
    m.links = sg_link_list();
    m.link_bytes = calloc(m.n_links ? m.n_links : 1, sizeof *m.link_bytes);
    m.link_bins = calloc((m.n_links ? m.n_links : 1) * (KS_ENGINE_LINK_SAMPLES + 1), sizeof *m.link_bins);
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
        g->step = 1; // blocks placed before the first step count as used at step 0
        ks_active_init(&g->act, &(struct ks_active_params){
            .s = s, .cache = g->cache, .sparse = m.sparse, .r = r, .gpu = i, .admit_blocks = m.z.admit_blocks,
            .hooks = {.ctx = g, .finished = finished}});
        ks_rng_seed(&g->rng, s->seed * 1000003u + i);
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
            for (int l = 0; l < KS_ENGINE_LANES; l++)
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
        for (unsigned t = 0; r->tiers && g->cache && t < KS_TIERS; t++) {
            struct ks_tier_view v;
            ks_cache_tier_view(g->cache, t, &v);
            r->tiers[r->n_tiers++] = (struct ks_tier_record){
                .gpu = i, .tier = t, .capacity = v.cap, .used = v.used, .peak = v.peak,
                .block_bytes = m.z.block_bytes[t], .mig_in = v.mig_in, .mig_out = v.mig_out,
                .alloc_fails = v.alloc_fails};
        }
        if (g->cache)
            ks_cache_stats_add(&r->cache, ks_cache_stats(g->cache));
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
        free(g->pending);
        free(g->miss);
        free(g->moving);
        free(g->outside);
        ks_active_fini(&g->act);
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
    ks_sparse_free(m.sparse);
    ks_luapolicy_fini(&m.lua);
    if (st == KS_OK && m.err[0])
        st = KS_EINVAL;
    if (st != KS_OK && err[0] == '\0')
        snprintf(err, len, "%s", m.err[0] ? m.err : ks_status_str(st));
    return st;
}

void ks_run_result_fini(struct ks_run_result *r)
{
    free(r->ttft);
    free(r->tpot);
    free(r->rec);
    free(r->samples);
    free(r->tiers);
    free(r->links);
    free(r->link_samples);
    memset(r, 0, sizeof *r);
}
