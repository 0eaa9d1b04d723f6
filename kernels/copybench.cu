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
                       double *seconds)
{
    KS_CUDA_CHECK(cudaMemset(src, 0x3c, bytes));
    KS_CUDA_CHECK(cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToDevice)); // untimed: first touch
    for (int r = 0; r < repeat; r++) {
        KS_CUDA_CHECK(cudaEventRecord(start, 0));
        KS_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, 0));
        KS_CUDA_CHECK(cudaEventRecord(stop, 0));
        KS_CUDA_CHECK(cudaEventSynchronize(stop));
        float ms = 0;
        KS_CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
        seconds[r] = 1e-3 * (double)ms;
    }
    return KS_KERNEL_OK;
}

extern "C" int ks_copy_bench_d2d(size_t bytes, int repeat, double *bytes_per_s)
{
    *bytes_per_s = 0;
    if (bytes == 0 || repeat <= 0 || repeat > KS_COPY_BENCH_MAX_REPEAT)
        return KS_KERNEL_EINVAL;
    double seconds[KS_COPY_BENCH_MAX_REPEAT];
    void *a = NULL, *b = NULL;
    cudaEvent_t start = NULL, stop = NULL;
    int st = ks_devbuf_alloc(&a, bytes);
    if (st == KS_KERNEL_OK)
        st = ks_devbuf_alloc(&b, bytes);
    cudaError_t err = cudaSuccess;
    if (st == KS_KERNEL_OK && (err = cudaEventCreate(&start)) == cudaSuccess)
        err = cudaEventCreate(&stop);
    if (err != cudaSuccess)
        st = ks_cuda_fail(err, "cudaEventCreate", __FILE__, __LINE__);
    if (st == KS_KERNEL_OK)
        st = time_copies(b, a, bytes, repeat, start, stop, seconds);
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

static int device_name(char *name, size_t len)
{
    int dev = 0;
    cudaDeviceProp prop;
    KS_CUDA_CHECK(cudaGetDevice(&dev));
    KS_CUDA_CHECK(cudaGetDeviceProperties(&prop, dev));
    strncpy(name, prop.name, len - 1);
    name[len - 1] = '\0';
    return KS_KERNEL_OK;
}

extern "C" int ks_copy_bench_device_name(char *name, size_t len)
{
    if (len == 0)
        return KS_KERNEL_EINVAL;
    name[0] = '\0';
    return device_name(name, len);
}
