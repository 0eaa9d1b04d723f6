// gpu.h - `kvstrata calib gpu`: measures the GPU copies (gpubench.h) and the
// sparse decode kernel (kernels/bench, as `bench kernels --backend cuda
// --profile` times it with its defaults) and writes a profile with the GPU
// figures and the kernel_time table measured and the rest from a base.
//
// hbm_bw is the rate of a kernel that streams reads of 1 GiB (what the
// simulator's decode does with weights and KV); the device-to-device copy's
// rate stays in its source. copy_overhead is the fixed cost of one batched copy call (the intercept of
// ks_copy_batch_async over 1 to KS_GPU_BLOCKS blocks), what the engine
// charges per migration batch; pcie_bw is the pinned host-to-device fit's
// bandwidth and pcie_lat 0 (folded into copy_overhead).
#ifndef KS_GPU_H
#define KS_GPU_H

#include <stddef.h>

#include "bench.h"
#include "fit.h"
#include "machine.h"
#include "progress.h"

enum {
    KS_GPU_N_SIZES = 8,  // copy sizes, 4 KiB to 64 MiB
    KS_GPU_BLOCKS = 32,  // blocks of the largest batched call
    KS_GPU_N_BATCH = 6,  // batched calls fitted
    KS_GPU_N_SERIES = 4, // h2d and d2h, pinned and pageable
    KS_GPU_ITEM = 656,   // bytes of a scattered item: one token's latent cache in one layer (DeepSeek-V3.2, GLM-5.1)
    KS_GPU_N_ITEMS = 4,  // item counts timed, fitted per direction
    KS_GPU_CHAIN_SHORT = 256, KS_GPU_CHAIN_LONG = 4352, // dependent host loads of the two chains timed
};
#define KS_GPU_BLOCK ((size_t)128 << 10) // bytes per block, a runtime block's K and V

// The copy sizes timed here and by calib check's PCIe check.
extern const size_t ks_gpu_sizes[KS_GPU_N_SIZES];
// Blocks per batched call, fitted for the call's fixed cost; the last is KS_GPU_BLOCKS.
extern const int ks_gpu_batch_blocks[KS_GPU_N_BATCH];
// Items per call of the scattered item series: 256 to 16384.
extern const int ks_gpu_item_counts[KS_GPU_N_ITEMS];
// "h2d_pinned", "d2h_pinned", "h2d_pageable", "d2h_pageable": the series of t and fit.
extern const char *const ks_gpu_series[KS_GPU_N_SERIES];

struct ks_gpu_run {
    double d2d_bw;                                // bytes read + written per second
    double read_bw;                               // bytes read per second by a streaming kernel: hbm_bw
    double t[KS_GPU_N_SERIES][KS_GPU_N_SIZES];    // [series][size] median seconds per copy
    struct ks_fit_copy fit[KS_GPU_N_SERIES];
    double single_s, gather_s, bidir_s, one_dir_s; // KS_GPU_BLOCKS blocks; both ways and one way, 64 MiB
    // one ks_copy_batch_async call of ks_gpu_batch_blocks[i] blocks: [h2d, d2h][i],
    // fitted over bytes; link_worst: the fit's intercept with pcie_bw (fit[0].bw)
    double batch_t[2][KS_GPU_N_BATCH];
    struct ks_fit_copy batch_fit[2];
    double batch_link_worst[2];
    // n items of KS_GPU_ITEM bytes at scattered places of pinned host memory,
    // [h2d, d2h][count]: one cudaMemcpyAsync each (item_t) or one kernel
    // through mapped memory (item_kernel_t), median seconds per call; fitted
    // over bytes: item_fit's slope is the cost per item (copy_item, seconds:
    // copy_item_h2d / d2h), item_kernel_fit's rate the kernel's (gather_*_bw)
    double item_t[2][KS_GPU_N_ITEMS], item_kernel_t[2][KS_GPU_N_ITEMS];
    struct ks_fit_copy item_fit[2], item_kernel_fit[2];
    double copy_item[2];
    // one thread's chains of dependent loads from mapped host memory, short
    // and long; host_read_lat = their difference per load
    double chain_t[2], host_read_lat;
    // the sparse decode kernel: `bench kernels`' default shape and block counts
    struct ks_bench_shape kshape;
    size_t n_kernel;
    double kblocks[KS_BENCH_MAX_BLOCKS], kseconds[KS_BENCH_MAX_BLOCKS];
};

// Measures everything into *r, each copy point the median of `repeat`
// (needs a GPU). KS_OK, or a status with the reason in err.
int ks_gpu_measure(int repeat, struct ks_gpu_run *r, const struct ks_progress *pr, char *err, size_t len);

// Writes the profile out from base_file and r, its sources naming cmdline,
// m and the device dev. KS_OK, or ks_calib_profile_write's status with the
// reason in err.
int ks_gpu_write_profile(const struct ks_gpu_run *r, const struct ks_machine *m, const char *dev,
                         const char *base_file, const char *cmdline, const char *out, char *err, size_t len);

#endif
