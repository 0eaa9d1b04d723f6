// gpubench_nocuda.c - gpubench.h in a build without CUDA: no device to measure.
#include "gpubench.h"

#include "kernel.h"

int ks_gpu_bench_copy(enum ks_gpu_dir dir, int pinned, size_t bytes, int repeat, double *seconds)
{
    (void)dir, (void)pinned, (void)bytes, (void)repeat;
    *seconds = 0;
    return KS_KERNEL_ENODEV;
}

int ks_gpu_bench_blocks(size_t block, int n, int repeat, double *single_s, double *gather_s)
{
    (void)block, (void)n, (void)repeat;
    *single_s = *gather_s = 0;
    return KS_KERNEL_ENODEV;
}

int ks_gpu_bench_bidir(size_t bytes, int repeat, double *seconds)
{
    (void)bytes, (void)repeat;
    *seconds = 0;
    return KS_KERNEL_ENODEV;
}

int ks_gpu_bench_batch(enum ks_gpu_dir dir, size_t block, int n, int repeat, double *seconds)
{
    (void)dir, (void)block, (void)n, (void)repeat;
    *seconds = 0;
    return KS_KERNEL_ENODEV;
}
