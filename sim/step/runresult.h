// runresult.h - what one run measured: counters, latency histograms and the
// records the HDF5 file keeps (requests, sampled steps, tiers, links).
//
// The simulator (sim/engine/engine.c) and the real runtime (kernels/runtime/runtime.c) fill
// the same result through the step driver (step.h), so that `kvstrata
// validate` compares like with like and both write the same file layout.
// Appending a record never fails the run: a record that finds no memory is
// lost, and only that record.
#ifndef KS_RUNRESULT_H
#define KS_RUNRESULT_H

#include <stddef.h>
#include <stdint.h>

#include "cache.h"
#include "hist.h"
#include "scenario.h"

// One finished (or cut off) request.
struct ks_request_record {
    uint64_t id;
    uint64_t session;        // multi-turn session (a single-turn request is its own)
    uint32_t turn;           // 0, 1, ... within the session
    uint32_t gpu;
    uint32_t prompt, output; // tokens asked for
    uint32_t generated;      // tokens produced before the end of the run
    double arrival, admitted, first_token, finish; // seconds; finish < 0: not finished
    double tpot;     // seconds: (finish - first_token) / (generated - 1); -1: unfinished or one token
    double e2el;     // seconds: finish - arrival; -1: unfinished
    double itl_max;  // seconds: the longest gap between two of its consecutive tokens (0: none)
};

// One GPU's state at the first step boundary in each sampling interval
// (ks_run_horizon / KS_RUN_SAMPLES wide) that has one.
struct ks_step_record {
    double t;           // seconds
    uint32_t gpu;
    uint32_t batch;     // requests decoding
    uint32_t pending;   // requests waiting for admission (retracted ones included)
    uint32_t occupancy[KS_TIERS]; // pages in use per tier
    double step_time;   // seconds, the last decode step (stall included)
    double stall;       // seconds of that step waiting for needed blocks
    uint64_t found[KS_TIERS];     // accesses so far that found the block in each tier
    uint64_t bytes_up, bytes_down; // bytes migrated so far towards L1 / away from it
    uint64_t tokens;    // output tokens so far on this GPU: a window's throughput is their difference
};
#define KS_RUN_SAMPLES 1000

// One tier of one GPU at the end of the run.
struct ks_tier_record {
    uint32_t gpu, tier;       // tier: 0 = L1, 1 = L2, 2 = L3
    uint32_t capacity, used, peak; // pages
    uint64_t block_bytes;     // bytes a block takes in this tier
    uint64_t mig_in, mig_out; // blocks that arrived and left by migration
    uint64_t alloc_fails;     // page requests that found the tier full
};

// One link at the end of the run (a full-duplex link is two: NAME_UP, NAME_DOWN).
struct ks_link_record {
    char name[32];
    double bandwidth, latency; // bytes/s, seconds
    double bytes;              // carried over the run
    double utilisation;        // bytes / (bandwidth * simulated time)
};

// Bytes a link carried up to time t (a transfer's bytes spread evenly over
// its duration).
struct ks_link_sample {
    double t;      // seconds
    uint32_t link; // index into ks_run_result.links
    double bytes;
};
#define KS_RUN_LINK_SAMPLES 100

struct ks_run_result {
    double sim_time;      // seconds simulated
    double wall_s;        // seconds of wall clock the simulation took
    uint64_t arrived, admitted, finished, tokens;
    uint64_t steps;       // decode steps, all GPUs
    double busy, stall;   // seconds, all GPUs: computing, waiting for needed blocks
    uint64_t peak_batch;  // most requests decoding at once on one GPU
    uint64_t unplanned;   // misses that found no page
    uint64_t outside_reads; // selected blocks the kernel read outside L1 (their promotion found no
                            // room): each fetched into a scratch page before its layer, one by one
    // seconds: TTFT of every request that produced its first token; ITL,
    // every gap between two consecutive tokens of a request; per finished
    // request, its TPOT (two tokens or more) and its end-to-end latency
    struct ks_hist *ttft, *itl, *tpot, *e2el;
    uint64_t prompt_tokens; // prompt tokens of the requests that produced their first token
    uint64_t good;          // finished requests that met every per-request objective set (slo.ttft, tpot, e2el)
    int truncated;          // 1: the duration ended a run of workload.requests before they all finished
    struct ks_cache_stats cache; // summed over GPUs
    struct ks_request_record *rec;
    size_t n_rec, cap_rec;
    struct ks_step_record *samples;
    size_t n_samples, cap_samples;
    struct ks_tier_record *tiers; // [n_tiers]: every GPU's tiers
    size_t n_tiers;
    struct ks_link_record *links; // [n_links]
    size_t n_links;
    struct ks_link_sample *link_samples;
    size_t n_link_samples, cap_link_samples;
    double sample_every;      // seconds: the width of a /steps interval (ks_run_horizon); 0: not set yet
    int sample_grows;         // 1: it doubles as the run outlives KS_RUN_SAMPLES of them
    uint64_t table_rebuilds;  // resident-pointer table rebuilds, all GPUs
    uint64_t steps_followed;  // detail.gpus: decode steps followers took from a sampled GPU's shape
    double host_time;         // seconds of host costs in decode steps, all GPUs
    double prefill_time;      // seconds of prefill compute (on decode GPUs or the pool)
    uint64_t kv_sent;         // disaggregated: prompt KV bytes sent by the prefill pool
    double copy_seconds;      // migration batches: time from a lane taking one to its landing, summed
    uint64_t copy_bytes;      // migration batches: their bytes, summed
    double backup_bytes;      // new KV copied to the host as it was written (device buffers)
    uint64_t sat_out;         // decode steps requests sat out while their cold region warmed up
    uint64_t retracted;       // requests retracted for room (scheduler.reserve = "estimate"; active.h)
    // decode steps' work, all GPUs (arch.h): weight bytes read (dense weights
    // and the experts the batch's tokens use), index-key bytes scanned, and
    // flops (weights, output head, attention over the selection, indexer)
    double weight_read_bytes, index_read_bytes, decode_flops;
    double compute_bound_time; // seconds of fused decode iterations whose compute outlasted their memory
    double comm_time;          // seconds of collectives (parallel.tp > 1), inside the layers' busy time
    double draft_time;         // seconds of the draft model's passes (speculative decoding), inside busy time
    double sync_time;          // seconds ranks waited for the others of their expert group (parallel.ranks =
                               // lockstep), outside busy time
};

// The time series (/steps, /link_samples) cut a horizon into KS_RUN_SAMPLES
// and KS_RUN_LINK_SAMPLES intervals. A run that ends at its duration (no
// workload.requests) has its duration as horizon. A run of workload.requests
// ends when they have finished, which is not known beforehand: its horizon
// starts at min(duration, KS_RUN_FIRST_HORIZON), and *grows is set: the
// series double their horizon, halving their resolution, each time the run
// outlives it, so they hold between half and all of their intervals.
#define KS_RUN_FIRST_HORIZON 1.0 // seconds
double ks_run_horizon(const struct ks_scenario *s, int *grows);

// Doubles r->sample_every and keeps, of each GPU's /steps records, the first
// in each interval of the new width: the records a run sampled at that width
// from its start would hold. Out of memory, the records stay as they are.
void ks_run_result_thin_steps(struct ks_run_result *r);

// Zeroes r and gives it its four histograms. KS_OK or KS_ENOMEM (r is then
// released).
int ks_run_result_init(struct ks_run_result *r);
// Releases everything r holds and zeroes it (r itself is the caller's).
void ks_run_result_fini(struct ks_run_result *r);

// detail.nodes: the figures of a sample of the cluster's nodes made the
// whole cluster's, each sum over the GPUs (counts, seconds, bytes, flops,
// the cache's counters) multiplied by f, the nodes each simulated node stands
// for; the distributions (TTFT, ITL, TPOT, E2EL), peak_batch and the records
// (/requests, /steps, /tiers, /links) stay the sample's. A new sum over GPUs
// in struct ks_run_result belongs here.
void ks_run_result_scale(struct ks_run_result *r, uint32_t f);

// Appends one request record to r.
void ks_run_result_add_request(struct ks_run_result *r, const struct ks_request_record *rec);

// A new /steps record in r with the cache's occupancy, accesses found per
// tier and bytes migrated so far filled in; NULL when out of memory (the
// time series loses a point, nothing else).
struct ks_step_record *ks_run_result_add_step(struct ks_run_result *r, const struct ks_cache *c);

// Appends the tiers of cache c (GPU `gpu`, block sizes block_bytes[tier])
// to r->tiers, which holds room for them, and with `stats` adds its
// statistics to r->cache (not a follower's, detail.gpus: it sees no access).
void ks_run_result_add_tiers(struct ks_run_result *r, const struct ks_cache *c, uint32_t gpu,
                             const uint64_t block_bytes[KS_TIERS], int stats);

#endif
