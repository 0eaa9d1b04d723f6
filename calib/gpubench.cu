// gpubench.cu - gpubench.h on the CUDA runtime. Every CUDA call is checked
// (KS_CUDA_CHECK writes the call, file and line into the caller's err);
// resources are released on every path through one cleanup block per function.
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "cuda_util.cuh"
#include "gpubench.h"
#include "kernel.h"

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static int bad_args(size_t bytes, int repeat)
{
    return bytes == 0 || repeat <= 0 || repeat > KS_GPU_BENCH_MAX_REPEAT;
}

static int bad_args_fail(const char *fn, char *err, size_t len)
{
    return ks_kernel_fail(err, len, KS_KERNEL_EINVAL, "%s: arguments out of range (gpubench.h)", fn);
}

struct bufs {
    void *dev, *dev2, *host;
    int pinned;
    cudaStream_t s1, s2;
};

static void bufs_free(struct bufs *b)
{
    if (b->dev)
        (void)cudaFree(b->dev);
    if (b->dev2)
        (void)cudaFree(b->dev2);
    if (b->host) {
        if (b->pinned)
            (void)cudaFreeHost(b->host);
        else
            free(b->host);
    }
    if (b->s1)
        (void)cudaStreamDestroy(b->s1);
    if (b->s2)
        (void)cudaStreamDestroy(b->s2);
    memset(b, 0, sizeof *b);
}

static int time_copy(struct bufs *b, enum ks_gpu_dir dir, size_t bytes, int repeat, double *t, char *err, size_t len)
{
    void *dst = dir == KS_GPU_H2D ? b->dev : dir == KS_GPU_D2H ? b->host : b->dev2;
    const void *src = dir == KS_GPU_H2D ? b->host : b->dev;
    cudaMemcpyKind kind = dir == KS_GPU_H2D   ? cudaMemcpyHostToDevice
                          : dir == KS_GPU_D2H ? cudaMemcpyDeviceToHost
                                              : cudaMemcpyDeviceToDevice;
    for (int r = -1; r < repeat; r++) { // r = -1: untimed first touch
        double t0 = ks_clock_mono();
        KS_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, kind, b->s1), err, len);
        KS_CUDA_CHECK(cudaStreamSynchronize(b->s1), err, len);
        if (r >= 0)
            t[r] = ks_clock_mono() - t0;
    }
    return KS_KERNEL_OK;
}

static int setup_copy(struct bufs *b, enum ks_gpu_dir dir, int pinned, size_t bytes, char *err, size_t len)
{
    b->pinned = pinned;
    KS_CUDA_CHECK(cudaStreamCreateWithFlags(&b->s1, cudaStreamNonBlocking), err, len);
    KS_CUDA_CHECK(cudaMalloc(&b->dev, bytes), err, len);
    KS_CUDA_CHECK(cudaMemset(b->dev, 0x3c, bytes), err, len);
    if (dir == KS_GPU_D2D) {
        KS_CUDA_CHECK(cudaMalloc(&b->dev2, bytes), err, len);
        return KS_KERNEL_OK;
    }
    if (pinned) {
        KS_CUDA_CHECK(cudaHostAlloc(&b->host, bytes, cudaHostAllocDefault), err, len);
    } else {
        b->host = malloc(bytes);
        if (!b->host)
            return ks_kernel_fail(err, len, KS_KERNEL_EINVAL, "out of host memory (%zu bytes)", bytes);
    }
    memset(b->host, 0x5a, bytes);
    return KS_KERNEL_OK;
}

extern "C" int ks_gpu_bench_copy(enum ks_gpu_dir dir, int pinned, size_t bytes, int repeat, double *seconds,
                                 char *err, size_t len)
{
    *seconds = 0;
    if (bad_args(bytes, repeat))
        return bad_args_fail("ks_gpu_bench_copy", err, len);
    double t[KS_GPU_BENCH_MAX_REPEAT];
    struct bufs b;
    memset(&b, 0, sizeof b);
    int st = setup_copy(&b, dir, pinned, bytes, err, len);
    if (st == KS_KERNEL_OK)
        st = time_copy(&b, dir, bytes, repeat, t, err, len);
    if (st == KS_KERNEL_OK)
        *seconds = median(t, repeat);
    bufs_free(&b);
    return st;
}

// Block i's host slot: the pool holds 4n blocks and block i sits at slot
// (7 i + 3) mod 4n, scattered and distinct; both block benchmarks use them.
static size_t slot_offset(size_t block, int n, int i)
{
    return ((7 * (size_t)i + 3) % (4 * (size_t)n)) * block;
}

// Copies n blocks: block i from src[i] (mapped host memory) to dst + i * words.
// Grid: (n, GATHER_SPLIT) blocks of GATHER_THREADS threads; blockIdx.y takes
// one GATHER_SPLIT-th of the block's 16-byte words.
// src: [n] device-visible pointers, each to `words` uint4; dst: [n * words] uint4.
enum { GATHER_THREADS = 256, GATHER_SPLIT = 16 };

__global__ void gather_blocks(const uint4 *const *src, uint4 *dst, size_t words)
{
    const uint4 *s = src[blockIdx.x];
    uint4 *d = dst + (size_t)blockIdx.x * words;
    size_t per = (words + GATHER_SPLIT - 1) / GATHER_SPLIT;
    size_t lo = (size_t)blockIdx.y * per, hi = lo + per < words ? lo + per : words;
    for (size_t i = lo + threadIdx.x; i < hi; i += GATHER_THREADS)
        d[i] = s[i];
}

static int time_blocks(struct bufs *b, size_t block, int n, int repeat, uint4 *const *dsrc, char *const *hsrc,
                       double *t1, double *t2, char *err, size_t len)
{
    for (int r = -1; r < repeat; r++) {
        double t0 = ks_clock_mono();
        for (int i = 0; i < n; i++)
            KS_CUDA_CHECK(cudaMemcpyAsync((char *)b->dev + (size_t)i * block, hsrc[i], block, cudaMemcpyHostToDevice,
                                          b->s1),
                          err, len);
        KS_CUDA_CHECK(cudaStreamSynchronize(b->s1), err, len);
        if (r >= 0)
            t1[r] = ks_clock_mono() - t0;
    }
    dim3 grid((unsigned)n, GATHER_SPLIT);
    for (int r = -1; r < repeat; r++) {
        double t0 = ks_clock_mono();
        gather_blocks<<<grid, GATHER_THREADS, 0, b->s1>>>(dsrc, (uint4 *)b->dev2, block / sizeof(uint4));
        KS_CUDA_CHECK_LAUNCH(err, len);
        KS_CUDA_CHECK(cudaStreamSynchronize(b->s1), err, len);
        if (r >= 0)
            t2[r] = ks_clock_mono() - t0;
    }
    return KS_KERNEL_OK;
}

// n slots of `unit` bytes at slot_offset's scattered places of a mapped
// pinned pool (b->host, filled with 0x5a), a stream (b->s1) and n x unit bytes
// of device memory (b->dev): hslot[i] is slot i on the host, hptr[i] the same
// on the device, *dptr a device copy of hptr.
static int mapped_slots(struct bufs *b, size_t unit, int n, char **hslot, uint4 **hptr, uint4 ***dptr, char *err,
                        size_t len)
{
    size_t pool = 4 * (size_t)n * unit; // slot_offset's pool
    b->pinned = 1;
    KS_CUDA_CHECK(cudaStreamCreateWithFlags(&b->s1, cudaStreamNonBlocking), err, len);
    KS_CUDA_CHECK(cudaHostAlloc(&b->host, pool, cudaHostAllocMapped), err, len);
    memset(b->host, 0x5a, pool);
    KS_CUDA_CHECK(cudaMalloc(&b->dev, (size_t)n * unit), err, len);
    KS_CUDA_CHECK(cudaMalloc((void **)dptr, (size_t)n * sizeof **dptr), err, len);
    void *dev_host = NULL;
    KS_CUDA_CHECK(cudaHostGetDevicePointer(&dev_host, b->host, 0), err, len);
    for (int i = 0; i < n; i++) {
        size_t off = slot_offset(unit, n, i);
        hslot[i] = (char *)b->host + off;
        hptr[i] = (uint4 *)((char *)dev_host + off);
    }
    KS_CUDA_CHECK(cudaMemcpy((void *)*dptr, hptr, (size_t)n * sizeof *hptr, cudaMemcpyHostToDevice), err, len);
    return KS_KERNEL_OK;
}

static int setup_blocks(struct bufs *b, size_t block, int n, char **hsrc, uint4 **hptr, uint4 ***dsrc, char *err,
                        size_t len)
{
    int st = mapped_slots(b, block, n, hsrc, hptr, dsrc, err, len);
    if (st != KS_KERNEL_OK)
        return st;
    KS_CUDA_CHECK(cudaMalloc(&b->dev2, (size_t)n * block), err, len);
    return KS_KERNEL_OK;
}

extern "C" int ks_gpu_bench_blocks(size_t block, int n, int repeat, double *single_s, double *gather_s, char *err,
                                   size_t len)
{
    *single_s = *gather_s = 0;
    if (bad_args(block, repeat) || block % 16 || n <= 0 || n > 1024)
        return bad_args_fail("ks_gpu_bench_blocks", err, len);
    double t1[KS_GPU_BENCH_MAX_REPEAT], t2[KS_GPU_BENCH_MAX_REPEAT];
    char **hsrc = (char **)calloc((size_t)n, sizeof *hsrc);
    uint4 **hptr = (uint4 **)calloc((size_t)n, sizeof *hptr);
    uint4 **dsrc = NULL;
    struct bufs b;
    memset(&b, 0, sizeof b);
    int st = hsrc && hptr ? KS_KERNEL_OK : ks_kernel_fail(err, len, KS_KERNEL_EINVAL, "out of host memory");
    if (st == KS_KERNEL_OK)
        st = setup_blocks(&b, block, n, hsrc, hptr, &dsrc, err, len);
    if (st == KS_KERNEL_OK)
        st = time_blocks(&b, block, n, repeat, dsrc, hsrc, t1, t2, err, len);
    if (st == KS_KERNEL_OK) {
        *single_s = median(t1, repeat);
        *gather_s = median(t2, repeat);
    }
    if (dsrc)
        (void)cudaFree((void *)dsrc);
    bufs_free(&b);
    free(hsrc);
    free(hptr);
    return st;
}

static int time_batch(struct bufs *b, size_t n_copies, void *const *dst, const void *const *src,
                      const size_t *sizes, int repeat, double *t, char *err, size_t len)
{
    for (int r = -1; r < repeat; r++) { // r = -1: untimed first touch
        double t0 = ks_clock_mono();
        int st = ks_copy_batch_async(dst, src, sizes, n_copies, b->s1, err, len);
        if (st != KS_KERNEL_OK)
            return st; // the failed call is in err
        KS_CUDA_CHECK(cudaStreamSynchronize(b->s1), err, len);
        if (r >= 0)
            t[r] = ks_clock_mono() - t0;
    }
    return KS_KERNEL_OK;
}

// The runtime's layout: block i whole at its host slot (K half, then V
// half), its K half at b->dev + i * half and its V half at b->dev2 + i * half.
// Copy 2i is the K half, 2i + 1 the V half, in direction dir.
static int setup_batch(struct bufs *b, enum ks_gpu_dir dir, size_t block, int n, void **dst, const void **src,
                       size_t *sizes, char *err, size_t len)
{
    size_t half = block / 2, pool = 4 * (size_t)n * block;
    b->pinned = 1;
    KS_CUDA_CHECK(cudaStreamCreateWithFlags(&b->s1, cudaStreamNonBlocking), err, len);
    KS_CUDA_CHECK(cudaHostAlloc(&b->host, pool, cudaHostAllocDefault), err, len); // as ks_pinned_alloc
    memset(b->host, 0x5a, pool);
    KS_CUDA_CHECK(cudaMalloc(&b->dev, (size_t)n * half), err, len);
    KS_CUDA_CHECK(cudaMalloc(&b->dev2, (size_t)n * half), err, len);
    KS_CUDA_CHECK(cudaMemset(b->dev, 0x3c, (size_t)n * half), err, len);
    KS_CUDA_CHECK(cudaMemset(b->dev2, 0x3c, (size_t)n * half), err, len);
    for (int i = 0; i < n; i++) {
        char *h = (char *)b->host + slot_offset(block, n, i);
        char *dk = (char *)b->dev + (size_t)i * half, *dv = (char *)b->dev2 + (size_t)i * half;
        char *host_half[2] = {h, h + half}, *dev_half[2] = {dk, dv};
        for (int k = 0; k < 2; k++) {
            size_t c = 2 * (size_t)i + (size_t)k;
            dst[c] = dir == KS_GPU_H2D ? (void *)dev_half[k] : (void *)host_half[k];
            src[c] = dir == KS_GPU_H2D ? (const void *)host_half[k] : (const void *)dev_half[k];
            sizes[c] = half;
        }
    }
    return KS_KERNEL_OK;
}

extern "C" int ks_gpu_bench_batch(enum ks_gpu_dir dir, size_t block, int n, int repeat, double *seconds, char *err,
                                  size_t len)
{
    *seconds = 0;
    if (bad_args(block, repeat) || block % 32 || n <= 0 || n > 1024 || (dir != KS_GPU_H2D && dir != KS_GPU_D2H))
        return bad_args_fail("ks_gpu_bench_batch", err, len);
    size_t n_copies = 2 * (size_t)n;
    double t[KS_GPU_BENCH_MAX_REPEAT];
    void **dst = (void **)calloc(n_copies, sizeof *dst);
    const void **src = (const void **)calloc(n_copies, sizeof *src);
    size_t *sizes = (size_t *)calloc(n_copies, sizeof *sizes);
    struct bufs b;
    memset(&b, 0, sizeof b);
    int st = dst && src && sizes ? KS_KERNEL_OK : ks_kernel_fail(err, len, KS_KERNEL_EINVAL, "out of host memory");
    if (st == KS_KERNEL_OK)
        st = setup_batch(&b, dir, block, n, dst, src, sizes, err, len);
    if (st == KS_KERNEL_OK)
        st = time_batch(&b, n_copies, dst, src, sizes, repeat, t, err, len);
    if (st == KS_KERNEL_OK)
        *seconds = median(t, repeat);
    bufs_free(&b);
    free(dst);
    free(src);
    free(sizes);
    return st;
}

static int time_bidir(struct bufs *b, size_t bytes, int repeat, double *t, char *err, size_t len)
{
    char *h_up = (char *)b->host, *h_down = h_up + bytes;
    for (int r = -1; r < repeat; r++) {
        double t0 = ks_clock_mono();
        KS_CUDA_CHECK(cudaMemcpyAsync(b->dev, h_up, bytes, cudaMemcpyHostToDevice, b->s1), err, len);
        KS_CUDA_CHECK(cudaMemcpyAsync(h_down, b->dev2, bytes, cudaMemcpyDeviceToHost, b->s2), err, len);
        KS_CUDA_CHECK(cudaStreamSynchronize(b->s1), err, len);
        KS_CUDA_CHECK(cudaStreamSynchronize(b->s2), err, len);
        if (r >= 0)
            t[r] = ks_clock_mono() - t0;
    }
    return KS_KERNEL_OK;
}

static int setup_bidir(struct bufs *b, size_t bytes, char *err, size_t len)
{
    b->pinned = 1;
    KS_CUDA_CHECK(cudaStreamCreateWithFlags(&b->s1, cudaStreamNonBlocking), err, len);
    KS_CUDA_CHECK(cudaStreamCreateWithFlags(&b->s2, cudaStreamNonBlocking), err, len);
    KS_CUDA_CHECK(cudaHostAlloc(&b->host, 2 * bytes, cudaHostAllocDefault), err, len);
    memset(b->host, 0x5a, 2 * bytes);
    KS_CUDA_CHECK(cudaMalloc(&b->dev, bytes), err, len);
    KS_CUDA_CHECK(cudaMalloc(&b->dev2, bytes), err, len);
    KS_CUDA_CHECK(cudaMemset(b->dev2, 0x3c, bytes), err, len);
    return KS_KERNEL_OK;
}

extern "C" int ks_gpu_bench_bidir(size_t bytes, int repeat, double *seconds, char *err, size_t len)
{
    *seconds = 0;
    if (bad_args(bytes, repeat))
        return bad_args_fail("ks_gpu_bench_bidir", err, len);
    double t[KS_GPU_BENCH_MAX_REPEAT];
    struct bufs b;
    memset(&b, 0, sizeof b);
    int st = setup_bidir(&b, bytes, err, len);
    if (st == KS_KERNEL_OK)
        st = time_bidir(&b, bytes, repeat, t, err, len);
    if (st == KS_KERNEL_OK)
        *seconds = median(t, repeat);
    bufs_free(&b);
    return st;
}

// Item i's host slot in a pool of 4n items: (7 i + 3) mod 4n, as slot_offset.
// Copies n items of `words` 16-byte words, a warp per item: H2D reads
// host[i] (mapped pinned memory) into dev + i * words; D2H writes the other
// way. host: [n] device-visible pointers; dev: [n * words].
enum { ITEM_WARPS = 8 };

__global__ void move_items(uint4 *const *host, uint4 *dev, size_t words, int n, int to_host)
{
    int i = blockIdx.x * ITEM_WARPS + (int)(threadIdx.x / 32);
    if (i >= n)
        return;
    uint4 *h = host[i], *d = dev + (size_t)i * words;
    for (size_t w = threadIdx.x % 32; w < words; w += 32) {
        if (to_host)
            h[w] = d[w];
        else
            d[w] = h[w];
    }
}

// Byte k of item i: what the source holds before a copy, so that the
// destination can be checked after it.
static unsigned char item_byte(int i, size_t k)
{
    return (unsigned char)((size_t)i * 131u + k * 7u + 1u);
}

// Fills the source side with item_byte (the device side through `stage`, n x
// item host bytes); the destination side with zeros.
static int items_fill(struct bufs *b, enum ks_gpu_dir dir, size_t item, int n, char *const *hslot,
                      unsigned char *stage, char *err, size_t len)
{
    for (int i = 0; i < n; i++)
        for (size_t k = 0; k < item; k++) {
            unsigned char v = item_byte(i, k);
            hslot[i][k] = dir == KS_GPU_H2D ? (char)v : 0;
            stage[(size_t)i * item + k] = dir == KS_GPU_D2H ? v : 0;
        }
    KS_CUDA_CHECK(cudaMemcpy(b->dev, stage, (size_t)n * item, cudaMemcpyHostToDevice), err, len);
    return KS_KERNEL_OK;
}

// Checks that every item reached its destination whole.
static int items_check(struct bufs *b, enum ks_gpu_dir dir, size_t item, int n, char *const *hslot,
                       unsigned char *stage, const char *how, char *err, size_t len)
{
    KS_CUDA_CHECK(cudaMemcpy(stage, b->dev, (size_t)n * item, cudaMemcpyDeviceToHost), err, len);
    for (int i = 0; i < n; i++)
        for (size_t k = 0; k < item; k++) {
            unsigned char got = dir == KS_GPU_H2D ? stage[(size_t)i * item + k] : (unsigned char)hslot[i][k];
            if (got != item_byte(i, k))
                return ks_kernel_fail(err, len, KS_KERNEL_ECUDA, "ks_gpu_bench_items: %s left item %d byte %zu "
                                      "at %u, not %u", how, i, k, got, item_byte(i, k));
        }
    return KS_KERNEL_OK;
}

static int items_time(struct bufs *b, enum ks_gpu_dir dir, size_t item, int n, int repeat, char *const *hslot,
                      uint4 *const *dptr, unsigned char *stage, double *t1, double *t2, char *err, size_t len)
{
    int st = items_fill(b, dir, item, n, hslot, stage, err, len);
    for (int r = -1; r < repeat && st == KS_KERNEL_OK; r++) {
        double t0 = ks_clock_mono();
        for (int i = 0; i < n; i++) {
            char *d = (char *)b->dev + (size_t)i * item;
            KS_CUDA_CHECK(dir == KS_GPU_H2D ? cudaMemcpyAsync(d, hslot[i], item, cudaMemcpyHostToDevice, b->s1)
                                            : cudaMemcpyAsync(hslot[i], d, item, cudaMemcpyDeviceToHost, b->s1),
                          err, len);
        }
        KS_CUDA_CHECK(cudaStreamSynchronize(b->s1), err, len);
        if (r >= 0)
            t1[r] = ks_clock_mono() - t0;
    }
    if (st == KS_KERNEL_OK)
        st = items_check(b, dir, item, n, hslot, stage, "one copy per item", err, len);
    if (st == KS_KERNEL_OK)
        st = items_fill(b, dir, item, n, hslot, stage, err, len);
    unsigned grid = (unsigned)((n + ITEM_WARPS - 1) / ITEM_WARPS);
    for (int r = -1; r < repeat && st == KS_KERNEL_OK; r++) {
        double t0 = ks_clock_mono();
        move_items<<<grid, 32 * ITEM_WARPS, 0, b->s1>>>(dptr, (uint4 *)b->dev, item / sizeof(uint4), n,
                                                        dir == KS_GPU_D2H);
        KS_CUDA_CHECK_LAUNCH(err, len);
        KS_CUDA_CHECK(cudaStreamSynchronize(b->s1), err, len);
        if (r >= 0)
            t2[r] = ks_clock_mono() - t0;
    }
    if (st == KS_KERNEL_OK)
        st = items_check(b, dir, item, n, hslot, stage, "the kernel", err, len);
    return st;
}

extern "C" int ks_gpu_bench_items(enum ks_gpu_dir dir, size_t item, int n, int repeat, double *per_item_s,
                                  double *kernel_s, char *err, size_t len)
{
    *per_item_s = *kernel_s = 0;
    if (bad_args(item, repeat) || item % 16 || n <= 0 || n > KS_GPU_MAX_ITEMS ||
        (dir != KS_GPU_H2D && dir != KS_GPU_D2H))
        return bad_args_fail("ks_gpu_bench_items", err, len);
    double t1[KS_GPU_BENCH_MAX_REPEAT], t2[KS_GPU_BENCH_MAX_REPEAT];
    char **hslot = (char **)calloc((size_t)n, sizeof *hslot);
    uint4 **hptr = (uint4 **)calloc((size_t)n, sizeof *hptr);
    unsigned char *stage = (unsigned char *)malloc((size_t)n * item);
    uint4 **dptr = NULL;
    struct bufs b;
    memset(&b, 0, sizeof b);
    int st = hslot && hptr && stage ? KS_KERNEL_OK : ks_kernel_fail(err, len, KS_KERNEL_EINVAL, "out of host memory");
    if (st == KS_KERNEL_OK)
        st = mapped_slots(&b, item, n, hslot, hptr, &dptr, err, len);
    if (st == KS_KERNEL_OK)
        st = items_time(&b, dir, item, n, repeat, hslot, dptr, stage, t1, t2, err, len);
    if (st == KS_KERNEL_OK) {
        *per_item_s = median(t1, repeat);
        *kernel_s = median(t2, repeat);
    }
    if (dptr)
        (void)cudaFree((void *)dptr);
    bufs_free(&b);
    free(hslot);
    free(hptr);
    free(stage);
    return st;
}

// One thread: n dependent loads, p = *p, through mapped host memory; the end
// of the chain is written to *out so that the loads are not optimised away.
__global__ void host_chain(const unsigned long long *start, int n, unsigned long long *out)
{
    const volatile unsigned long long *p = start;
    for (int i = 0; i < n; i++)
        p = (const volatile unsigned long long *)(uintptr_t)*p;
    *out = (unsigned long long)(uintptr_t)p;
}

enum { CHAIN_POOL = 64 << 20, CHAIN_STRIDE = 4096 + 64 }; // bytes; a page and a line apart at least

extern "C" int ks_gpu_bench_host_chain(int n, int repeat, double *seconds, char *err, size_t len)
{
    *seconds = 0;
    if (bad_args(1, repeat) || n <= 0 || n > KS_GPU_MAX_CHAIN)
        return bad_args_fail("ks_gpu_bench_host_chain", err, len);
    double t[KS_GPU_BENCH_MAX_REPEAT];
    struct bufs b;
    memset(&b, 0, sizeof b);
    b.pinned = 1;
    int st = KS_KERNEL_OK;
    cudaError_t ce = cudaStreamCreateWithFlags(&b.s1, cudaStreamNonBlocking);
    if (ce == cudaSuccess)
        ce = cudaHostAlloc(&b.host, CHAIN_POOL, cudaHostAllocMapped);
    if (ce == cudaSuccess)
        ce = cudaMalloc(&b.dev, sizeof(unsigned long long));
    void *dev_host = NULL;
    if (ce == cudaSuccess)
        ce = cudaHostGetDevicePointer(&dev_host, b.host, 0);
    if (ce != cudaSuccess)
        st = ks_cuda_fail(ce, "ks_gpu_bench_host_chain setup", __FILE__, __LINE__, err, len);
    if (st == KS_KERNEL_OK) {
        // slot j at j * CHAIN_STRIDE; the chain visits the slots in the order
        // j -> (j + step) mod slots, step coprime to slots, and closes
        size_t slots = CHAIN_POOL / CHAIN_STRIDE, step = slots / 2 + 1;
        while (step > 1) { // gcd(step, slots) == 1
            size_t a = step, c = slots;
            while (c) { size_t x = a % c; a = c; c = x; }
            if (a == 1)
                break;
            step++;
        }
        char *host = (char *)b.host, *dh = (char *)dev_host;
        for (size_t j = 0; j < slots; j++) {
            size_t next = (j + step) % slots;
            *(unsigned long long *)(host + j * CHAIN_STRIDE) = (unsigned long long)(uintptr_t)(dh + next * CHAIN_STRIDE);
        }
        for (int r = -1; r < repeat && st == KS_KERNEL_OK; r++) {
            double t0 = ks_clock_mono();
            host_chain<<<1, 1, 0, b.s1>>>((const unsigned long long *)dh, n, (unsigned long long *)b.dev);
            cudaError_t le = cudaGetLastError();
            if (le == cudaSuccess)
                le = cudaStreamSynchronize(b.s1);
            if (le != cudaSuccess)
                st = ks_cuda_fail(le, "host_chain", __FILE__, __LINE__, err, len);
            else if (r >= 0)
                t[r] = ks_clock_mono() - t0;
        }
    }
    if (st == KS_KERNEL_OK)
        *seconds = median(t, repeat);
    bufs_free(&b);
    return st;
}

// Reads words[0..n) once, grid-stride, 16-byte loads; each thread folds what
// it read into one word and writes it only when it equals `never` (the
// caller's value that no fold takes), so that the loads are kept.
__global__ void read_stream(const uint4 *words, size_t n, unsigned never, unsigned *out)
{
    unsigned acc = 0;
#pragma unroll 4
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        uint4 v = __ldg(words + i);
        acc ^= v.x ^ v.y ^ v.z ^ v.w;
    }
    if (acc == never)
        out[0] = acc;
}

enum { READ_THREADS = 512, READ_BLOCKS_PER_SM = 4 };

extern "C" int ks_gpu_bench_read(size_t bytes, int repeat, double *bytes_per_s, char *err, size_t len)
{
    *bytes_per_s = 0;
    if (bad_args(bytes, repeat) || bytes % 16)
        return bad_args_fail("ks_gpu_bench_read", err, len);
    double t[KS_GPU_BENCH_MAX_REPEAT];
    struct bufs b;
    memset(&b, 0, sizeof b);
    cudaEvent_t start = NULL, stop = NULL;
    int sms = 0, st = KS_KERNEL_OK;
    cudaError_t ce = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
    if (ce == cudaSuccess)
        ce = cudaMalloc(&b.dev, bytes);
    if (ce == cudaSuccess)
        ce = cudaMalloc(&b.dev2, sizeof(unsigned));
    if (ce == cudaSuccess)
        ce = cudaMemset(b.dev, 0x3c, bytes); // every word's fold is 0: `never` is 1
    if (ce == cudaSuccess)
        ce = cudaEventCreate(&start);
    if (ce == cudaSuccess)
        ce = cudaEventCreate(&stop);
    if (ce != cudaSuccess)
        st = ks_cuda_fail(ce, "ks_gpu_bench_read setup", __FILE__, __LINE__, err, len);
    for (int r = -1; r < repeat && st == KS_KERNEL_OK; r++) {
        ce = cudaEventRecord(start, 0);
        read_stream<<<(unsigned)sms * READ_BLOCKS_PER_SM, READ_THREADS>>>((const uint4 *)b.dev, bytes / 16, 1u,
                                                                         (unsigned *)b.dev2);
        if (ce == cudaSuccess)
            ce = cudaGetLastError();
        if (ce == cudaSuccess)
            ce = cudaEventRecord(stop, 0);
        if (ce == cudaSuccess)
            ce = cudaEventSynchronize(stop);
        float ms = 0;
        if (ce == cudaSuccess)
            ce = cudaEventElapsedTime(&ms, start, stop);
        if (ce != cudaSuccess)
            st = ks_cuda_fail(ce, "read_stream", __FILE__, __LINE__, err, len);
        else if (r >= 0)
            t[r] = 1e-3 * (double)ms;
    }
    if (st == KS_KERNEL_OK) {
        double mid = median(t, repeat);
        *bytes_per_s = mid > 0 ? (double)bytes / mid : 0;
    }
    if (start)
        (void)cudaEventDestroy(start);
    if (stop)
        (void)cudaEventDestroy(stop);
    bufs_free(&b);
    return st;
}
