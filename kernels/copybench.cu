// copybench.cu - copybench.h on the CUDA runtime.
//
// The copies go on the default stream, bracketed by events, so what is timed
// is the copy on the device and not the launch or the wait for it.
#include <stdlib.h>
#include <string.h>

#include "copybench.h"
#include "cuda_util.cuh"

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

// The timed part, on buffers and events the caller owns and releases.
static int time_copies(void *dst, void *src, size_t bytes, int repeat, cudaEvent_t start, cudaEvent_t stop,
                       double *seconds, char *err, size_t len)
{
    KS_CUDA_CHECK(cudaMemset(src, 0x3c, bytes), err, len);
    KS_CUDA_CHECK(cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToDevice), err, len); // untimed: first touch
    for (int r = 0; r < repeat; r++) {
        KS_CUDA_CHECK(cudaEventRecord(start, 0), err, len);
        KS_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, 0), err, len);
        KS_CUDA_CHECK(cudaEventRecord(stop, 0), err, len);
        KS_CUDA_CHECK(cudaEventSynchronize(stop), err, len);
        float ms = 0;
        KS_CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop), err, len);
        seconds[r] = 1e-3 * (double)ms;
    }
    return KS_KERNEL_OK;
}

extern "C" int ks_copy_bench_d2d(size_t bytes, int repeat, double *bytes_per_s, char *err, size_t len)
{
    *bytes_per_s = 0;
    if (bytes == 0 || repeat <= 0 || repeat > KS_COPY_BENCH_MAX_REPEAT)
        return ks_kernel_fail(err, len, KS_KERNEL_EINVAL, "ks_copy_bench_d2d: bytes 0 or repeat not in 1..%d",
                              KS_COPY_BENCH_MAX_REPEAT);
    double seconds[KS_COPY_BENCH_MAX_REPEAT];
    void *a = NULL, *b = NULL;
    cudaEvent_t start = NULL, stop = NULL;
    int st = ks_devbuf_alloc(&a, bytes, err, len);
    if (st == KS_KERNEL_OK)
        st = ks_devbuf_alloc(&b, bytes, err, len);
    cudaError_t ce = cudaSuccess;
    if (st == KS_KERNEL_OK && (ce = cudaEventCreate(&start)) == cudaSuccess)
        ce = cudaEventCreate(&stop);
    if (ce != cudaSuccess)
        st = ks_cuda_fail(ce, "cudaEventCreate", __FILE__, __LINE__, err, len);
    if (st == KS_KERNEL_OK)
        st = time_copies(b, a, bytes, repeat, start, stop, seconds, err, len);
    if (st == KS_KERNEL_OK) {
        qsort(seconds, (size_t)repeat, sizeof *seconds, cmp_double);
        double mid = repeat % 2 ? seconds[repeat / 2] : 0.5 * (seconds[repeat / 2 - 1] + seconds[repeat / 2]);
        *bytes_per_s = mid > 0 ? 2.0 * (double)bytes / mid : 0;
    }
    if (stop)
        (void)cudaEventDestroy(stop);
    if (start)
        (void)cudaEventDestroy(start);
    ks_devbuf_free(b);
    ks_devbuf_free(a);
    return st;
}

static int device_name(char *name, size_t size, char *err, size_t len)
{
    int dev = 0;
    cudaDeviceProp prop;
    KS_CUDA_CHECK(cudaGetDevice(&dev), err, len);
    KS_CUDA_CHECK(cudaGetDeviceProperties(&prop, dev), err, len);
    strncpy(name, prop.name, size - 1);
    name[size - 1] = '\0';
    return KS_KERNEL_OK;
}

extern "C" int ks_copy_bench_device_name(char *name, size_t size, char *err, size_t len)
{
    if (size == 0)
        return ks_kernel_fail(err, len, KS_KERNEL_EINVAL, "ks_copy_bench_device_name: no room for the name");
    name[0] = '\0';
    return device_name(name, size, err, len);
}
