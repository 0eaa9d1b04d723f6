// step.h - one GPU's iterations and decode steps, written once for the
// simulator and the real runtime.
//
// The driver owns what a request lives through on one GPU: its queue, its
// admission (active.h), the iteration (admit, a prefill chunk, a decode
// step, the tokens, a /steps sample) and the decode step itself (select,
// report accesses, reserve, plan, hand the batches to the lanes, wait per
// layer only for the batches that layer needs, run the layer, wait for all,
// confirm in plan order). It has no clock and no threads of its own: time
// passes through a table of operations (struct ks_step_ops) that the
// simulator implements on SimGrid (sim/engine/engine.c) and the runtime on threads,
// and CUDA streams and events in GPU mode (kernels/runtime/runtime.c). A change of
// the step is therefore made once and validated by both.
//
// Time accounting per decode step: step time = now at its end - now before
// its plan; stall = the time spent in wait_layer and wait_all. With
// `compute` (modelled time) host = the modelled host costs (scheduling, and
// a pointer-table rebuild when L1's mapping changed) and busy = the layers'
// modelled compute + what `layers` reports besides it: step = host + stall +
// busy. Without it (real time) nothing modelled is charged and busy = step
// - stall: the host's work is part of it.
#ifndef KS_STEP_H
#define KS_STEP_H

#include <stddef.h>
#include <stdint.h>

#include "active.h"
#include "ahead.h"
#include "cache.h"
#include "follow.h"
#include "job.h"
#include "luapolicy.h"
#include "pool.h"
#include "rng.h"
#include "runresult.h"
#include "scenario.h"
#include "sizing.h"
#include "selection.h"
#include "workload.h"

// How time passes for one GPU. Every operation gets the ctx below; those
// that may fail return a status and write the reason into err.
struct ks_step_ops {
    void *ctx;
    // Seconds since the run began.
    double (*now)(void *ctx);
    // Modelled work of `seconds` takes its time (the simulator sleeps).
    // NULL where work takes real time (the runtime): modelled host costs and
    // prefill are then not charged.
    void (*compute)(void *ctx, double seconds);
    // Optional (the simulator): a pass of prefill alone that takes `seconds`,
    // spread evenly over the model's layers, so that the ranks of an expert
    // group in lockstep meet it at each MoE layer; NULL: compute.
    void (*prefill_pass)(void *ctx, double seconds);
    // Optional: the clock stands still from hold(ctx, 1) to hold(ctx, 0),
    // around work that stands in for what a decode step does not pay for
    // (writing a prompt's KV at admission, computing a selection).
    void (*hold)(void *ctx, int on);
    // No request is admitted: returns once one may be queued (ks_step_push).
    // 1: go on; 0: nothing more will come, the run ends; < 0: a failure.
    int (*idle)(void *ctx, char *err, size_t len);
    // Optional: once per iteration after admission (the runtime's router
    // queues the requests released meanwhile, and shows progress).
    int (*iteration)(void *ctx, char *err, size_t len);
    // Optional: request a was just admitted (a's `user` is the backend's).
    int (*admitted)(void *ctx, struct ks_active *a, char *err, size_t len);
    // Optional, with the clock held: a's selection in layer `layer` (in every
    // layer when the policy selects once per step, then layer is 0).
    void (*selected)(void *ctx, struct ks_active *a, uint32_t layer, const uint32_t *sel, const float *mass,
                     uint32_t k);
    // The active set's hooks (active.h): a new block's KV is written; a
    // request finished. Either may be NULL.
    int (*fill)(void *ctx, uint32_t req, uint32_t from, uint32_t to, char *err, size_t len);
    void (*finished)(void *ctx, struct ks_active *a);
    // The plan's batches go to the lanes, in plan order, one job each
    // (ks_step_job_of; at detail.layers one per model layer of its simulated
    // layer, ks_step_job_split); called every decode step, plan->n may be 0.
    int (*queue)(void *ctx, const struct ks_plan *plan, char *err, size_t len);
    // Simulator only (detail.gpus, follow.h): a follower's step hands its
    // lanes these jobs, made from a sampled GPU's step, instead of a plan's
    // (their batches are the driver's; nothing is confirmed of them).
    int (*queue_jobs)(void *ctx, const struct ks_step_job *jobs, uint32_t n, char *err, size_t len);
    // Optional, simulator only (detail.follow = "time", follow.h): a follower
    // returns once the decode steps that the sampled GPUs began up to this
    // instant (its other actors run first) have ended (ks_follow.begun,
    // .ended), or the run failed; a sampled GPU tells the waiting followers
    // that it ended one.
    void (*await_sampled)(void *ctx);
    void (*sampled_ended)(void *ctx);
    // Optional (cache.organisation = "per_request"): the KV the iteration
    // writes, `items` token rows of one layer and `bytes` in all, is copied
    // to the host as it is written (HiSparse's eager backup), beside the
    // batches; wait_all waits for it too.
    int (*backup)(void *ctx, uint64_t items, double bytes, char *err, size_t len);
    // Returns once the model's layer `layer` may run (no needed batch of it
    // or of an earlier layer is in flight), with *ready the layers from it on
    // that may run without another wait (>= 1; ks_step_ready_layers).
    int (*wait_layer)(void *ctx, uint32_t layer, uint32_t *ready, char *err, size_t len);
    // Attention of layers [from, from + n) for every decoding request. The
    // simulator reads ks_step.outside first, then charges ks_step.layer_time
    // per layer; the runtime runs its kernels. *extra: seconds it spent
    // besides the layers' own compute that count as busy (the simulator's
    // reads outside L1; 0 where busy time is measured whole).
    int (*layers)(void *ctx, uint32_t from, uint32_t n, double *extra, char *err, size_t len);
    // Returns once every batch of the step has landed; the lanes then hold
    // none of its jobs. The driver confirms them next.
    int (*wait_all)(void *ctx, char *err, size_t len);
    // Optional: the step ended, its batches confirmed.
    int (*stepped)(void *ctx, char *err, size_t len);
    // Optional (the simulator, ranks in lockstep): the other actors of this
    // instant run before the caller goes on (SimGrid's yield). With it and
    // p.pool the decode step hands its cache work to the pool, yields, then
    // waits for it, so that the ranks that begin a step together prepare
    // theirs side by side; without it the work runs on the caller's thread.
    void (*yield)(void *ctx);
    // Optional (the simulator): the tokens the MoE layers of this GPU's
    // expert group process in this iteration, `own` of them this rank's
    // (which routed experts it reads: ks_arch_gpu_read_bytes). NULL: every
    // rank of the group with as many (own x model.arch.moe_ranks).
    double (*moe_tokens)(void *ctx, double own);
};

struct ks_step_params {
    const struct ks_scenario *s;    // borrowed, outlives the driver
    struct ks_cache *cache;         // borrowed: the GPU's cache manager
    struct ks_selection *sparse;       // borrowed: the sparse-attention policy
    struct ks_run_result *r;        // borrowed: counters, histograms, records
    const struct ks_luapolicy *lua; // borrowed, may be NULL: Lua cache policies, checked after each plan
    struct ks_step_sizing z;
    uint32_t gpu;                   // index across the cluster
    struct ks_step_ops ops;
    // borrowed, may be NULL: worker threads that draw the next decode step's
    // selections while a step runs, where the policy allows it (ahead.h),
    // and run each decode step's cache work where ops.yield is set; the
    // results are the same with or without. The step's caller must then
    // emit each decode step's tokens (ks_active_emit) before the next, as
    // ks_step_run does: the draws are made for the steps that follow.
    struct ks_pool *pool;
    // borrowed, may be NULL (full detail): detail.gpus (follow.h), the
    // sampled GPUs' steps; a sampled GPU publishes its steps there, a
    // follower follows them (it needs ops.queue_jobs)
    struct ks_follow *follow;
    int sampled;
};

// A request queued for admission.
struct ks_step_queued {
    struct ks_request_spec spec;
    double prefilled; // seconds: when a prefill pool produced its first token; < 0: prefilled here
};

struct ks_step {
    struct ks_step_params p;
    struct ks_active_set act;        // the admitted requests
    struct ks_rng rng;               // the selections' randomness (seed * 1000003 + gpu)
    struct ks_step_queued *pending;  // [n_pending] queued, oldest first
    uint32_t n_pending, cap_pending;
    uint32_t step;                   // the cache's step clock (ks_cache_step), from 1
    uint64_t l1_version;             // L1's mapping when the pointer table was last built
    // the current decode step
    double kv_bytes;                 // KV bytes its selections read
    double layer_time;               // modelled seconds of one layer (cost.h)
    uint32_t comm_tokens;            // tokens of the step (its collectives carry their activations)
    uint32_t prefill_tokens;         // fused: prompt tokens the iteration prefills beside its decode step
    double prefill_compute;          // fused: seconds of their matrix work (ks_cost_prefill)
    uint32_t (*outside)[KS_TIERS];   // [layers] selected blocks read outside L1, per layer and tier
    double last_step, last_stall;    // seconds: the last decode step, its stall
    double begin_wait;               // seconds this iteration waited to begin (set by ops.iteration: the
                                     // simulator's ranks in lockstep wait for their group); part of its
                                     // /steps record's step_time
    double last_sample;              // seconds: the last /steps record (-INFINITY: none yet)
    // buffers (one request and layer at a time), cap entries each
    uint32_t cap;
    uint32_t *sel, *dist;
    float *mass;
    struct ks_access *acc;
    uint8_t *where;
    struct ks_step_miss *miss;       // this step's accesses that missed L1
    uint32_t n_miss, cap_miss;
    struct ks_step_moving *moving;   // [cap_moving]: a hash of this step's batches' blocks (moving_to)
    uint32_t cap_moving;
    unsigned moving_bits;            // moving has 2^moving_bits slots
    int moving_built;                // moving holds this step's batches
    // cache.layer_prefetch: mark[b] == stamp when the request's previous
    // layer (group) selected block b in this step
    uint32_t *mark, cap_mark, stamp;
    struct ks_step_ahead *ahead;     // the next step's selections, drawn by p.pool; NULL: none
    int defer;                       // selections of requests all in L1 may be deferred (settle_draws)
    // the decode step's cache work up to its plan (ops.yield): what it sums
    // for the step, its plan, and its status with the reason
    struct ks_step_front {
        struct ks_pool_job job;
        double kv_hbm, attn, wflops, aflops, iflops; // access_all's sums
        uint32_t tokens, kept, sat_out, now_step;
        struct ks_plan plan;
        int st;
        char err[1024]; // as long as the decode actor's (decode.c)
    } front;
    // detail.gpus: the current step's numbers (a sampled GPU's to publish),
    // and a follower's batches, jobs and carries
    struct ks_follow_shape shape;
    struct ks_follow_out fo;
};

// Initialises a driver in caller storage; *p is copied. KS_OK or KS_ENOMEM.
int ks_step_init(struct ks_step *d, const struct ks_step_params *p);
// Releases the driver's buffers and active set (the requests' `user` state
// is the caller's: release it first). Safe on a driver whose init failed.
void ks_step_fini(struct ks_step *d);

// Queues a request for admission. KS_OK or KS_ENOMEM.
int ks_step_push(struct ks_step *d, const struct ks_request_spec *spec, double prefilled);

// Requests on this GPU or queued for it.
uint32_t ks_step_load(const struct ks_step *d);

// The tokens a decode step of the requests decoding now would verify (one
// each, 1 + speculative.draft_tokens with speculative decoding): what
// another rank of an expert group puts through its MoE layers.
uint32_t ks_step_decode_tokens(const struct ks_step *d);

// Iterates until the scenario's duration, or until idle says nothing more
// will come (a run of workload.requests: they have all finished), then
// records the requests still admitted as unfinished. KS_OK,
// or a status with the reason in err.
int ks_step_run(struct ks_step *d, char *err, size_t len);

// One decode step of the admitted requests past their prefill (what
// ks_step_run does each iteration that has any). KS_OK, or a status with the
// reason in err.
int ks_step_decode(struct ks_step *d, char *err, size_t len);

#endif
