// gpubench_nocuda.c - gpubench.h in a build without CUDA: no device to measure.
#include "gpubench.h"

#include <stdio.h>

#include "kernel.h"

static int nodev(char *err, size_t len)
{
    if (err && len)
        snprintf(err, len, "CUDA kernels not compiled in");
    return KS_KERNEL_ENODEV;
}

int ks_gpu_bench_copy(enum ks_gpu_dir dir, int pinned, size_t bytes, int repeat, double *seconds, char *err,
                      size_t len)
{
    (void)dir, (void)pinned, (void)bytes, (void)repeat;
    *seconds = 0;
    return nodev(err, len);
}

int ks_gpu_bench_blocks(size_t block, int n, int repeat, double *single_s, double *gather_s, char *err, size_t len)
{
    (void)block, (void)n, (void)repeat;
    *single_s = *gather_s = 0;
    return nodev(err, len);
}

int ks_gpu_bench_bidir(size_t bytes, int repeat, double *seconds, char *err, size_t len)
{
    (void)bytes, (void)repeat;
    *seconds = 0;
    return nodev(err, len);
}

int ks_gpu_bench_batch(enum ks_gpu_dir dir, size_t block, int n, int repeat, double *seconds, char *err,
                       size_t len)
{
    (void)dir, (void)block, (void)n, (void)repeat;
    *seconds = 0;
    return nodev(err, len);
}

int ks_gpu_bench_items(enum ks_gpu_dir dir, size_t item, int n, int repeat, double *per_item_s, double *kernel_s,
                       char *err, size_t len)
{
    (void)dir, (void)item, (void)n, (void)repeat;
    *per_item_s = *kernel_s = 0;
    return nodev(err, len);
}

int ks_gpu_bench_host_chain(int n, int repeat, double *seconds, char *err, size_t len)
{
    (void)n, (void)repeat;
    *seconds = 0;
    return nodev(err, len);
}

int ks_gpu_bench_read(size_t bytes, int repeat, double *bytes_per_s, char *err, size_t len)
{
    (void)bytes, (void)repeat;
    *bytes_per_s = 0;
    return nodev(err, len);
}
