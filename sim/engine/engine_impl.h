// engine_impl.h - what the engine's actors share (see engine.h): the run,
// its GPUs, and the functions one actor's file calls in another's.
//
// One file per actor: router.c (the router, multi-turn sessions, the
// closer), decode.c (a GPU's decode actor: its step driver's operations on
// SimGrid), lane.c (the migration lanes), prefill.c (the disaggregated
// prefill pool); links.c carries and counts transfers; lockstep.c holds the
// ranks of an expert group together; engine.c sets the run up and tears it
// down. Shared state needs no locking for correctness
// (SimGrid actors run one at a time, switching only inside SimGrid calls);
// the mutexes exist because condition variables want them.
#ifndef KS_ENGINE_IMPL_H
#define KS_ENGINE_IMPL_H

#include <simgrid/cond.h>
#include <simgrid/host.h>
#include <simgrid/link.h>
#include <simgrid/mutex.h>
#include <stddef.h>
#include <stdint.h>

#include "luapolicy.h"
#include "pool.h"
#include "runresult.h"
#include "scenario.h"
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
    uint32_t idle_lanes;             // lanes waiting on work (ks_engine_wake_lanes)
    // the step driver waits on done while awaited(g, await_layer) holds
    // (decode.c's wait_done); NULL when it does not wait
    int (*awaited)(const struct gpu *g, uint32_t layer);
    uint32_t await_layer;
    struct ks_step_job *jobs;        // this step's batches, for the lanes
    uint32_t n_jobs, cap_jobs;
    uint32_t jobs_landed;            // jobs[0 .. jobs_landed) have landed: the scans of the list start there
    struct ks_step_job *whole;       // a plan's jobs before ks_step_job_split
    uint32_t cap_whole;
    struct ks_batch backup;          // this step's backup of new KV to the host (device buffers)
    uint32_t layer_now;              // the model's layer running: needed batches of later layers wait (their
                                     // selection is made when their layer runs: ks_selection_per_layer);
                                     // KS_NONE: none waits
    uint32_t incoming;               // routed here, still in the prefill pool
    struct route routes[KS_TIERS + 1][KS_TIERS]; // [source tier or POOL][destination tier]
    int queued;                      // requests queued since the last ks_engine_flush
    sg_host_t peer;                  // parallel.tp > 1: the next GPU of its replica's ring (collectives)
    struct route to_peer;
    sg_host_t xpeer;                 // parallel.ep over nodes: the GPU in its place on the group's next node
    struct route to_xpeer;
    int sampled;                     // its cache simulated in full (every GPU, unless detail.gpus)
    int failed;
    struct lockstep *ls;             // parallel.ranks = lockstep: its expert group's ranks (lockstep.c); NULL: none
    uint64_t ls_pos;                 // its progress there (iteration, layers reached)
    int ls_in;                       // in the group: it has requests
};

struct sim {
    const struct ks_scenario *s;
    struct ks_run_result *r;
    struct gpu *gpu;
    uint32_t n_gpu;
    uint32_t *flush, n_flush; // [n_gpu] ring: GPUs queued to and not yet woken (ks_engine_queue),
    uint32_t flush_head;      // n_flush of them from flush_head on; each at most once (gpu.queued)
    struct ks_workload *wl;
    uint64_t handed;   // requests the workload gave the router
    int exhausted;     // the workload has no more requests
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
    double link_every; // seconds: an interval's width (ks_run_horizon / KS_RUN_LINK_SAMPLES)
    int link_grows;    // 1: it doubles, merging the bins in pairs, as the run outlives the last
    struct ks_step_sizing z; // block sizes, admission bound, L1 pages
    struct ks_selection *sparse; // the sparse-attention policy
    struct ks_pool *workers;     // threads drawing selections ahead (the step drivers'); NULL: none
    struct ks_follow *follow; // detail.gpus below the GPUs: the sampled GPUs' steps (follow.h); NULL: full detail
    sg_cond_t sampled_ended;  // (with mu) a sampled GPU ended a decode step, or one failed (detail.follow = "time")
    struct lockstep *lockstep; // [n_lockstep] expert groups whose ranks step together (lockstep.c); NULL: none
    uint32_t n_lockstep;
    struct ks_luapolicy lua; // cache.evict, cache.prefetch_window as Lua functions
    char lua_err[512];       // why lua failed (its reason buffer)
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

// ---- engine.c ----
// Records the run's first failure: msg and the status's name.
void ks_engine_fail(struct sim *m, const char *msg, int st);
// Records the run's first failure, its message complete.
void ks_engine_fail_msg(struct sim *m, const char *msg);
// Starts actor fn(argv = {name, arg as hex}) on host; a daemon ends with the run.
void ks_engine_spawn(const char *name, sg_host_t host, void (*fn)(int, char **), void *arg, int daemon);

// ---- links.c ----
// Sends `bytes` from one host to another over route rt (looked up on first
// use) and records them on every link it crosses; `extra` bytes take their
// time but are not recorded as carried (a device's per-request time).
void ks_engine_transfer(struct sim *m, struct route *rt, sg_host_t from, sg_host_t to, double bytes, double extra);
// Every link's totals and its time series into r.
void ks_engine_link_records(struct sim *m, struct ks_run_result *r);

// ---- lane.c ----
// The host of a GPU's tier: the GPU for L1, the node's CPU for L2, the L3 device's.
sg_host_t ks_engine_tier_host(const struct gpu *g, unsigned tier);
void ks_engine_lane(int argc, char **argv); // actor: argv[1] = struct gpu *
// When a job is ready that no lane has taken, wakes one of g's lanes that
// wait for one (a lane that takes a job calls it again, so the wake-ups pass
// on while jobs are left, and none finds nothing).
void ks_engine_wake_lanes(struct gpu *g);

// ---- decode.c ----
// Queues a request for admission on g and wakes its decoder. KS_OK or KS_ENOMEM.
int ks_engine_push(struct gpu *g, const struct ks_request_spec *spec, double prefilled);
// As ks_engine_push without waking the GPU yet: ks_engine_flush wakes every
// GPU queued to since the last flush. The router queues all the requests of
// one instant before it yields, so a decoder's admission sees them together.
int ks_engine_queue(struct gpu *g, const struct ks_request_spec *spec, double prefilled);
void ks_engine_flush(struct sim *m);
// Closed arrivals: releases requests while fewer than `concurrency` are in
// flight (at the start, by the router; then as each request finishes).
void ks_engine_release_closed(struct sim *m);
// Requests on g or bound for it: what the load-aware routers compare.
uint32_t ks_engine_load(const struct gpu *g);
// g's step driver operations on SimGrid.
struct ks_step_ops ks_engine_step_ops(struct gpu *g);
void ks_engine_decode(int argc, char **argv); // actor: argv[1] = struct gpu *

// ---- lockstep.c ----
// parallel.ranks = lockstep with ranks that share an expert group: the
// groups, each GPU's ls set. KS_OK (nothing to do otherwise) or KS_ENOMEM.
int ks_lockstep_setup(struct sim *m);
void ks_lockstep_fini(struct sim *m);
// g begins an iteration (joining its group if it was out): it waits until
// every rank in the group has begun it. Returns the seconds it waited.
double ks_lockstep_begin(struct gpu *g);
// g reached model layer `layer`'s collectives: at an MoE layer it waits until
// every rank in the group has reached it. Returns the seconds it waited.
double ks_lockstep_layer(struct gpu *g, uint32_t layer);
// g has no request (or its loop ended): out of the group, holding no one.
void ks_lockstep_leave(struct gpu *g);
// The tokens g's expert group puts through its MoE layers in g's iteration,
// `own` of them g's (the step's moe_tokens op: which routed experts a GPU
// reads).
double ks_lockstep_moe_tokens(const struct gpu *g, double own);

// ---- prefill.c ----
// Queues a request routed to g for the prefill pool. KS_OK or KS_ENOMEM.
int ks_engine_pool_push(struct sim *m, struct gpu *g, const struct ks_request_spec *spec);
void ks_engine_prefill(int argc, char **argv); // actor: argv[1] = struct sim *

// ---- router.c ----
void ks_engine_router(int argc, char **argv); // actor: argv[1] = struct sim *
void ks_engine_closer(int argc, char **argv); // daemon: argv[1] = struct sim *
// Ends the waits of idle decoders (the router stopped, the run is closing).
void ks_engine_wake_decoders(struct sim *m);
// A session's turn finished at `now`: its next turn, if it waits, comes think_time later.
void ks_engine_turn_finished(struct sim *m, const struct ks_request_spec *sp, double now);

#endif
