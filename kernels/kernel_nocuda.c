// kernel_nocuda.c - the `_cuda` entry points of a build without CUDA.
//
// Each exists so that callers and tests link in every build; each answers
// KS_KERNEL_ENODEV (after its parameter check, so a bad call is still EINVAL).
#include "kernel_impl.h"

const char *ks_kernel_error(void)
{
    return "CUDA kernels not compiled in";
}

int ks_devbuf_alloc(void **ptr, size_t bytes)
{
    (void)bytes;
    *ptr = NULL;
    return KS_KERNEL_ENODEV;
}

void ks_devbuf_free(void *ptr)
{
    (void)ptr;
}

int ks_devbuf_upload(void *dst_dev, const void *src_host, size_t bytes)
{
    (void)dst_dev, (void)src_host, (void)bytes;
    return KS_KERNEL_ENODEV;
}

int ks_devbuf_download(void *dst_host, const void *src_dev, size_t bytes)
{
    (void)dst_host, (void)src_dev, (void)bytes;
    return KS_KERNEL_ENODEV;
}

int ks_devbuf_sync(void)
{
    return KS_KERNEL_ENODEV;
}

int ks_stream_new(struct CUstream_st **s)
{
    *s = NULL;
    return KS_KERNEL_ENODEV;
}

void ks_stream_free(struct CUstream_st *s)
{
    (void)s;
}

int ks_stream_sync(struct CUstream_st *s)
{
    (void)s;
    return KS_KERNEL_ENODEV;
}

int ks_copy_async(void *dst, const void *src, size_t bytes, struct CUstream_st *s)
{
    (void)dst, (void)src, (void)bytes, (void)s;
    return KS_KERNEL_ENODEV;
}

int ks_pinned_alloc(void **ptr, size_t bytes)
{
    (void)bytes;
    *ptr = NULL;
    return KS_KERNEL_ENODEV;
}

void ks_pinned_free(void *ptr)
{
    (void)ptr;
}

int ks_copy_batch_async(void *const *dst, const void *const *src, const size_t *sizes, size_t n,
                        struct CUstream_st *s)
{
    (void)dst, (void)src, (void)sizes, (void)n, (void)s;
    return KS_KERNEL_ENODEV;
}

int ks_event_new(struct CUevent_st **e)
{
    *e = NULL;
    return KS_KERNEL_ENODEV;
}

void ks_event_free(struct CUevent_st *e)
{
    (void)e;
}

int ks_event_record(struct CUevent_st *e, struct CUstream_st *s)
{
    (void)e, (void)s;
    return KS_KERNEL_ENODEV;
}

int ks_event_stream_wait(struct CUstream_st *s, struct CUevent_st *e)
{
    (void)s, (void)e;
    return KS_KERNEL_ENODEV;
}

int ks_event_sync(struct CUevent_st *e)
{
    (void)e;
    return KS_KERNEL_ENODEV;
}

static int nodev(int st)
{
    return st == KS_KERNEL_OK ? KS_KERNEL_ENODEV : st;
}

int ks_block_summary_cuda(const struct ks_block_summary_params *p, struct CUstream_st *stream)
{
    (void)stream;
    return nodev(ks_block_summary_check(p));
}

int ks_block_select_cuda(const struct ks_block_select_params *p, struct CUstream_st *stream)
{
    (void)stream;
    return nodev(ks_block_select_check(p));
}

int ks_dense_decode_cuda(const struct ks_decode_params *p, struct CUstream_st *stream)
{
    (void)stream;
    return nodev(ks_decode_check(p, 0, 0));
}

int ks_sparse_decode_cuda(const struct ks_decode_params *p, struct CUstream_st *stream)
{
    (void)stream;
    return nodev(ks_decode_check(p, 1, 0));
}

int ks_sparse_decode_i8_cuda(const struct ks_decode_params *p, struct CUstream_st *stream)
{
    (void)stream;
    return nodev(ks_decode_check(p, 1, 1));
}
