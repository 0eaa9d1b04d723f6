// trace.h - access traces: which blocks each decode step selected, per layer.
//
// A trace is an HDF5 file (schema in results/README.md) that carries, per
// request, decode step and layer, the KV blocks the sparse attention selected
// and the attention mass each received, with the kernel time where it was
// measured, plus the model shape and block size it was taken with. `kvstrata
// trace record` writes one from synthetic attention and the kernels; users
// write one from their own serving system; `kvstrata run` replays one
// (sparse.policy = "trace"), `kvstrata trace stats` summarises one.
//
// Invariants of a loaded trace (ks_trace_load refuses a file that breaks
// them, naming the record): records sorted by (request, step, layer), steps
// of a request numbered 0, 1, ... without gaps, every step holding every
// layer 0 .. layers-1; each record's blocks lie below ceil(context /
// block_size), appear once, and carry a finite mass >= 0; a record's
// kernel_time is finite, or negative (not measured).
#ifndef KS_TRACE_H
#define KS_TRACE_H

#include <stddef.h>
#include <stdint.h>

#define KS_TRACE_FORMAT "kvstrata-trace"
#define KS_TRACE_VERSION 1

struct ks_trace_meta {
    uint32_t block_size;             // tokens per block
    uint32_t layers, kv_heads, q_heads, head_dim;
    char dtype[16];                  // of the KV cache: "fp16", "int8", ...
    char source[128];                // what produced it, e.g. "synthetic drifting, C reference kernels"
};

// One (request, step, layer): its selection is sel[first .. first + n).
struct ks_trace_step {
    uint32_t request;    // 0 .. n_requests-1
    uint32_t step;       // decode step of the request, from 0
    uint32_t layer;
    uint32_t context;    // tokens in the KV cache at this step
    uint64_t first;      // row of its first selected block in /selected
    uint32_t n;          // blocks selected
    double kernel_time;  // seconds of the attention kernel that gave the selection, < 0: not measured
};

struct ks_trace_sel {
    uint32_t block; // block index within the request's sequence
    float mass;     // attention mass the block received (a step's masses sum to about 1)
};

// Blocks of a context of `context` tokens: ceil(context / block_size), the
// bound every selected block lies below.
size_t ks_trace_blocks(const struct ks_trace_meta *m, uint32_t context);

// ---- writing -------------------------------------------------------------

struct ks_trace_writer;

// Starts a trace at `path` (written whole or not at all: a partial file is
// renamed into place by commit). NULL with the reason in err; else every
// later failure of w writes its reason into err (borrowed: it outlives w).
struct ks_trace_writer *ks_trace_writer_open(const char *path, const struct ks_trace_meta *m, char *err, size_t len);

// Appends one (request, step, layer) in the order the invariants above
// require. KS_OK, KS_EINVAL (out of order, a block out of range) or KS_EIO.
int ks_trace_writer_add(struct ks_trace_writer *w, uint32_t request, uint32_t step, uint32_t layer,
                        uint32_t context, const uint32_t *blocks, const float *mass, uint32_t n,
                        double kernel_time);

// Writes the remaining records and renames the file into place; frees w.
int ks_trace_writer_commit(struct ks_trace_writer *w);

// Removes the partial file; frees w. NULL is a no-op.
void ks_trace_writer_abort(struct ks_trace_writer *w);

// ---- reading -------------------------------------------------------------

struct ks_trace {
    struct ks_trace_meta meta;
    struct ks_trace_step *steps; // [n_steps], sorted by (request, step, layer)
    size_t n_steps;
    struct ks_trace_sel *sel;    // [n_sel]
    size_t n_sel;
    uint32_t n_requests;
    size_t *req_first;           // [n_requests]: row of the request's first step record
    uint32_t *req_steps;         // [n_requests]: decode steps recorded
};

// Reads a whole trace into memory and checks it. NULL with "FILE: reason"
// (the dataset, record and field at fault) in err. Free with ks_trace_free.
struct ks_trace *ks_trace_load(const char *path, char *err, size_t len);
void ks_trace_free(struct ks_trace *t);

// The record of (request, step, layer), or NULL when the trace has none.
const struct ks_trace_step *ks_trace_at(const struct ks_trace *t, uint32_t request, uint32_t step, uint32_t layer);

#endif
