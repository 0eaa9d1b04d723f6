// selrecord.h - access traces of a selection model, recorded as a run's
// selection module (selection.h) returns them; no kernels run.
//
// For sparse.policy = "dsa" (dsa.h) the selections are a pure function of
// (seed, request id, the (step, layer) pairs asked in order, context): a
// trace records them so that a run replays them (sparse.policy = "trace"),
// the one policy whose future is known (cache.evict = "belady"). Per request
// it does what a run does: the workload's next request (its id and prompt
// length; recorder.h's clamp to model.max_context - steps), one
// ks_selection_open, then for decode steps 0 .. steps-1, with a context of
// prompt + step + 1 tokens (the step's own token included, as the run's),
// ks_selection_get of every layer in order, each selection written to the
// trace as it comes: the recorder keeps one selection in memory, the trace
// writer its compressed file image (results.h: the file is built in memory
// and written at commit). kernel_time is -1 (not measured).
//
// A run that replays the trace selects exactly what a dsa run selects when,
// for each request, the run's request id i is the trace's request i (the
// replay takes request id mod the trace's requests), its prompt is the one
// recorded (no clamp applied), it decodes at most `steps` steps (the replay
// wraps past them) and the scenario's seed, model.layers, cache.block_size
// and sparse.budget_tokens are the recording's, at full detail: a run at
// detail.layers below model.layers asks fewer layers, whose draws lean on
// the layer simulated below them (dsa.h's cross), so it selects with the
// same law but not the same draws.
#ifndef KS_SELRECORD_H
#define KS_SELRECORD_H

#include <stddef.h>
#include <stdint.h>

#include "recorder.h"
#include "scenario.h"

struct ks_selrecord_params {
    const struct ks_scenario *sc; // borrowed; its sparse.policy must be one ks_selrecord_supports
    const char *path;             // the trace file, written whole or not at all
    uint32_t requests;            // requests to record
    uint32_t steps;               // decode steps per request
    // called after each request recorded (may be NULL): done of total, and
    // seconds since the first began
    void (*progress)(void *arg, uint32_t done, uint32_t total, double seconds);
    // asked after each decode step (may be NULL): non-zero stops the
    // recording, which then fails with KS_ESTATE and writes no file
    int (*stop)(void *arg);
    void *arg;
};

// 1 when sc's sparse.policy is recorded by this module (dsa), else 0.
int ks_selrecord_supports(const struct ks_scenario *sc);

// Records p->requests requests into p->path. KS_OK with *out filled
// (kernel_seconds 0: nothing timed), or a status with the reason in err and
// no file written.
int ks_selrecord_run(const struct ks_selrecord_params *p, struct ks_recorder_stats *out, char *err, size_t len);

#endif
