// bench.h - the attention kernels timed: each kernel against the selected
// blocks per sequence, the batch and the head shape, on the GPU (the `_cuda`
// kernels) or the CPU (the `_ref` kernels), and the sparse decode times
// written as a profile's kernel_time table.
//
// `kvstrata bench kernels` (sim/cli/bench_kernels_cmd.c), `calib gpu` and
// `validate --measure-kernels` time through here, so that a table in a
// profile and a table measured for a run come from one clock and one set of
// inputs. The library links the kernels and sim/base only: no SimGrid, Lua
// or HDF5, so that kvstrata-device carries it to a GPU machine. It never
// prints: progress goes to the caller's callback, failures to its buffer.
// How inputs are made and points are timed is written at the top of bench.c.
#ifndef KS_BENCH_H
#define KS_BENCH_H

#include <stddef.h>
#include <stdint.h>

enum ks_bench_kernel {
    KS_BENCH_SUMMARY,
    KS_BENCH_SELECT,
    KS_BENCH_SPARSE,
    KS_BENCH_SPARSE_I8,
    KS_BENCH_DENSE,
    KS_BENCH_N_KERNELS
};
// "summary", "select", "sparse", "sparse_i8", "dense": indexed by enum ks_bench_kernel
extern const char *const ks_bench_kernel_names[KS_BENCH_N_KERNELS];

enum {
    KS_BENCH_LAYERS = 8,      // block tables cycled through by successive calls
    KS_BENCH_MAX_LIST = 32,   // block counts or batches of one sweep, at most
    KS_BENCH_GOAL_BLOCKS = 64, // the goal: sparse at >= 64 selected blocks ...
    KS_BENCH_GOAL_BATCH = 32, // ... and batch 32 ...
};
#define KS_BENCH_GOAL_RATIO 0.7    // ... reaches 70% of the device copy bandwidth
#define KS_BENCH_MIN_SAMPLE_S 1e-3 // seconds, at least, per sample

// The lists `bench kernels` times by default, as its options show them.
#define KS_BENCH_DEFAULT_KERNELS "summary,select,sparse,sparse_i8,dense"
#define KS_BENCH_DEFAULT_BLOCKS "8,16,32,64,128,256"
#define KS_BENCH_DEFAULT_BATCH "1,8,32"

// One sweep: every kernel in run[] at every batch and block count.
struct ks_bench_params {
    uint32_t kv_heads, q_heads, head_dim, block_size;
    uint32_t context;                   // tokens per sequence, a multiple of block_size
    uint32_t repeat;                    // timed samples per point (median)
    uint64_t seed;                      // of every random input
    int cuda;                           // 1: the CUDA kernels on the GPU, 0: the C references
    int run[KS_BENCH_N_KERNELS];        // 1: time that kernel
    uint32_t blocks[KS_BENCH_MAX_LIST]; // blocks per sequence, ascending and distinct
    size_t n_blocks;                    // >= 1
    uint32_t batch[KS_BENCH_MAX_LIST];  // sequences per call, ascending and distinct
    size_t n_batch;                     // >= 1
};

// The default shape, context, repeat and seed of `bench kernels`; no kernel
// chosen and the lists empty (KS_BENCH_DEFAULT_* give them as text).
void ks_bench_params_default(struct ks_bench_params *p);

struct ks_bench_result {
    enum ks_bench_kernel kernel;
    uint32_t blocks, batch, inner; // inner: calls per sample
    double median, min;            // seconds per call
    double bytes;                  // KV bytes read per call (decode kernels), else 0
};

// What ks_bench_run tells its caller before each point (may be NULL).
struct ks_bench_progress {
    void (*fn)(void *ctx, enum ks_bench_kernel k, uint32_t batch, uint32_t blocks);
    void *ctx;
};

// Times every point of p, kernel by kernel, batch by batch, block count by
// block count: *res receives a heap array of the results (the caller frees
// it) and *n their number. KS_KERNEL_OK, or a kernel status with the reason
// in err (*res NULL then): the inputs cannot be made, memory runs out, or a
// point fails.
int ks_bench_run(const struct ks_bench_params *p, const struct ks_bench_progress *pr, struct ks_bench_result **res,
                 size_t *n, char *err, size_t len);

// The device's own copy bandwidth, the yardstick of the decode kernels.
struct ks_bench_copy {
    double bytes_per_s; // 0: not measured
    char note[300];     // how it was measured, or why not
};

// Times device-to-device copies when cuda, else says why there is no figure.
void ks_bench_copy_measure(int cuda, struct ks_bench_copy *c);

// The goal: the smallest ratio of sparse bandwidth to the copy's over
// the points it names (KS_BENCH_GOAL_*); NaN when none was measured.
double ks_bench_goal_ratio(const struct ks_bench_result *res, size_t n, const struct ks_bench_copy *c);

// Where the times were taken, as a table's source names it.
struct ks_bench_machine {
    char host[256];
    char device[256]; // CPU model (ref) or GPU name (cuda)
    char date[32];    // UTC, ISO 8601
};

void ks_bench_machine_init(struct ks_bench_machine *m, int cuda);

// 0 when the directory of path can take a new file; for failing early.
int ks_bench_profile_dir_ok(const char *path);

// Writes the sparse decode times of res at the largest batch of p to path as
// `return { kernel_time = {...} }`, its source naming cmdline and m, through
// a temporary file renamed over it: a failure leaves no file. KS_OK, or a
// status when the file cannot be written.
int ks_bench_write_profile(const char *path, const struct ks_bench_params *p, const struct ks_bench_machine *m,
                           const struct ks_bench_result *res, size_t n, const char *cmdline);

// The head shape, context and sampling of a kernel-time table.
struct ks_bench_shape {
    uint32_t kv_heads, q_heads, head_dim, block_size;
    uint32_t context; // tokens per sequence, a multiple of block_size
    uint32_t batch;   // sequences per call
    uint32_t repeat;  // timed samples per point (median)
    uint64_t seed;
    int cuda;         // 1: the CUDA kernel on the GPU, 0: the C reference on the CPU
};

#define KS_BENCH_MAX_BLOCKS 32 // block counts of one kernel-time table, at most

// The sparse decode kernel timed as `bench kernels --backend ref|cuda
// --kernels sparse` times it (sh->cuda picks the backend; cuda needs a GPU
// and CUDA built in): seconds[i] per call (one layer of the whole batch)
// with blocks[i] selected blocks per sequence (ascending, at most
// KS_BENCH_MAX_BLOCKS of them). KS_KERNEL_OK, or a kernel status with the
// reason in err.
int ks_bench_kernel_table(const struct ks_bench_shape *sh, const uint32_t *blocks, size_t n, double *seconds,
                          char *err, size_t len);

// The table `bench kernels --profile` writes with its default settings: the
// shape (backend left to the caller: sh->cuda = 0), batch = the largest
// default batch, and the default block counts in blocks (room for
// KS_BENCH_MAX_BLOCKS); their number in *n.
void ks_bench_kernel_defaults(struct ks_bench_shape *sh, uint32_t *blocks, size_t *n);

#endif
