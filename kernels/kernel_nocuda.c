// kernel_nocuda.c - the `_cuda` entry points of a build without CUDA.
//
// Each exists so that callers and tests link in every build; each answers
// KS_KERNEL_ENODEV (after its parameter check, so a bad call is still EINVAL)
// and says why in the caller's err.
#include "kernel_impl.h"

#define NOT_BUILT "CUDA kernels not compiled in"

static int nodev(char *err, size_t len)
{
    return ks_kernel_fail(err, len, KS_KERNEL_ENODEV, NOT_BUILT);
}

int ks_devbuf_alloc(void **ptr, size_t bytes, char *err, size_t len)
{
    (void)bytes;
    *ptr = NULL;
    return nodev(err, len);
}

void ks_devbuf_free(void *ptr)
{
    (void)ptr;
}

int ks_devbuf_upload(void *dst_dev, const void *src_host, size_t bytes, char *err, size_t len)
{
    (void)dst_dev, (void)src_host, (void)bytes;
    return nodev(err, len);
}

int ks_devbuf_download(void *dst_host, const void *src_dev, size_t bytes, char *err, size_t len)
{
    (void)dst_host, (void)src_dev, (void)bytes;
    return nodev(err, len);
}

int ks_devbuf_sync(char *err, size_t len)
{
    return nodev(err, len);
}

int ks_stream_new(struct CUstream_st **s, char *err, size_t len)
{
    *s = NULL;
    return nodev(err, len);
}

void ks_stream_free(struct CUstream_st *s)
{
    (void)s;
}

int ks_stream_sync(struct CUstream_st *s, char *err, size_t len)
{
    (void)s;
    return nodev(err, len);
}

int ks_copy_async(void *dst, const void *src, size_t bytes, struct CUstream_st *s, char *err, size_t len)
{
    (void)dst, (void)src, (void)bytes, (void)s;
    return nodev(err, len);
}

int ks_pinned_alloc(void **ptr, size_t bytes, char *err, size_t len)
{
    (void)bytes;
    *ptr = NULL;
    return nodev(err, len);
}

void ks_pinned_free(void *ptr)
{
    (void)ptr;
}

int ks_copy_batch_async(void *const *dst, const void *const *src, const size_t *sizes, size_t n,
                        struct CUstream_st *s, char *err, size_t len)
{
    (void)dst, (void)src, (void)sizes, (void)n, (void)s;
    return nodev(err, len);
}

int ks_event_new(struct CUevent_st **e, char *err, size_t len)
{
    *e = NULL;
    return nodev(err, len);
}

void ks_event_free(struct CUevent_st *e)
{
    (void)e;
}

int ks_event_record(struct CUevent_st *e, struct CUstream_st *s, char *err, size_t len)
{
    (void)e, (void)s;
    return nodev(err, len);
}

int ks_event_stream_wait(struct CUstream_st *s, struct CUevent_st *e, char *err, size_t len)
{
    (void)s, (void)e;
    return nodev(err, len);
}

int ks_event_sync(struct CUevent_st *e, char *err, size_t len)
{
    (void)e;
    return nodev(err, len);
}

int ks_event_new_timing(struct CUevent_st **e, char *err, size_t len)
{
    *e = NULL;
    return nodev(err, len);
}

int ks_event_elapsed(double *seconds, struct CUevent_st *a, struct CUevent_st *b, char *err, size_t len)
{
    (void)a, (void)b;
    *seconds = 0;
    return nodev(err, len);
}

// A kernel's answer: EINVAL when its parameter check fails, else ENODEV.
static int kernel_nodev(int checked, const char *name, char *err, size_t len)
{
    if (checked != KS_KERNEL_OK)
        return ks_kernel_fail(err, len, KS_KERNEL_EINVAL, "%s: parameters out of range", name);
    return nodev(err, len);
}

int ks_block_summary_cuda(const struct ks_block_summary_params *p, struct CUstream_st *stream, char *err,
                          size_t len)
{
    (void)stream;
    return kernel_nodev(ks_block_summary_check(p), "ks_block_summary_cuda", err, len);
}

int ks_block_select_cuda(const struct ks_block_select_params *p, struct CUstream_st *stream, char *err,
                         size_t len)
{
    (void)stream;
    return kernel_nodev(ks_block_select_check(p), "ks_block_select_cuda", err, len);
}

int ks_dense_decode_cuda(const struct ks_decode_params *p, struct CUstream_st *stream, char *err, size_t len)
{
    (void)stream;
    return kernel_nodev(ks_decode_check(p, 0, 0), "ks_dense_decode_cuda", err, len);
}

int ks_sparse_decode_cuda(const struct ks_decode_params *p, struct CUstream_st *stream, char *err, size_t len)
{
    (void)stream;
    return kernel_nodev(ks_decode_check(p, 1, 0), "ks_sparse_decode_cuda", err, len);
}

int ks_sparse_decode_i8_cuda(const struct ks_decode_params *p, struct CUstream_st *stream, char *err, size_t len)
{
    (void)stream;
    return kernel_nodev(ks_decode_check(p, 1, 1), "ks_sparse_decode_i8_cuda", err, len);
}
