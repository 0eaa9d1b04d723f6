// engine.c - one simulation: the platform, the GPUs and their actors set up,
// run, and torn down into the run's result (see engine.h, engine_impl.h).
#define _POSIX_C_SOURCE 200809L // sigaction

#include "engine.h"
#include "engine_impl.h"

#include <pthread.h>
#include <signal.h>
#include <simgrid/actor.h>
#include <simgrid/engine.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "clock.h"
#include "platform.h"

static int initialised;
static volatile sig_atomic_t stop_signal; // set by ks_engine_stop, maybe from a signal handler

void ks_engine_stop(int sig)
{
    stop_signal = sig ? sig : SIGTERM;
}

int ks_engine_stopped(void)
{
    return stop_signal;
}

void ks_engine_fail(struct sim *m, const char *msg, int st)
{
    if (!m->err[0])
        snprintf(m->err, sizeof m->err, "%s: %s", msg, ks_status_str(st));
}

// The run's error is the first one (its message complete already).
void ks_engine_fail_msg(struct sim *m, const char *msg)
{
    if (!m->err[0])
        snprintf(m->err, sizeof m->err, "%s", msg);
}

static const char *stop_name(int sig)
{
    return sig == SIGINT ? "SIGINT" : sig == SIGTERM ? "SIGTERM" : sig == SIGHUP ? "SIGHUP" : "a signal";
}

// ---- progress ----------------------------------------------------------------

// A daemon that redraws a progress line on stderr (only when stderr is a
// terminal; it never touches stdout): every 1% of the duration, or, for a
// run of workload.requests, every 1% of a horizon that doubles every 100 lines.
static void progress(int argc, char **argv)
{
    (void)argc;
    struct sim *m = (struct sim *)(uintptr_t)strtoull(argv[1], NULL, 16);
    const struct ks_scenario *s = m->s;
    int grows;
    double every = ks_run_horizon(s, &grows) / 100, t = 0, t0 = ks_clock_mono();
    for (int line = 1;; line++) {
        t += every;
        sg_actor_sleep_until(t);
        double wall = ks_clock_mono() - t0;
        if (grows)
            fprintf(stderr, "\rrun: %.6gs simulated, %llu of %llu requests finished, %llu tokens, %.1fs wall ", t,
                    (unsigned long long)m->r->finished, (unsigned long long)s->workload.requests,
                    (unsigned long long)m->r->tokens, wall);
        else
            fprintf(stderr, "\rrun: %3d%% of %gs simulated, %llu requests finished, %llu tokens, %.1fs wall ",
                    line < 100 ? line : 100, s->duration, (unsigned long long)m->r->finished,
                    (unsigned long long)m->r->tokens, wall);
        fflush(stderr);
        if (grows && line % 100 == 0)
            every *= 2;
    }
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
        .gpudirect = pl->gpudirect,
    };
}

void ks_engine_spawn(const char *name, sg_host_t host, void (*fn)(int, char **), void *arg, int daemon)
{
    char ptr[32];
    snprintf(ptr, sizeof ptr, "%llx", (unsigned long long)(uintptr_t)arg);
    char *argv[] = {(char *)name, ptr}; // copied by SimGrid
    sg_actor_t a = sg_actor_init(name, host);
    if (daemon)
        sg_actor_daemonize(a);
    sg_actor_start(a, fn, 2, argv);
}

// GPU i of the run: its hosts on the platform, its cache manager and step
// driver, its locks. KS_OK, or a status with the reason in err.
static int setup_gpu(struct sim *m, uint32_t i, const struct ks_platform_params *pp, struct ks_cache_params *cp,
                     char *err, size_t len)
{
    const struct ks_scenario *s = m->s;
    struct gpu *g = &m->gpu[i];
    char name[32];
    // decode unit i is an attention rank: its first GPU stands for the
    // rank's attn_tp GPUs, which do the same work on their shares
    uint32_t gpn = s->platform.gpus_per_node, first = i * s->model.arch.attn_tp, local = first % gpn;
    g->sim = m;
    g->node = first / gpn;
    g->index = i;
    g->layer_now = KS_NONE;
    ks_platform_gpu(name, sizeof name, g->node, local);
    g->host = sg_host_by_name(name);
    uint32_t tp = s->parallel.tp;
    if (tp > 1) { // the ring of its replica's GPUs
        ks_platform_gpu(name, sizeof name, g->node, local / tp * tp + (local % tp + 1) % tp);
        g->peer = sg_host_by_name(name);
    }
    uint32_t group = s->parallel.ep / gpn; // nodes of an expert group that spans nodes
    if (s->parallel.ep > tp && group > 1) { // its GPU of the same place on the group's next node
        uint32_t base = g->node / group * group;
        ks_platform_gpu(name, sizeof name, base + (g->node - base + 1) % group, local);
        g->xpeer = sg_host_by_name(name);
    }
    ks_platform_cpu(name, sizeof name, g->node);
    g->cpu = sg_host_by_name(name);
    if (pp->ssds_per_node) {
        ks_platform_ssd(name, sizeof name, g->node, local % pp->ssds_per_node);
        g->l3 = sg_host_by_name(name);
    } else {
        g->l3 = pp->remote ? sg_host_by_name(KS_PLATFORM_REMOTE) : g->cpu;
    }
    // detail.gpus: K of the N GPUs evenly spaced are sampled (i where i K / N
    // steps up); followers in time leave links empty, so then the first K
    // (whole nodes: scenario.c), whose links no follower shares
    uint32_t k = s->detail.gpus;
    int in_time = s->detail.follow == KS_FOLLOW_TIME;
    g->sampled = !m->follow || (in_time ? i < k : (uint64_t)(i + 1) * k / m->n_gpu > (uint64_t)i * k / m->n_gpu);
    cp->seed = s->seed + i;
    // a follower in time takes no access: its cache is a tally (sim/cache/tally.c)
    cp->tally = !g->sampled && in_time;
    if (!(g->cache = ks_cache_new(cp, err, len)))
        return KS_EINVAL;
    g->d_ok = 1;
    if (ks_step_init(&g->d, &(struct ks_step_params){
            .s = s, .cache = g->cache, .sparse = m->sparse, .r = m->r, .lua = &m->lua, .z = m->z, .gpu = i,
            .ops = ks_engine_step_ops(g), .pool = g->sampled ? m->workers : NULL, .follow = m->follow,
            .sampled = g->sampled}) != KS_OK) {
        snprintf(err, len, "out of memory for GPU %u's step buffers", i);
        return KS_ENOMEM;
    }
    g->mu = sg_mutex_init();
    g->work = sg_cond_init();
    g->done = sg_cond_init();
    g->arrive = sg_cond_init();
    return KS_OK;
}

// Starts every actor and runs the simulation to its end.
static void run_actors(struct sim *m)
{
    const struct ks_scenario *s = m->s;
    for (uint32_t i = 0; i < m->n_gpu; i++) {
        struct gpu *g = &m->gpu[i];
        ks_engine_spawn("decode", g->host, ks_engine_decode, g, 0);
        for (int l = 0; l < KS_STEP_LANES; l++)
            ks_engine_spawn("lane", g->host, ks_engine_lane, g, 1);
    }
    m->decoders = m->n_gpu;
    for (uint32_t i = 0; m->pool_host && i < s->prefill.gpus; i++)
        ks_engine_spawn("prefill", m->pool_host, ks_engine_prefill, m, 1);
    ks_engine_spawn("router", m->gpu[0].cpu, ks_engine_router, m, 0);
    ks_engine_spawn("closer", m->gpu[0].cpu, ks_engine_closer, m, 1);
    int tty = isatty(STDERR_FILENO);
    if (tty)
        ks_engine_spawn("progress", m->gpu[0].cpu, progress, m, 1);
    simgrid_run();
    if (tty)
        fputs("\r\033[K", stderr);
}

// Every GPU's tiers and statistics into the result, then everything the run
// holds released. Returns st, or the status of a GPU that failed.
static int teardown(struct sim *m, int st)
{
    struct ks_run_result *r = m->r;
    r->tiers = calloc((size_t)m->n_gpu * KS_TIERS, sizeof *r->tiers);
    // detail.gpus: the sampled GPUs' cache statistics stand for all GPUs',
    // scaled by the tokens of all over theirs
    uint64_t tokens = 0, sampled = 0;
    for (uint32_t i = 0; m->follow && m->gpu && i < m->n_gpu; i++) {
        uint64_t t = m->gpu[i].d_ok ? m->gpu[i].d.act.tokens : 0;
        tokens += t;
        sampled += m->gpu[i].sampled ? t : 0;
    }
    for (uint32_t i = 0; m->gpu && i < m->n_gpu; i++) {
        struct gpu *g = &m->gpu[i];
        if (g->failed && st == KS_OK)
            st = KS_EINVAL;
        if (g->cache) // a follower's cache saw no access: the statistics are the sampled GPUs'
            ks_run_result_add_tiers(r, g->cache, i, m->z.block_bytes, g->sampled);
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
        free(g->to_peer.link);
        free(g->to_xpeer.link);
        free(g->jobs);
        free(g->whole);
        if (g->d_ok)
            ks_step_fini(&g->d);
    }
    if (m->follow && sampled > 0)
        ks_cache_stats_scale(&r->cache, (double)tokens / (double)sampled);
    r->unplanned += r->cache.unplanned;
    ks_pool_free(m->workers); // the drivers waited for their jobs
    if (m->follow)
        ks_follow_fini(m->follow);
    ks_lockstep_fini(m);
    free(m->follow);
    free(m->gpu);
    free(m->flush);
    if (m->mu) {
        sg_mutex_destroy(m->mu);
        sg_cond_destroy(m->pool_work);
        sg_cond_destroy(m->sampled_ended);
    }
    free(m->pool);
    free(m->sess);
    free(m->links);
    free(m->link_bytes);
    free(m->link_bins);
    ks_workload_free(m->wl);
    ks_selection_free(m->sparse);
    ks_luapolicy_fini(&m->lua);
    return st;
}

int ks_engine_check(const struct ks_scenario *whole, char *err, size_t len)
{
    struct ks_scenario sampled; // what the run simulates (detail.nodes)
    ks_scenario_sampled(whole, &sampled);
    const struct ks_scenario *s = &sampled;
    if (s->cache.evict == KS_EVICT_BELADY && s->sparse.policy != KS_SPARSE_TRACE) {
        snprintf(err, len, "cache.evict: belady needs the future accesses, which only a replayed trace knows "
                           "(sparse.policy = \"trace\")");
        return KS_EINVAL;
    }
    struct ks_cache_params cp;
    struct ks_step_sizing z;
    int st = ks_step_size(s, &cp, &z, err, len);
    if (st != KS_OK)
        return st;
    char why[512];
    if (ks_cache_params_check(&cp, why, sizeof why) != KS_OK) {
        snprintf(err, len, "cache: %s", why);
        return KS_EINVAL;
    }
    struct ks_workload *wl = ks_workload_new(s, err, len);
    if (!wl)
        return KS_EINVAL;
    ks_workload_free(wl);
    struct ks_selection *sel = ks_selection_new(s, err, len);
    if (!sel)
        return KS_EINVAL;
    ks_selection_free(sel);
    int lua_evict = s->cache.evict == KS_EVICT_CALLBACK;
    if (lua_evict || s->cache.prefetch_lua) {
        struct ks_luapolicy lua;
        if (ks_luapolicy_init_seeded(&lua, s->file, lua_evict ? "cache.evict" : NULL,
                                     s->cache.prefetch_lua ? "cache.prefetch_window" : NULL, s->seed, err,
                                     len) != KS_OK)
            return KS_EINVAL;
        ks_luapolicy_fini(&lua);
    }
    struct ks_platform_params pp;
    platform_of(s, &pp);
    return ks_platform_check(&pp, err, len);
}

unsigned ks_engine_threads_default(void)
{
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    return cpus < 1 ? 1 : cpus > KS_ENGINE_THREADS ? KS_ENGINE_THREADS : (unsigned)cpus;
}

int ks_engine_run(const struct ks_scenario *whole, unsigned threads, struct ks_run_result *r, char *err,
                  size_t len)
{
    memset(r, 0, sizeof *r);
    // detail.nodes: a sample of the nodes is simulated, its sums made the cluster's at the end
    struct ks_scenario sampled;
    uint32_t stands_for = ks_scenario_sampled(whole, &sampled);
    const struct ks_scenario *s = &sampled;
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
    if (st == KS_OK && !(m.wl = ks_workload_new(s, err, len)))
        st = KS_EINVAL;
    if (st == KS_OK && !(m.sparse = ks_selection_new(s, err, len)))
        st = KS_EINVAL;
    if (threads == 0)
        threads = ks_engine_threads_default();
    if (st == KS_OK && threads > 1 && ks_selection_ahead(m.sparse) && !(m.workers = ks_pool_new(threads - 1))) {
        snprintf(err, len, "cannot start %u worker threads", threads - 1);
        st = KS_ENOMEM;
    }
    int lua_evict = s->cache.evict == KS_EVICT_CALLBACK;
    if (st == KS_OK && (lua_evict || s->cache.prefetch_lua) &&
        ks_luapolicy_init_seeded(&m.lua, s->file, lua_evict ? "cache.evict" : NULL,
                                 s->cache.prefetch_lua ? "cache.prefetch_window" : NULL, s->seed, m.lua_err,
                                 sizeof m.lua_err) != KS_OK) {
        snprintf(err, len, "%s", m.lua_err);
        st = KS_EINVAL;
    }
    if (st != KS_OK) {
        teardown(&m, st);
        ks_run_result_fini(r);
        return st;
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
    int argc = 1 + KS_PLATFORM_ARGC;
    char *argv[] = {"kvstrata", KS_PLATFORM_ARGV, NULL};
    // NOTE: SimGrid installs a SIGINT handler that calls exit() from inside
    // the signal; exit runs HDF5's and SimGrid's exit handlers in the middle
    // of whatever was interrupted. The caller's disposition is put back, and
    // SIGINT and SIGTERM are held meanwhile: one that came while SimGrid's
    // handler was in place was lost (the run went on) or ended the run with
    // exit status 1 and no message; held, it reaches the caller's handler.
    sigset_t held, prev;
    sigemptyset(&held);
    sigaddset(&held, SIGINT);
    sigaddset(&held, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &held, &prev); // this thread: the pool's workers block every signal
    struct sigaction old_int;
    sigaction(SIGINT, NULL, &old_int);
    simgrid_init(&argc, argv);
    sigaction(SIGINT, &old_int, NULL);
    pthread_sigmask(SIG_SETMASK, &prev, NULL);
    struct ks_platform_params pp;
    platform_of(s, &pp);
    if ((st = ks_platform_load(&pp, err, len)) != KS_OK) {
        teardown(&m, st);
        ks_run_result_fini(r);
        return st;
    }
    m.n_links = sg_link_count();
    m.links = sg_link_list();
    m.link_bytes = calloc(m.n_links ? m.n_links : 1, sizeof *m.link_bytes);
    m.link_bins = calloc((m.n_links ? m.n_links : 1) * (KS_RUN_LINK_SAMPLES + 1), sizeof *m.link_bins);
    m.link_every = ks_run_horizon(s, &m.link_grows) / KS_RUN_LINK_SAMPLES;
    m.n_gpu = ks_scenario_decode_units(s); // attention ranks
    m.gpu = calloc(m.n_gpu, sizeof *m.gpu);
    m.flush = calloc(m.n_gpu, sizeof *m.flush);
    if (!m.links || !m.link_bytes || !m.link_bins || !m.gpu || !m.flush) {
        snprintf(err, len, "out of memory for %u GPUs", m.n_gpu);
        st = KS_ENOMEM;
    }
    for (size_t i = 0; st == KS_OK && i < m.n_links; i++)
        sg_link_set_data(m.links[i], (void *)(uintptr_t)(i + 1));
    m.mu = sg_mutex_init();
    m.pool_work = sg_cond_init();
    m.sampled_ended = sg_cond_init();
    m.pool_host = pp.prefill_pool ? sg_host_by_name(KS_PLATFORM_PREFILL) : NULL;
    if (st == KS_OK && s->detail.gpus && s->detail.gpus < m.n_gpu &&
        (!(m.follow = malloc(sizeof *m.follow)) || ks_follow_init(m.follow, m.z.groups) != KS_OK)) {
        snprintf(err, len, "out of memory for detail.gpus");
        st = KS_ENOMEM;
    }
    // the groups first: a rank's step driver yields for them (ks_engine_step_ops)
    if (st == KS_OK && (st = ks_lockstep_setup(&m)) != KS_OK)
        snprintf(err, len, "out of memory for parallel.ranks");
    for (uint32_t i = 0; st == KS_OK && i < m.n_gpu; i++)
        st = setup_gpu(&m, i, &pp, &cp, err, len);
    double w0 = ks_clock_mono();
    if (st == KS_OK) {
        run_actors(&m);
        r->sim_time = simgrid_get_clock();
        // a run of workload.requests ends early only when the duration cut it
        r->truncated = s->workload.requests > 0 && !(m.exhausted && r->finished == m.handed);
        ks_engine_link_records(&m, r);
    }
    r->wall_s = ks_clock_mono() - w0;
    st = teardown(&m, st);
    if (st == KS_OK && m.err[0])
        st = KS_EINVAL;
    if (stop_signal) { // whatever else the stop made fail
        snprintf(err, len, "interrupted by %s at %.6g s of simulated time; no result", stop_name(stop_signal),
                 r->sim_time);
        return KS_ESTATE;
    }
    if (st != KS_OK && err[0] == '\0')
        snprintf(err, len, "%s", m.err[0] ? m.err : ks_status_str(st));
    if (st == KS_OK && stands_for > 1)
        ks_run_result_scale(r, stands_for);
    return st;
}
