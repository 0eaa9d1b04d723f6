// gpubench.h - host <-> GPU and on-GPU copy benchmarks for `kvstrata calib gpu`.
//
// Every figure is wall-clock time on the host's monotonic clock from just
// before the copy is issued to the return of the stream synchronisation
// after it: what a runtime that issues a copy and waits for it pays,
// per-copy overhead included. A point is the median over `repeat` timed
// runs after one untimed one. Each function allocates what it times and
// frees it before returning. Each returns KS_KERNEL_OK, or EINVAL (arguments
// out of range, host memory running out), ENODEV or ECUDA with the reason in
// the caller's err (kernel.h's error style: err NULL or len 0, no reason
// wanted). In a build without CUDA every function returns KS_KERNEL_ENODEV.
#ifndef KS_GPUBENCH_H
#define KS_GPUBENCH_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

enum ks_gpu_dir { KS_GPU_H2D, KS_GPU_D2H, KS_GPU_D2D };

#define KS_GPU_BENCH_MAX_REPEAT 64

// One cudaMemcpyAsync of `bytes` in direction dir; host memory pinned
// (cudaHostAlloc) or pageable (malloc); ignored for D2D. Median seconds.
// EINVAL: bytes 0, repeat out of 1..KS_GPU_BENCH_MAX_REPEAT.
int ks_gpu_bench_copy(enum ks_gpu_dir dir, int pinned, size_t bytes, int repeat, double *seconds, char *err,
                      size_t len);

// n blocks of `block` bytes (a multiple of 16) at scattered places of a pinned
// host pool moved to the device: *single_s, one cudaMemcpyAsync per block on
// one stream and one synchronisation at the end; *gather_s, one kernel that
// reads the n blocks through mapped pinned memory (zero copy) and writes them
// contiguously. Medians, seconds for all n blocks.
int ks_gpu_bench_blocks(size_t block, int n, int repeat, double *single_s, double *gather_s, char *err, size_t len);

// n blocks of `block` bytes (a multiple of 32) moved between the same
// scattered places of a pinned host pool and the device, in direction dir
// (H2D or D2H), by one ks_copy_batch_async call (kernel.h) and one stream
// synchronisation, as the runtime's GPU mode moves a migration batch: every
// block is two copies of block / 2 bytes, its K half and its V half, whole
// in host memory and in two separate arrays on the device (the runtime's L2
// page and its L1 K and V pages), so 2n copies per call. Median seconds for
// all n blocks.
int ks_gpu_bench_batch(enum ks_gpu_dir dir, size_t block, int n, int repeat, double *seconds, char *err,
                       size_t len);

// A kernel that reads `bytes` (a multiple of 16) of device memory once with
// 16-byte loads, grid-stride over every multiprocessor, and keeps only a
// checksum: what a memory-bound decode does with its weights and KV. Timed
// on the device with events; *bytes_per_s from the median.
int ks_gpu_bench_read(size_t bytes, int repeat, double *bytes_per_s, char *err, size_t len);

// n items of `item` bytes (a multiple of 16) between scattered places of a
// mapped pinned host pool and a contiguous device array, in direction dir
// (H2D or D2H), the scattered small copies of a sparse cache's swap-in and
// backup: *per_item_s, one cudaMemcpyAsync per item on one stream and one
// synchronisation at the end; *kernel_s, one kernel (a warp per item, 16-byte
// loads and stores through the mapped host pointers: a gather from host
// memory for H2D, a scatter into it for D2H) and one synchronisation.
// Medians, seconds for all n items. EINVAL: n outside 1..KS_GPU_MAX_ITEMS.
#define KS_GPU_MAX_ITEMS 65536
int ks_gpu_bench_items(enum ks_gpu_dir dir, size_t item, int n, int repeat, double *per_item_s, double *kernel_s,
                       char *err, size_t len);

// One thread of one kernel follows a chain of n dependent 8-byte loads from
// mapped pinned host memory (each address read from the last load, the chain
// scattered over a 64 MiB pool so that no load hits a cache). Median seconds
// for the whole kernel, launch and synchronisation included: the latency of
// one load is the slope over two chain lengths. EINVAL: n outside
// 1..KS_GPU_MAX_CHAIN.
#define KS_GPU_MAX_CHAIN 65536
int ks_gpu_bench_host_chain(int n, int repeat, double *seconds, char *err, size_t len);

// One host-to-device and one device-to-host copy of `bytes` each (pinned), on
// two streams at once. Median seconds until both are done.
int ks_gpu_bench_bidir(size_t bytes, int repeat, double *seconds, char *err, size_t len);

#ifdef __cplusplus
}
#endif

#endif
