// recorder.h - access traces recorded from synthetic attention run through
// the kernels.
//
// Per request (prompt lengths drawn by the scenario's workload) and layer, a
// paged fp16 KV cache holds the synthetic keys (synth.h) and pseudo-random
// values of the prompt; every decode step appends the new token's K and V,
// summarises a block when it fills, selects sink + window + top-k by the
// Quest bound and runs the block-sparse decode kernel, whose access report
// gives the blocks read and the exact attention mass of each: one trace
// record (trace.h) per (request, step, layer). Each record's kernel_time is
// the decode kernel's call alone, one sequence and one layer (with the CUDA
// kernels: from an idle device until it is idle again, launch included).
#ifndef KS_RECORDER_H
#define KS_RECORDER_H

#include <stddef.h>
#include <stdint.h>

#include "scenario.h"

// The synthetic attention presets (sim/workload/synth.h), in the order of
// sparse.preset's choices; NULL-terminated.
extern const char *const ks_recorder_presets[];

struct ks_recorder_params {
    const struct ks_scenario *sc; // borrowed; must outlive the recorder
    const char *path;             // the trace file, written whole or not at all
    uint32_t requests;            // requests to record
    uint32_t steps;               // decode steps per request
    int preset;                   // an index of ks_recorder_presets; -1: sc's sparse.preset
    int cuda;                     // 1: the `_cuda` kernels on device memory; 0: the C references
    // called after each request recorded (may be NULL): done of total, and
    // seconds since the first began
    void (*progress)(void *arg, uint32_t done, uint32_t total, double seconds);
    // asked after each request recorded (may be NULL): non-zero stops the
    // recording, which then fails with KS_ESTATE and writes no file
    int (*stop)(void *arg);
    void *arg;
};

// What a recording wrote.
struct ks_recorder_stats {
    char source[128];      // the trace's source attribute (ks_trace_meta)
    uint32_t layers;       // per step
    uint64_t records;      // (request, step, layer) records
    uint64_t selected;     // blocks selected, all records
    double kernel_seconds; // decode kernel seconds, summed over the records
    double wall_s;         // seconds recording took, the trace's commit included
};

struct ks_recorder;

// A recorder for p (copied; p->sc is borrowed): the scenario's shape checked
// against the kernels' limits, its synthetic attention and its workload
// made. NULL with the reason in err. Free with ks_recorder_free.
struct ks_recorder *ks_recorder_new(const struct ks_recorder_params *p, char *err, size_t len);

// Records p->requests requests into p->path, once per recorder. KS_OK with
// *out filled, or a status with the reason in err (and no file written).
int ks_recorder_run(struct ks_recorder *r, struct ks_recorder_stats *out, char *err, size_t len);

// NULL is a no-op.
void ks_recorder_free(struct ks_recorder *r);

#endif
