// copybench.c - copybench.h in a build without CUDA: no device to measure.
#include "copybench.h"

int ks_copy_bench_d2d(size_t bytes, int repeat, double *bytes_per_s)
{
    *bytes_per_s = 0;
    return bytes == 0 || repeat <= 0 || repeat > KS_COPY_BENCH_MAX_REPEAT ? KS_KERNEL_EINVAL : KS_KERNEL_ENODEV;
}

int ks_copy_bench_device_name(char *name, size_t len)
{
    if (len == 0)
        return KS_KERNEL_EINVAL;
    name[0] = '\0';
    return KS_KERNEL_ENODEV;
}
