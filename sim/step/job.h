// job.h - a decode step's migration batches as its lanes see them.
//
// The step driver (step.h) turns each batch of a plan into a job; the lanes
// of a backend (SimGrid actors in the simulator, threads in the runtime)
// take jobs in priority order and mark them landed; the driver's waits ask
// these predicates. A backend keeps its job list whole for its lanes: the
// runtime with a lock, the simulator by its actors switching only inside
// SimGrid calls (sim/engine/engine_impl.h).
#ifndef KS_JOB_H
#define KS_JOB_H

#include <stdint.h>

#include "cache.h"

#define KS_STEP_LANES 4 // concurrent migration batches per GPU (its staging pool)

struct ks_step_job {
    struct ks_batch *b;
    uint64_t bytes;  // what it moves: its batch's bytes, or its layer's share of them (ks_step_job_split)
    uint32_t layer;  // needed: the first layer whose compute waits for it
    uint32_t start;  // needed: the layer whose selection lets it start (layer, or layer - 1 when early)
    uint16_t part;   // which layer's share of its batch it moves (0: the whole batch)
    uint8_t needed;  // decode waits for it
    uint8_t running; // a lane has it
    uint8_t landed;  // its bytes have arrived (confirmed at the step's end)
};

// The job for batch b of a plan: needed when it carries misses (then only
// misses: migrate.c), from its layer (group: a batch carries one group's
// blocks, ks_batch.group). An early batch (struct
// ks_batch) of layer l > 0 may start with layer l - 1: the previous layer's
// selection chose its blocks too.
struct ks_step_job ks_step_job_of(struct ks_batch *b);

// detail.layers: a batch of one simulated layer (migrate.c: a batch carries
// one group's blocks) stands for `parts` batches, one per model layer of the
// group, each with as many blocks (a simulated block holds `parts` layers'
// bytes). Writes jobs[0 .. n)'s to out[0 .. n x parts): part p of a job
// moves its bytes / parts and is needed from model layer layer x parts + p
// (starting a layer earlier when early), so that layers wait for their own
// copies as at full detail; a job no layer waits for is split alike. The
// jobs of consecutive batches of one group go part by part (every batch's
// part 0, then every batch's part 1, ...), so that the lanes take them in a
// full-detail plan's order: layer by layer. parts = 1: the jobs as they are.
void ks_step_job_split(const struct ks_step_job *jobs, uint32_t n, uint32_t parts, struct ks_step_job *out);

// The most urgent job that is neither running nor landed and whose `after`
// batch has landed, or -1. A needed job whose start layer is past
// `layer_now` is not started yet: where a layer's selection is made when the
// layer runs (a query-dependent policy: its top-k needs the layer's query),
// the copies of its misses cannot start earlier. KS_NONE: every job may start.
// Jobs no layer waits for (demotions, prefetches, backups) hold at most
// KS_STEP_LANES - 1 lanes at once: one lane is kept for the copies a layer
// waits for, which a step's bulk demotions would otherwise hold up for as
// long as they take (as an engine loads on a stream of its own). Jobs before
// `from` have all landed (the caller's cursor: the list is not read there).
int ks_step_next_job(const struct ks_step_job *jobs, uint32_t n, uint32_t from, uint32_t layer_now);

// Whether a needed job for a layer up to `layer` has not landed yet.
int ks_step_needed_unlanded(const struct ks_step_job *jobs, uint32_t n, uint32_t layer);

// Layers from `layer` on that can run without waiting: 1 + the layers after
// it that no unlanded needed job holds up, up to `layers` in all (all the
// rest when no needed job is in flight). Call it once `layer` may run.
uint32_t ks_step_ready_layers(const struct ks_step_job *jobs, uint32_t n, uint32_t layer, uint32_t layers);

// The index in jobs[0..n) of the job whose batch job i waits for (its
// batch's `after`, the same part of it), KS_NONE when none. A plan's batches
// are numbered in plan order and queued in it: that job is looked for first
// where the difference of their ids puts it.
uint32_t ks_step_job_after(const struct ks_step_job *jobs, uint32_t n, uint32_t i);

// Whether every job has landed.
int ks_step_all_landed(const struct ks_step_job *jobs, uint32_t n);

#endif
