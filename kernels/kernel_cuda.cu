// kernel_cuda.cu - CUDA side of kernel.h: the failure record and device buffers.
//
// Every CUDA call of the kernels goes through ks_cuda_fail when it fails, so
// ks_kernel_error names the call that broke, with its file and line.
#include <stdio.h>
#include <string.h>

#include "cuda_util.cuh"

static __thread char last_error[256]; // per thread: the runtime's lanes and decode thread fail apart

int ks_cuda_fail(cudaError_t err, const char *call, const char *file, int line)
{
    const char *base = strrchr(file, '/');
    snprintf(last_error, sizeof last_error, "%s:%d: %s: %s", base ? base + 1 : file, line, call,
             cudaGetErrorString(err));
    // NOTE: take the runtime's copy too, so that the next launch check does
    // not report this failure again (a fault that broke the context stays).
    (void)cudaGetLastError();
    if (err == cudaErrorNoDevice || err == cudaErrorInsufficientDriver)
        return KS_KERNEL_ENODEV;
    return KS_KERNEL_ECUDA;
}

extern "C" const char *ks_kernel_error(void)
{
    return last_error;
}

extern "C" int ks_devbuf_alloc(void **ptr, size_t bytes)
{
    *ptr = NULL;
    KS_CUDA_CHECK(cudaMalloc(ptr, bytes ? bytes : 1));
    return KS_KERNEL_OK;
}

static int devbuf_release(void *ptr)
{
    KS_CUDA_CHECK(cudaFree(ptr));
    return KS_KERNEL_OK;
}

extern "C" void ks_devbuf_free(void *ptr)
{
    if (ptr)
        (void)devbuf_release(ptr); // a failure is recorded for ks_kernel_error
}

extern "C" int ks_devbuf_upload(void *dst_dev, const void *src_host, size_t bytes)
{
    if (bytes)
        KS_CUDA_CHECK(cudaMemcpy(dst_dev, src_host, bytes, cudaMemcpyHostToDevice));
    return KS_KERNEL_OK;
}

extern "C" int ks_devbuf_download(void *dst_host, const void *src_dev, size_t bytes)
{
    if (bytes)
        KS_CUDA_CHECK(cudaMemcpy(dst_host, src_dev, bytes, cudaMemcpyDeviceToHost));
    return KS_KERNEL_OK;
}

extern "C" int ks_devbuf_sync(void)
{
    KS_CUDA_CHECK(cudaDeviceSynchronize());
    return KS_KERNEL_OK;
}

extern "C" int ks_stream_new(struct CUstream_st **s)
{
    cudaStream_t st = NULL;
    KS_CUDA_CHECK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    *s = st;
    return KS_KERNEL_OK;
}

static int stream_release(cudaStream_t s)
{
    KS_CUDA_CHECK(cudaStreamDestroy(s));
    return KS_KERNEL_OK;
}

extern "C" void ks_stream_free(struct CUstream_st *s)
{
    if (s)
        (void)stream_release(s); // a failure is recorded for ks_kernel_error
}

extern "C" int ks_stream_sync(struct CUstream_st *s)
{
    KS_CUDA_CHECK(cudaStreamSynchronize(s));
    return KS_KERNEL_OK;
}

extern "C" int ks_copy_async(void *dst, const void *src, size_t bytes, struct CUstream_st *s)
{
    if (bytes)
        KS_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, s));
    return KS_KERNEL_OK;
}

extern "C" int ks_pinned_alloc(void **ptr, size_t bytes)
{
    *ptr = NULL; // a failed call leaves nothing to free
    KS_CUDA_CHECK(cudaHostAlloc(ptr, bytes ? bytes : 1, cudaHostAllocDefault));
    return KS_KERNEL_OK;
}

static int pinned_release(void *ptr)
{
    KS_CUDA_CHECK(cudaFreeHost(ptr));
    return KS_KERNEL_OK;
}

extern "C" void ks_pinned_free(void *ptr)
{
    if (ptr)
        (void)pinned_release(ptr);
}
