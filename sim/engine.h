// engine.h - one simulation: a scenario's requests decoded on its platform.
//
// SimGrid owns time and contention; per GPU a cache manager (cache.h)
// decides placement. Actors, all long-lived:
//   router      (node 0's CPU) releases the workload's requests at their
//               arrival times to the GPUs: in turn, to the least loaded, or
//               by prefix affinity (scenario field `router`);
//   decode      (one per GPU) admits requests while L1 can hold their share
//               of the batch, prefills them, then runs decode steps: select
//               blocks, report the accesses, plan migrations, wait layer
//               by layer only for the batches that carry blocks that layer
//               needs, compute; the step ends when all its batches have
//               landed (the rest of the wait counts as stall), so the next
//               step meets a mapping that does not depend on copy timing;
//   lane        (KS_ENGINE_LANES per GPU, the staging pool) execute migration
//               batches in priority order, each one SimGrid transfer from the
//               source tier's host to the destination tier's host, and
//               confirm them to the cache manager.
//   prefill     (disaggregated prefill only: prefill.gpus workers on the
//               pool's host) prefill requests in arrival order and send
//               their KV over the network to the decode GPU's host DRAM.
// Step time: the host's scheduling cost (sched_overhead), a rebuild of the
// resident-block pointer table (table_rebuild) when L1's mapping changed
// since the last step, the stall for needed blocks, the selected blocks
// read outside L1 (a miss whose promotion found no room this step is read
// where it lies, into a scratch page before its layer: one transfer after
// the other over its tier's route to the GPU, as the runtime does), and per
// layer the weight bytes / HBM bandwidth plus, for each decoding request,
// its attention: with sparse.kernel_time = "trace", the replayed trace's
// kernel_time for that (step, layer) when measured (>= 0), else the profile's kernel-time table at its
// selected blocks, else the KV bytes of its selected tokens / HBM
// bandwidth. Prefill of n new tokens
// after c cached ones: (2 * parameters * n + 4 * layers * q_heads *
// head_dim * (n * c + n * (n + 1) / 2)) / (flops * prefill_efficiency),
// with parameters = weight bytes / 2 (16-bit weights); the second term is
// causal attention (QK^T and PV). Prefill produces the first token; each
// decode step one more. Colocated, a GPU's prefill holds up its decode
// steps; disaggregated, the pool prefills and the prompt's KV lands in L2.
//
// A process runs one simulation (SimGrid initialises once per process).
#ifndef KS_ENGINE_H
#define KS_ENGINE_H

#include <stddef.h>
#include <stdint.h>

#include "cache.h"
#include "hist.h"
#include "scenario.h"

#define KS_ENGINE_LANES 4 // concurrent migration batches per GPU

// One finished (or cut off) request.
struct ks_request_record {
    uint64_t id;
    uint64_t session;        // multi-turn session (a single-turn request is its own)
    uint32_t turn;           // 0, 1, ... within the session
    uint32_t gpu;
    uint32_t prompt, output; // tokens asked for
    uint32_t generated;      // tokens produced before the end of the run
    double arrival, admitted, first_token, finish; // seconds; finish < 0: not finished
    double tpot_mean, tpot_max;                     // seconds
};

// One GPU's state, sampled about every KS_ENGINE_SAMPLES-th of the duration
// (at the first step boundary after each sample time).
struct ks_step_record {
    double t;           // seconds
    uint32_t gpu;
    uint32_t batch;     // requests decoding
    uint32_t pending;   // requests waiting for admission
    uint32_t occupancy[KS_TIERS]; // pages in use per tier
    double step_time;   // seconds, the last decode step (stall included)
    double stall;       // seconds of that step waiting for needed blocks
    uint64_t found[KS_TIERS];     // accesses so far that found the block in each tier
    uint64_t bytes_up, bytes_down; // bytes migrated so far towards L1 / away from it
};
#define KS_ENGINE_SAMPLES 1000

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
#define KS_ENGINE_LINK_SAMPLES 100

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
    struct ks_hist *ttft, *tpot; // seconds
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
    uint64_t table_rebuilds;  // resident-pointer table rebuilds, all GPUs
    double host_time;         // seconds of host costs in decode steps, all GPUs
    double prefill_time;      // seconds of prefill compute (on decode GPUs or the pool)
    uint64_t kv_sent;         // disaggregated: prompt KV bytes sent by the prefill pool
    double copy_seconds;      // migration batches: time from a lane taking one to its landing, summed
    uint64_t copy_bytes;      // migration batches: their bytes, summed
};

// How a scenario sizes one GPU: what the engine and the runtime
// (kernels/runtime.h) share so that both drive the same cache manager.
struct ks_engine_sizing {
    uint64_t block_bytes[KS_TIERS]; // bytes of one block of one layer in each tier (compression shrinks L2, L3)
    uint64_t token_bytes;           // KV bytes of one token, all layers
    uint64_t admit_blocks;          // blocks of admitted requests (at full length) one GPU may hold
    uint64_t l1_pages;              // L1 pages per GPU
};

// A migration batch queued for a GPU's lanes (engine and runtime alike).
struct ks_engine_job {
    struct ks_batch *b;
    uint32_t layer;  // needed: the first layer whose compute waits for it
    uint8_t needed;  // decode waits for it
    uint8_t running; // a lane has it
    uint8_t landed;  // its bytes have arrived (confirmed at the step's end)
};

// Whether L1's mapping (its placements and removals) changed since the
// version in *version, which it updates: a step that begins so rebuilds the
// resident-block pointer table (the engine charges table_rebuild; the runtime
// counts it the same way).
int ks_engine_l1_changed(const struct ks_cache *c, uint64_t *version);

// The job for batch b of a plan: needed when it carries misses, then from
// the first layer (group) any of its missed blocks belongs to. Prefetches
// that share the batch do not make an earlier layer wait: this step does
// not read them.
struct ks_engine_job ks_engine_job_of(const struct ks_cache *c, struct ks_batch *b);

// The most urgent job that is neither running nor landed and whose `after`
// batch has landed, or -1.
int ks_engine_next_job(const struct ks_engine_job *jobs, uint32_t n);

// Whether a needed job for a layer up to `layer` has not landed yet.
int ks_engine_needed_unlanded(const struct ks_engine_job *jobs, uint32_t n, uint32_t layer);

// Whether every job has landed.
int ks_engine_all_landed(const struct ks_engine_job *jobs, uint32_t n);

// Appends one request record to r (a record that finds no memory is lost:
// one row of /requests, nothing else).
void ks_run_result_add_request(struct ks_run_result *r, const struct ks_request_record *rec);

// A new /steps record in r with the cache's occupancy, accesses found per
// tier and bytes migrated so far filled in; NULL when out of memory (the
// time series loses a point, nothing else).
struct ks_step_record *ks_run_result_add_step(struct ks_run_result *r, const struct ks_cache *c);

// Fills the cache manager's parameters (cp->seed is the scenario's; GPU i
// of a cluster adds i) and *z. KS_OK, or KS_EINVAL with the reason in err
// (L1 smaller than one block).
int ks_engine_size(const struct ks_scenario *s, struct ks_cache_params *cp, struct ks_engine_sizing *z, char *err,
                   size_t len);

// A decode step's L1 reserve (ks_cache_set_reserve) for n_act admitted
// requests: one page per request and layer, at most a quarter of L1.
uint32_t ks_engine_reserve(const struct ks_scenario *s, const struct ks_engine_sizing *z, uint32_t n_act);

// A decode step's prefetch budget (ks_cache_plan) when its selections read
// kv_bytes: what the host link carries while HBM reads them, at least one
// full migration batch.
uint64_t ks_engine_budget(const struct ks_scenario *s, const struct ks_engine_sizing *z, double kv_bytes);

// Runs the scenario. KS_OK with *r filled (release with ks_run_result_fini),
// or a status with the reason in err.
int ks_engine_run(const struct ks_scenario *s, struct ks_run_result *r, char *err, size_t len);
void ks_run_result_fini(struct ks_run_result *r);

#endif
