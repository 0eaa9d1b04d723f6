// kernel.h - what every attention kernel shares: statuses, fp16 bits, device buffers.
//
// Each kernel exists twice under one stem and one params struct: `_ref`, plain
// C on host pointers (always built, library ks_ref), and `_cuda`, the same job
// on device pointers (library ks_kernels). A build without CUDA still defines
// every `_cuda` function and the ks_devbuf_* helpers; they return
// KS_KERNEL_ENODEV, so callers and tests link either way. No kernel allocates:
// the caller passes a workspace whose size a `_workspace` function states.
// fp16 values travel as uint16_t bit patterns (IEEE 754 binary16).
//
// Errors: a function that can fail on the device (the ones below, the
// `_cuda` kernels, copybench.h) takes the caller's `char *err, size_t len`
// last and, on any status but KS_KERNEL_OK, writes the reason there (err
// NULL or len 0: no reason wanted; KS_KERNEL_ERR_LEN bytes hold any). A
// failed CUDA call reads "file:line: call: message", as KS_CUDA_CHECK saw it;
// a build without CUDA says "CUDA kernels not compiled in". Nothing is kept
// between calls, so threads that fail at once keep their own reasons. The
// `_ref` kernels fail only with KS_KERNEL_EINVAL and take no err.
#ifndef KS_KERNEL_H
#define KS_KERNEL_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

// NOTE: KS_KERNEL_OK and KS_KERNEL_EINVAL have the values of sim/base/status.h's
// KS_OK and KS_EINVAL, so a caller may pass a kernel status on unchanged;
// the kernel library does not depend on the simulator's headers.
enum ks_kernel_status {
    KS_KERNEL_OK = 0,
    KS_KERNEL_EINVAL = -1,  // a parameter is out of range or inconsistent
    KS_KERNEL_ENODEV = -32, // CUDA not compiled in, or no usable device
    KS_KERNEL_ECUDA = -33,  // a CUDA call failed (err says which)
};

#define KS_KERNEL_ERR_LEN 256 // bytes of err that hold any reason written here

// Limits of the kernels (both versions); a params struct beyond them is EINVAL.
#define KS_KERNEL_MAX_HEAD_DIM 256  // elements
#define KS_KERNEL_MAX_GROUP 16      // query heads per KV head
#define KS_KERNEL_MAX_BLOCK_SIZE 256 // tokens per block

// The name of a status ("KS_KERNEL_OK", ...); "unknown" for other values.
const char *ks_kernel_status_str(int status);

// fp16 <-> fp32. to_float is exact for every pattern (NaN stays NaN);
// from_float rounds to nearest even, keeps subnormals, overflows to infinity
// and maps NaN to a quiet NaN.
float ks_half_to_float(uint16_t h);
uint16_t ks_half_from_float(float f);

// Device buffers for callers and tests written in C. alloc: *ptr receives
// `bytes` of device memory (release with ks_devbuf_free; free(NULL) is a
// no-op). upload/download copy synchronously. sync waits for all work on the
// device. Each returns KS_KERNEL_OK, or ENODEV or ECUDA with the reason in
// err. NOTE: the `_free` functions here report nothing: a failed release has
// no caller that could act on it, and a fault that broke the device
// context fails the next call that takes err.
int ks_devbuf_alloc(void **ptr, size_t bytes, char *err, size_t len);
void ks_devbuf_free(void *ptr);
int ks_devbuf_upload(void *dst_dev, const void *src_host, size_t bytes, char *err, size_t len);
int ks_devbuf_download(void *dst_host, const void *src_dev, size_t bytes, char *err, size_t len);
int ks_devbuf_sync(char *err, size_t len);

// A CUDA stream (cudaStream_t is `struct CUstream_st *`); NULL is the
// default stream. The `_cuda` kernels enqueue on it and return once launched:
// launch errors are their status, faults during execution surface at the
// caller's next synchronisation (ks_devbuf_sync).
struct CUstream_st;

// Streams, pinned host memory and asynchronous copies (the runtime's GPU
// mode). ks_stream_new: *s receives a new non-blocking stream (NULL on
// failure). ks_copy_async enqueues a copy of `bytes` between any two of
// device memory and pinned host memory (the direction comes from unified
// addressing) on s;
// ks_stream_sync waits for everything enqueued on s. ks_pinned_alloc: *ptr
// receives page-locked host memory (page-aligned, fit for O_DIRECT), freed
// with ks_pinned_free. Each returns KS_KERNEL_OK, or ENODEV or ECUDA with
// the reason in err.
int ks_stream_new(struct CUstream_st **s, char *err, size_t len);
void ks_stream_free(struct CUstream_st *s);
int ks_stream_sync(struct CUstream_st *s, char *err, size_t len);
int ks_copy_async(void *dst, const void *src, size_t bytes, struct CUstream_st *s, char *err, size_t len);
int ks_pinned_alloc(void **ptr, size_t bytes, char *err, size_t len);
void ks_pinned_free(void *ptr);

// Batched copies: one call enqueues n copies on s (not the NULL stream),
// copy i of sizes[i] bytes from src[i] to dst[i], each between device memory
// and pinned host memory; the copies may run in any order among themselves
// (no two may overlap), after the work enqueued on s before them. n = 0 is
// a no-op. Built on CUDA 13's cudaMemcpyBatchAsync. KS_KERNEL_OK, or ENODEV
// or ECUDA with the reason in err.
int ks_copy_batch_async(void *const *dst, const void *const *src, const size_t *sizes, size_t n,
                        struct CUstream_st *s, char *err, size_t len);

// Events (cudaEvent_t is `struct CUevent_st *`). ks_event_new: *e receives
// a new event made without timing, ks_event_new_timing one that records a
// time (free either with ks_event_free; free(NULL) is a no-op). ks_event_record captures the work enqueued on s so far;
// ks_event_stream_wait makes the work enqueued on s from now on wait, on the
// device, for the work e last captured (the host does not wait); ks_event_sync
// waits on the host for it. Each returns KS_KERNEL_OK, or ENODEV or ECUDA
// with the reason in err.
struct CUevent_st;
int ks_event_new(struct CUevent_st **e, char *err, size_t len);
void ks_event_free(struct CUevent_st *e);
int ks_event_record(struct CUevent_st *e, struct CUstream_st *s, char *err, size_t len);
int ks_event_stream_wait(struct CUstream_st *s, struct CUevent_st *e, char *err, size_t len);
int ks_event_sync(struct CUevent_st *e, char *err, size_t len);
int ks_event_new_timing(struct CUevent_st **e, char *err, size_t len);

// *seconds receives the device time from timing event a to timing event b,
// both recorded and complete (e.g. after ks_event_sync(b)); about 0.5 us of
// resolution. KS_KERNEL_OK, or ENODEV or ECUDA with the reason in err.
int ks_event_elapsed(double *seconds, struct CUevent_st *a, struct CUevent_st *b, char *err, size_t len);

#ifdef __cplusplus
}
#endif

#endif
