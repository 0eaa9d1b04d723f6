// runtime.h - the real runtime: a scenario's decode steps executed for real
// on this machine by the same cache manager the simulator drives.
//
// CPU mode: L1 and L2 are RAM arenas allocated once ([pages][block] fp16 K and
// V; L1 keeps K and V in two arrays, the layout the attention kernels read),
// L3 a file on disk opened with O_DIRECT and read and written through
// io_uring. KS_STEP_LANES migration threads execute the cache manager's
// batches (memcpy between arenas, O_DIRECT reads and writes for L3); the
// decode thread attends with the C reference sparse decode kernel
// (kernels/decode.h) over the blocks the scenario's sparse policy selects,
// layer by layer, waiting only for the batches that carry blocks the layer
// needs. The block contents are real fp16 data written when a block is
// created, every value a function of (request, layer, block, token, head,
// dim), so that two blocks differ in every value (tiers.c); the kernel reads
// every selected block from the page the cache manager maps it to.
//
// GPU mode (params.gpu): L1 is device memory and L2 pinned host memory, each
// allocated once. Every lane has its own CUDA stream, the migration streams:
// a batch between L1 and L2 is one batched copy (cudaMemcpyBatchAsync, both
// halves of every block); with an L3, a lane's pinned stage meets the file
// (O_DIRECT) and device memory, one batched copy per 64 blocks. Once
// a batch's copies are enqueued the lane records its job slot's CUDA event
// (one per slot, made once), marks the batch enqueued, then waits for the
// event and marks it landed. The decode thread waits on the host only until
// the batches that carry a layer's misses, or an in-flight block it reads in
// L1, are enqueued; the launch then makes the decode stream wait for their
// events (cudaStreamWaitEvent) after uploading the kernel's inputs, so the
// kernel waits for those copies on the device. Host memory that meets the
// device (the kernel's inputs and outputs, new blocks' KV, the stages) is
// pinned; pinned memory that meets the L3 file is checked to be aligned
// for O_DIRECT. A block in flight to L2 or L3
// is copied into a scratch page after a host wait for its landing, as in CPU
// mode; a step still ends when every batch has landed. The decode thread
// keeps a block table per layer on the device and uploads a launch's rows
// only when the entries the launch reads changed since their last upload
// (table_uploads, table_uploads_skipped). The stall of a step is the host's
// waiting; kernel_seconds is measured by CUDA events around the kernel's
// launches alone (after the device's waits for copies), launch_seconds is
// the host's whole launch.
// Decisions, reading rule and clock are those of CPU mode. GPU mode ran on
// an H200 on 2026-12-04 (results/device/2026-12-04_h200/): the same decisions
// as CPU mode and every launch's outputs within 1e-5; tests/runtime/test_runtime.c
// checks it against CPU mode where a GPU answers.
//
// The decode thread runs the simulator's step driver (sim/step/step.h): the
// same code admits, prefills, selects, reports accesses (the heat map is fed
// the selection's masses; the kernel's own access report is checked against
// the selection), plans, confirms in plan order once every batch has landed
// and emits tokens. The runtime gives it time: its operations are the
// lanes' threads and condition variables (CUDA streams and events in GPU
// mode) and the kernel launches of a layer. The lanes take the step's jobs
// by the simulator's rule (ks_step_next_job), a layer's misses only once the
// step has reached that layer where its selection depends on the layer's
// query (ops.c, layer_starts). So a run of the simulator and a
// run of the runtime on the same scenario and seed see the same accesses and
// the same hit rates, and a change of the step is made once.
// Reading rule (the safety argument): a batch may write into the pages of a
// batch that has landed but is not confirmed yet, so the decode thread never
// reads a block that is in flight from its source page: it waits for the
// block's batch to land and reads the destination page (an L2 or L3 block
// is first copied into a scratch page of the L1 arrays). A block that is not
// in flight is read from its page, which no batch of the step writes. Every
// read goes through the request's resident-pointer table: an entry (page,
// tier, migration generation) kept from the block's last read, checked
// against the block's generation before the read (ks_cache_current) and
// located afresh only when the block moved since (table_refreshed counts
// them; a block in the step's batches is always located afresh). After the
// launch every read is validated again (ks_cache_validate); the count of
// refused reads is reported (it stays 0 when the rule holds: nothing is
// confirmed while the kernel reads).
//
// Time: a monotonic clock that stops while the runtime does work the
// simulator does not model as decode time: writing a prompt's KV at
// admission (the simulator's prefill stands for it; validation scenarios
// make prefill free) and computing a selection (synthetic queries, keys and
// scoring stand in for the model's own forward pass). It runs through the
// cache manager's calls, the lanes' copies, the waits for needed blocks and
// the attention kernel.
//
// Supported scenarios: one node with one GPU, closed arrivals with a
// request count, single-turn requests, colocated prefill, fp16 KV without
// compression, an L3 SSD or none, eviction heat/lru/lfu; anything else is
// refused with the reason. With an L3, half a block (its K or its V) must be
// a multiple of 4096 bytes (O_DIRECT).
#ifndef KS_RUNTIME_H
#define KS_RUNTIME_H

#include <stddef.h>
#include <stdint.h>

#include "runresult.h"
#include "scenario.h"

struct ks_runtime_params {
    const char *dir; // folder of the L3 file (disk-backed, O_DIRECT); NULL: /var/tmp
    int progress;    // a progress line on stderr
    int gpu;         // GPU mode (see above); needs the CUDA kernels and a device
    int skip_gen_check; // tests only: read table entries without their generation check, so
                        // that blocks which moved are read from their old pages (a negative
                        // control: the outputs change and stale_refused counts them)
    size_t stale_reads; // tests only, with skip_gen_check in CPU mode: trust only the first
                        // stale_reads stale entries whose old L1 page holds other data than
                        // their block's, locate the others afresh (0: trust every entry)
    size_t keep_rows;   // launch log (struct ks_runtime_extra): outputs kept, in rows (one
                        // sequence's q_heads x head_dim fp32 in one launch), from the first
                        // launch on; the log stops at the first launch that does not fit. 0: none
};

// One kernel launch of the launch log: the decode step, the layer, and its
// sequences' output rows in the log (rows row .. row + n_seqs - 1).
struct ks_runtime_launch {
    uint32_t step;          // decode step, from 0
    uint32_t layer;
    uint32_t part;          // launches of this step and layer before it (scratch pages ran out)
    uint32_t n_seqs;        // sequences it decoded
    uint64_t row;           // its first row in out_rows and row_req
    uint32_t stale_refused; // of its reads, those ks_cache_validate refused after it
};

// What the runtime counts besides struct ks_run_result.
struct ks_runtime_extra {
    uint64_t kernel_launches;  // sparse decode kernel calls
    uint64_t reads;            // selected blocks the kernel read
    uint64_t reads_inflight;   // of them: in flight when located, read from their destination
    uint64_t reads_scratch;    // of them: not in L1, copied into a scratch page first
    uint64_t stale_refused;    // reads ks_cache_validate refused (0 when the reading rule holds)
    uint64_t table_refreshed;  // table entries found stale by the generation check before a read
                               // (the block had moved since it was last read), located afresh
    uint64_t table_uploads;    // GPU mode: launches that uploaded block table rows to the device (rows
                               // whose entries the launch reads differ from what the device holds)
    uint64_t table_uploads_skipped; // GPU mode: launches whose rows the device held already (0 in CPU mode)
    double paused;             // seconds the clock stood still (prompt KV, selections)
    double kernel_seconds;     // time in the attention kernel: CPU mode the decode thread's,
                               // GPU mode CUDA events around the kernel's launches alone
    double launch_seconds;     // decode thread time from a launch's first upload to its outputs
                               // on the host (GPU mode: uploads, the device's waits for copies,
                               // kernel, downloads, sync; CPU mode = kernel_seconds)
    double out_checksum;       // sum of every output element of every launch (CPU and GPU mode
                               // agree to rounding); the launch log below is the sharp check
    double out_magnitude;      // sum of their absolute values (the scale of that agreement)
    // the launch log (params.keep_rows): every launch while its rows fit, in
    // order, and each decoded sequence's outputs. Every value of a block's KV
    // is a hash of (request, layer, block, token, head, dim), so a block read
    // from a wrong page changes its launch's row. Freed by ks_runtime_extra_fini.
    struct ks_runtime_launch *launches; // [n_launches]
    uint64_t n_launches;
    uint64_t launches_unlogged; // launches after the log was full
    float *out_rows;            // [n_rows][row_elems] fp32 outputs, [q_heads][head_dim] per row
    uint32_t *row_req;          // [n_rows] the request of each row
    uint64_t n_rows;
    size_t row_elems;
    double copy_seconds;       // lane time spent copying, all lanes
    uint64_t copy_bytes;       // bytes the lanes copied
    uint64_t copies_ahead;     // needed batches a lane took before the step reached the layer whose
                               // selection chose them: 0 where selections are made layer by layer
    // the kernel's speed step by step: each decode step's kernel seconds over
    // its block reads (NaN: it read none), and their quantiles over the steps
    // that read (0 without any; to ks_hist's 0.78%)
    double *step_kernel;       // [n_step_kernel] seconds per block read; freed by ks_runtime_extra_fini
    size_t n_step_kernel;
    double step_kernel_p10, step_kernel_p50, step_kernel_p90, step_kernel_p99; // seconds per block read
};

// Frees what ks_runtime_run left in x (x itself is the caller's). NULL is a no-op.
void ks_runtime_extra_fini(struct ks_runtime_extra *x);

// Two launch logs compared launch by launch (ks_runtime_compare): a launch
// differs when its step, layer, part or requests differ, or when one of its
// rows has a normalised error ||b - a|| / ||a|| (a the reference; a NaN, or
// a zero row against a non-zero one, counts as infinite) above tol.
struct ks_runtime_diff {
    uint64_t launches;   // launches compared (the shorter log's)
    uint64_t differing;  // of them: launches that differ
    int64_t first;       // the first that differs (index in the logs); -1: none
    uint32_t step, layer, part; // where it is
    uint32_t seq, req;   // its first row beyond tol: the sequence in the launch, its request
    double err;          // that row's normalised error (INFINITY: the launches' shapes differ)
    double max_err;      // the largest normalised error over every row compared
};

// Compares b's launch log against a's (see above) into *d; returns d->differing.
uint64_t ks_runtime_compare(const struct ks_runtime_extra *a, const struct ks_runtime_extra *b, double tol,
                            struct ks_runtime_diff *d);

// Non-zero when the runtime can run s; else 0 with the reason in why.
int ks_runtime_supports(const struct ks_scenario *s, char *why, size_t len);

// Runs s for real. KS_OK with *r filled (release with ks_run_result_fini)
// and *x (may be NULL) filled; or a status with the reason in err.
int ks_runtime_run(const struct ks_scenario *s, const struct ks_runtime_params *p, struct ks_run_result *r,
                   struct ks_runtime_extra *x, char *err, size_t len);

#endif
