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

// NOTE: CUDA 13's signature (12.8 and 12.9 took a failure index too, and
// non-const arrays); the toolkit here is 13.0, and a binary on its static
// runtime needs a driver of 13 anyway.
#if CUDART_VERSION < 13000
#error "ks_copy_batch_async is written for CUDA 13's cudaMemcpyBatchAsync"
#endif

extern "C" int ks_copy_batch_async(void *const *dst, const void *const *src, const size_t *sizes, size_t n,
                                   struct CUstream_st *s)
{
    if (n == 0)
        return KS_KERNEL_OK;
    // one set of attributes for every copy: the sources are read in stream
    // order (a stage may be refilled once the stream has passed the copy);
    // the copies should overlap the decode kernel rather than delay it (a
    // hint the platform may ignore)
    struct cudaMemcpyAttributes attr;
    memset(&attr, 0, sizeof attr);
    attr.srcAccessOrder = cudaMemcpySrcAccessOrderStream;
    attr.flags = cudaMemcpyFlagPreferOverlapWithCompute;
    size_t first = 0;
    KS_CUDA_CHECK(cudaMemcpyBatchAsync(dst, src, sizes, n, &attr, &first, 1, s));
    return KS_KERNEL_OK;
}

extern "C" int ks_event_new(struct CUevent_st **e)
{
    cudaEvent_t ev = NULL;
    *e = NULL;
    KS_CUDA_CHECK(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming));
    *e = ev;
    return KS_KERNEL_OK;
}

static int event_release(cudaEvent_t e)
{
    KS_CUDA_CHECK(cudaEventDestroy(e));
    return KS_KERNEL_OK;
}

extern "C" void ks_event_free(struct CUevent_st *e)
{
    if (e)
        (void)event_release(e); // a failure is recorded for ks_kernel_error
}

extern "C" int ks_event_record(struct CUevent_st *e, struct CUstream_st *s)
{
    KS_CUDA_CHECK(cudaEventRecord(e, s));
    return KS_KERNEL_OK;
}

extern "C" int ks_event_stream_wait(struct CUstream_st *s, struct CUevent_st *e)
{
    KS_CUDA_CHECK(cudaStreamWaitEvent(s, e, 0));
    return KS_KERNEL_OK;
}

extern "C" int ks_event_sync(struct CUevent_st *e)
{
    KS_CUDA_CHECK(cudaEventSynchronize(e));
    return KS_KERNEL_OK;
}
