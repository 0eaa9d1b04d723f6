// copybench.c - copybench.h in a build without CUDA: no device to measure.
#include "copybench.h"

#include "kernel_impl.h"

int ks_copy_bench_d2d(size_t bytes, int repeat, double *bytes_per_s, char *err, size_t len)
{
    *bytes_per_s = 0;
    if (bytes == 0 || repeat <= 0 || repeat > KS_COPY_BENCH_MAX_REPEAT)
        return ks_kernel_fail(err, len, KS_KERNEL_EINVAL, "ks_copy_bench_d2d: bytes 0 or repeat not in 1..%d",
                              KS_COPY_BENCH_MAX_REPEAT);
    return ks_kernel_fail(err, len, KS_KERNEL_ENODEV, "CUDA kernels not compiled in");
}

int ks_copy_bench_device_name(char *name, size_t size, char *err, size_t len)
{
    if (size == 0)
        return ks_kernel_fail(err, len, KS_KERNEL_EINVAL, "ks_copy_bench_device_name: no room for the name");
    name[0] = '\0';
    return ks_kernel_fail(err, len, KS_KERNEL_ENODEV, "CUDA kernels not compiled in");
}
