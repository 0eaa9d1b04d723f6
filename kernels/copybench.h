// copybench.h - the device's own copy bandwidth, the yardstick that kernel
// bandwidth is compared with, and the name of the device it was measured on.
//
// Unlike the kernels, these allocate: they are measurements, not building
// blocks. A build without CUDA defines both and they return KS_KERNEL_ENODEV.
#ifndef KS_COPYBENCH_H
#define KS_COPYBENCH_H

#include <stddef.h>

#include "kernel.h"

#ifdef __cplusplus
extern "C" {
#endif

#define KS_COPY_BENCH_MAX_REPEAT 64 // copies timed by one ks_copy_bench_d2d

// Times `repeat` device-to-device copies (cudaMemcpy) of `bytes` between two
// fresh device buffers, after one untimed copy, each timed with CUDA events.
// *bytes_per_s receives the median over the copies of 2 * bytes / time: a
// copy reads and writes every byte, so this is the memory traffic per second,
// comparable with a kernel that only reads. The buffers are freed before it
// returns. KS_KERNEL_OK, or EINVAL (bytes 0, repeat not in
// 1..KS_COPY_BENCH_MAX_REPEAT), ENODEV or ECUDA with the reason in err (kernel.h).
int ks_copy_bench_d2d(size_t bytes, int repeat, double *bytes_per_s, char *err, size_t len);

// The name of the current CUDA device ("NVIDIA H200") into name, truncated
// to size - 1 characters. KS_KERNEL_OK, or EINVAL (size 0), ENODEV or ECUDA
// with the reason in err.
int ks_copy_bench_device_name(char *name, size_t size, char *err, size_t len);

#ifdef __cplusplus
}
#endif

#endif
