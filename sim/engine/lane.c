// lane.c - a GPU's migration lanes: each executes the step's batches in
// priority order as one SimGrid transfer each and marks them landed (see
// engine_impl.h; the step driver confirms them at the step's end).
#include "engine_impl.h"

#include <simgrid/actor.h>
#include <simgrid/engine.h>
#include <stdlib.h>

sg_host_t ks_engine_tier_host(const struct gpu *g, unsigned tier)
{
    return tier == KS_L1 ? g->host : tier == KS_L2 ? g->cpu : g->l3;
}

// How long a gather kernel needs at least to read a batch from host memory
// when each request's blocks have one thread block of cache.gather_warps
// warps: a warp copies one block at a time, its lanes loading
// gather_load_bytes each per round trip to host memory (host_read_lat), and
// the next load waits for the last one's data (SGLang's HiSparse swap-in
// kernel: one 256-thread block per request, 8-byte loads). The request with
// the most blocks decides; 0 when not limited (gather_warps 0).
static double gather_read_floor(const struct ks_scenario *s, const struct ks_batch *b, uint64_t bytes)
{
    if (s->cache.gather_warps == 0 || b->n == 0)
        return 0;
    uint64_t item = bytes / b->n, per_trip = 32ull * s->cache.gather_load_bytes;
    uint64_t trips = (item + per_trip - 1) / per_trip;
    uint64_t turns = (b->most_per_req + s->cache.gather_warps - 1) / s->cache.gather_warps;
    return (double)(turns * trips) * s->platform.host_read_lat;
}

// Sleeps a job's fixed costs before its bytes move (cache.copy): one
// copy_overhead for a batched copy or a gather kernel's launch, a per-item
// cost per block for copies one by one (batches between HBM and host DRAM;
// others are batched copies). A job moves `bytes`, its batch's or, at
// detail.layers, one layer's share (job.h): its batch's blocks each. Returns
// the time before which a gather's bytes cannot have landed (bytes at the
// kernel's rate from now, or the round trips of its busiest request's warps
// when longer), else 0.
static double copy_start(const struct ks_scenario *s, const struct ks_batch *b, uint64_t bytes)
{
    int h2d = b->src == KS_L2 && b->dst == KS_L1, d2h = b->src == KS_L1 && b->dst == KS_L2;
    enum ks_copy how = h2d || d2h ? s->cache.copy : KS_COPY_BATCH;
    if (how == KS_COPY_PER_ITEM) {
        sg_actor_sleep_for(b->n * (h2d ? s->platform.copy_item_h2d : s->platform.copy_item_d2h));
        return 0;
    }
    if (s->platform.copy_overhead > 0)
        sg_actor_sleep_for(s->platform.copy_overhead);
    if (how != KS_COPY_GATHER)
        return 0;
    double rate = (double)bytes / (h2d ? s->platform.gather_h2d_bw : s->platform.gather_d2h_bw);
    double trips = h2d ? gather_read_floor(s, b, bytes) : 0; // writes to host memory are posted: no round trip
    return simgrid_get_clock() + (rate > trips ? rate : trips);
}

// NOTE: one lane at a time, not all, and only for a job no lane has taken:
// the lane whose copy lands takes the next job itself, without waiting.
// Every lane woken at once for one job found nothing but one, and a lane
// woken at each landing found its job taken by the lane that landed; those
// waits were most of a loaded node's SimGrid calls (cluster_64x8_loaded.lua,
// detail.layers=8, 1 simulated s: 153,139 condition waits and 119,547
// wake-ups, now 61,431 and 32,580). Lanes are alike, so which one copies a
// job changes no time, but with platform.host_wake the one woken is the one
// idle longest (the wait's order), whose nap is its own idleness's.
void ks_engine_wake_lanes(struct gpu *g)
{
    if (g->idle_lanes && ks_step_next_job(g->jobs, g->n_jobs, g->jobs_landed, g->layer_now) >= 0)
        sg_cond_notify_one(g->work);
}

void ks_engine_lane(int argc, char **argv)
{
    (void)argc;
    struct gpu *g = (struct gpu *)(uintptr_t)strtoull(argv[1], NULL, 16);
    const struct ks_scenario *s = g->sim->s;
    const struct ks_host_wake *wake = &s->platform.host_wake;
    for (;;) {
        // g->jobs without g->mu but for the wait (decode.c, the NOTE above layer_starts)
        double idle_from = simgrid_get_clock();
        int k = ks_step_next_job(g->jobs, g->n_jobs, g->jobs_landed, g->layer_now);
        if (k < 0) {
            int waited = 0;
            sg_mutex_lock(g->mu);
            while ((k = ks_step_next_job(g->jobs, g->n_jobs, g->jobs_landed, g->layer_now)) < 0) {
                g->idle_lanes++;
                sg_cond_wait(g->work, g->mu);
                g->idle_lanes--;
                waited = 1;
            }
            int nap = waited && wake->n;
            if (!nap)
                g->jobs[k].running = 1; // taken before the unlock, where the other actors run
            if (waited) // another job may be ready: the wake-up passes on
                ks_engine_wake_lanes(g);
            sg_mutex_unlock(g->mu);
            if (nap) {
                // a lane that slept takes this long to run once signalled; a
                // lane already awake may take the job meanwhile
                sg_actor_sleep_for(ks_host_wake_time(wake, simgrid_get_clock() - idle_from));
                if ((k = ks_step_next_job(g->jobs, g->n_jobs, g->jobs_landed, g->layer_now)) < 0)
                    continue;
                g->jobs[k].running = 1;
            }
        } else {
            g->jobs[k].running = 1;
            ks_engine_wake_lanes(g); // another job ready: an idle lane takes it
        }
        struct ks_batch *b = g->jobs[k].b;
        uint64_t bytes = g->jobs[k].bytes;

        // one batched copy: its fixed cost, then the bytes over the route;
        // between HBM and host DRAM, as cache.copy says (copy_start)
        double t_copy = simgrid_get_clock();
        double floor = copy_start(s, b, bytes);
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
        ks_engine_transfer(g->sim, &g->routes[b->src][b->dst], ks_engine_tier_host(g, b->src), ks_engine_tier_host(g, b->dst), (double)bytes,
                 extra);
        if (floor > simgrid_get_clock()) // a gather kernel slower than the link's share
            sg_actor_sleep_until(floor);

        g->sim->r->copy_seconds += simgrid_get_clock() - t_copy;
        g->sim->r->copy_bytes += bytes;
        g->jobs[k].landed = 1; // the step driver confirms its batch at the step's end
        while (g->jobs_landed < g->n_jobs && g->jobs[g->jobs_landed].landed)
            g->jobs_landed++;
        if (g->awaited && (g->failed || !g->awaited(g, g->await_layer))) // what the driver waits for
            sg_cond_notify_all(g->done);
    }
}
