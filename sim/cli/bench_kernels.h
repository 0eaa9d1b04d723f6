// bench_kernels.h - `kvstrata bench kernels`: attention kernel times against
// the number of selected blocks, batch and head shape, optionally written as
// a kernel-time table for a profile.
#ifndef KS_BENCH_KERNELS_H
#define KS_BENCH_KERNELS_H

#include <stddef.h>
#include <stdint.h>

#include "cli.h"

extern const struct ks_cli_cmd ks_bench_kernels_cmd;

// --backend of the commands that run kernels (bench kernels, trace record):
// the choices, NULL-terminated for KS_CLI_CHOICE, indexed by enum ks_bench_backend_kind.
enum ks_bench_backend_kind { KS_BENCH_AUTO, KS_BENCH_REF, KS_BENCH_CUDA };
extern const char *const ks_bench_backend_names[];

// What `want` runs on: 1 the CUDA kernels (auto: when a GPU answers), 0 the
// C references; -1 after reporting, as cmd, that cuda was asked for and no
// GPU answers (with ks_device_error's reason).
int ks_bench_backend(const struct ks_cli_cmd *cmd, int want);

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
