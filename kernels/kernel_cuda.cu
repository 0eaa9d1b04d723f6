// kernel_cuda.cu - CUDA side of kernel.h: the failure's reason and device buffers.
//
// Every CUDA call of the kernels goes through ks_cuda_fail when it fails, so
// the caller's err names the call that broke, with its file and line.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_util.cuh"

int ks_cuda_fail(cudaError_t e, const char *call, const char *file, int line, char *err, size_t len)
{
    const char *base = strrchr(file, '/');
    // NOTE: take the runtime's copy too, so that the next launch check does
    // not report this failure again (a fault that broke the context stays).
    (void)cudaGetLastError();
    int st = e == cudaErrorNoDevice || e == cudaErrorInsufficientDriver ? KS_KERNEL_ENODEV : KS_KERNEL_ECUDA;
    return ks_kernel_fail(err, len, st, "%s:%d: %s: %s", base ? base + 1 : file, line, call, cudaGetErrorString(e));
}

extern "C" int ks_devbuf_alloc(void **ptr, size_t bytes, char *err, size_t len)
{
    *ptr = NULL;
    KS_CUDA_CHECK(cudaMalloc(ptr, bytes ? bytes : 1), err, len);
    return KS_KERNEL_OK;
}

static int devbuf_release(void *ptr)
{
    KS_CUDA_CHECK(cudaFree(ptr), NULL, 0);
    return KS_KERNEL_OK;
}

extern "C" void ks_devbuf_free(void *ptr)
{
    if (ptr)
        (void)devbuf_release(ptr); // a failure has no one to tell (kernel.h)
}

extern "C" int ks_devbuf_upload(void *dst_dev, const void *src_host, size_t bytes, char *err, size_t len)
{
    if (bytes)
        KS_CUDA_CHECK(cudaMemcpy(dst_dev, src_host, bytes, cudaMemcpyHostToDevice), err, len);
    return KS_KERNEL_OK;
}

extern "C" int ks_devbuf_download(void *dst_host, const void *src_dev, size_t bytes, char *err, size_t len)
{
    if (bytes)
        KS_CUDA_CHECK(cudaMemcpy(dst_host, src_dev, bytes, cudaMemcpyDeviceToHost), err, len);
    return KS_KERNEL_OK;
}

extern "C" int ks_devbuf_sync(char *err, size_t len)
{
    KS_CUDA_CHECK(cudaDeviceSynchronize(), err, len);
    return KS_KERNEL_OK;
}

extern "C" int ks_stream_new(struct CUstream_st **s, char *err, size_t len)
{
    cudaStream_t st = NULL;
    *s = NULL; // a failed call leaves nothing to free
    KS_CUDA_CHECK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking), err, len);
    *s = st;
    return KS_KERNEL_OK;
}

static int stream_release(cudaStream_t s)
{
    KS_CUDA_CHECK(cudaStreamDestroy(s), NULL, 0);
    return KS_KERNEL_OK;
}

extern "C" void ks_stream_free(struct CUstream_st *s)
{
    if (s)
        (void)stream_release(s); // a failure has no one to tell (kernel.h)
}

extern "C" int ks_stream_sync(struct CUstream_st *s, char *err, size_t len)
{
    KS_CUDA_CHECK(cudaStreamSynchronize(s), err, len);
    return KS_KERNEL_OK;
}

extern "C" int ks_copy_async(void *dst, const void *src, size_t bytes, struct CUstream_st *s, char *err,
                             size_t len)
{
    if (bytes)
        KS_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, s), err, len);
    return KS_KERNEL_OK;
}

// NOTE: pages of our own, registered, rather than cudaHostAlloc: that one
// carves small requests out of a pool of its own, so its memory is not
// page-aligned (on an H200, a lane's 24 KiB stage came at ...ac00, and
// O_DIRECT refused it).
static const size_t PINNED_ALIGN = 4096;

extern "C" int ks_pinned_alloc(void **ptr, size_t bytes, char *err, size_t len)
{
    *ptr = NULL; // a failed call leaves nothing to free
    size_t whole = (bytes ? bytes + PINNED_ALIGN - 1 : PINNED_ALIGN) / PINNED_ALIGN * PINNED_ALIGN;
    void *p = NULL;
    if (posix_memalign(&p, PINNED_ALIGN, whole) != 0)
        return ks_kernel_fail(err, len, KS_KERNEL_ECUDA, "ks_pinned_alloc: out of host memory (%zu bytes)", whole);
    cudaError_t e = cudaHostRegister(p, whole, cudaHostRegisterDefault);
    if (e != cudaSuccess) {
        free(p);
        return ks_cuda_fail(e, "cudaHostRegister(p, whole, cudaHostRegisterDefault)", __FILE__, __LINE__, err, len);
    }
    *ptr = p;
    return KS_KERNEL_OK;
}

static int pinned_release(void *ptr)
{
    cudaError_t e = cudaHostUnregister(ptr);
    free(ptr); // ours whatever the driver says
    KS_CUDA_CHECK(e, NULL, 0);
    return KS_KERNEL_OK;
}

extern "C" void ks_pinned_free(void *ptr)
{
    if (ptr)
        (void)pinned_release(ptr); // a failure has no one to tell (kernel.h)
}

// NOTE: CUDA 13's signature (12.8 and 12.9 took a failure index too, and
// non-const arrays); the toolkit here is 13.0, and a binary on its static
// runtime needs a driver of 13 anyway.
#if CUDART_VERSION < 13000
#error "ks_copy_batch_async is written for CUDA 13's cudaMemcpyBatchAsync"
#endif

extern "C" int ks_copy_batch_async(void *const *dst, const void *const *src, const size_t *sizes, size_t n,
                                   struct CUstream_st *s, char *err, size_t len)
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
    KS_CUDA_CHECK(cudaMemcpyBatchAsync(dst, src, sizes, n, &attr, &first, 1, s), err, len);
    return KS_KERNEL_OK;
}

extern "C" int ks_event_new(struct CUevent_st **e, char *err, size_t len)
{
    cudaEvent_t ev = NULL;
    *e = NULL;
    KS_CUDA_CHECK(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming), err, len);
    *e = ev;
    return KS_KERNEL_OK;
}

extern "C" int ks_event_new_timing(struct CUevent_st **e, char *err, size_t len)
{
    cudaEvent_t ev = NULL;
    *e = NULL;
    KS_CUDA_CHECK(cudaEventCreateWithFlags(&ev, cudaEventDefault), err, len);
    *e = ev;
    return KS_KERNEL_OK;
}

extern "C" int ks_event_elapsed(double *seconds, struct CUevent_st *a, struct CUevent_st *b, char *err, size_t len)
{
    float ms = 0;
    *seconds = 0;
    KS_CUDA_CHECK(cudaEventElapsedTime(&ms, a, b), err, len);
    *seconds = ms * 1e-3;
    return KS_KERNEL_OK;
}

static int event_release(cudaEvent_t e)
{
    KS_CUDA_CHECK(cudaEventDestroy(e), NULL, 0);
    return KS_KERNEL_OK;
}

extern "C" void ks_event_free(struct CUevent_st *e)
{
    if (e)
        (void)event_release(e); // a failure has no one to tell (kernel.h)
}

extern "C" int ks_event_record(struct CUevent_st *e, struct CUstream_st *s, char *err, size_t len)
{
    KS_CUDA_CHECK(cudaEventRecord(e, s), err, len);
    return KS_KERNEL_OK;
}

extern "C" int ks_event_stream_wait(struct CUstream_st *s, struct CUevent_st *e, char *err, size_t len)
{
    KS_CUDA_CHECK(cudaStreamWaitEvent(s, e, 0), err, len);
    return KS_KERNEL_OK;
}

extern "C" int ks_event_sync(struct CUevent_st *e, char *err, size_t len)
{
    KS_CUDA_CHECK(cudaEventSynchronize(e), err, len);
    return KS_KERNEL_OK;
}
