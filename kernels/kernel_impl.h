// kernel_impl.h - internals shared by the reference (C) and CUDA (C++) kernels.
//
// What both versions must compute identically lives here once: the parameter
// checks (host side), the split of a sequence into sink / candidates / window,
// the order of scores (a total order on floats, NaN last), and the shape of
// the CUDA decode workspace, and the writing of a failure's reason into the
// caller's err. Not part of the public interface.
#ifndef KS_KERNEL_IMPL_H
#define KS_KERNEL_IMPL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "blockselect.h"
#include "decode.h"
#include "summary.h"

#ifdef __CUDACC__
#define KS_HD __host__ __device__
#else
#define KS_HD
#endif

#ifdef __cplusplus
extern "C" {
#endif

// Shape checks common to ref and cuda (KS_KERNEL_OK or KS_KERNEL_EINVAL);
// they read only the scalars and which pointers are NULL.
int ks_block_summary_check(const struct ks_block_summary_params *p);
int ks_block_select_check(const struct ks_block_select_params *p);
int ks_decode_check(const struct ks_decode_params *p, int sparse, int i8);

#ifdef __cplusplus
}
#endif

#if defined(__GNUC__)
#define KS_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define KS_PRINTF(f, a)
#endif

// Writes a failure's reason into the caller's err (NULL or len 0: none
// wanted; see kernel.h) and returns status, so that a failing path reads
// `return ks_kernel_fail(err, len, KS_KERNEL_EINVAL, ...)`.
static inline KS_PRINTF(4, 5) int ks_kernel_fail(char *err, size_t len, int status, const char *fmt, ...)
{
    if (err && len) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, len, fmt, ap);
        va_end(ap);
    }
    return status;
}

static inline KS_HD uint32_t ks_ceil_div(uint32_t a, uint32_t b)
{
    return a / b + (a % b != 0);
}

// Selection outputs per sequence: 1, or one per KV head.
static inline KS_HD uint32_t ks_select_outs(const struct ks_block_select_params *p)
{
    return p->mode == KS_SELECT_HEAD ? p->kv_heads : 1;
}

// The blocks of a sequence of len tokens: nb in all, candidates [*lo, *hi);
// the rest (sinks, window, a partial last block) are always kept.
static inline KS_HD void ks_select_range(uint32_t len, uint32_t block_size, uint32_t n_sink, uint32_t n_window,
                                         uint32_t *nb, uint32_t *lo, uint32_t *hi)
{
    uint32_t n = ks_ceil_div(len, block_size);
    uint32_t full = len / block_size;
    uint32_t l = n_sink < n ? n_sink : n;
    uint32_t h = n - (n_window < n ? n_window : n);
    if (full < h)
        h = full;
    if (h < l)
        h = l;
    *nb = n;
    *lo = l;
    *hi = h;
}

// An unsigned key that orders scores as floats do (larger score, larger key);
// -0 equals +0 and NaN sorts below everything.
static inline KS_HD uint32_t ks_score_key(float f)
{
    if (f != f)
        return 0;
    if (f == 0.0f)
        f = 0.0f;
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return (u & 0x80000000u) ? ~u : (u | 0x80000000u);
}

// CUDA decode: selected blocks per thread block of the attention pass,
// about 256 tokens each.
static inline KS_HD uint32_t ks_decode_split_blocks(uint32_t block_size)
{
    return block_size >= 256 ? 1 : 256 / block_size;
}

// Entries per sequence the decode walks: the selection row or every block.
static inline KS_HD uint32_t ks_decode_cap(const struct ks_decode_params *p, int sparse)
{
    return sparse ? p->max_sel : p->max_blocks;
}

// The CUDA decode workspace, in floats from its start:
//   part_acc [n_seqs][q_heads][n_split][head_dim]  unnormalised partial outputs
//   part_ml  [n_seqs][q_heads][n_split][2]         their running max and sum
//   blk_ml   [n_seqs][q_heads][cap][2]             per accessed block: a logit m >= the block's
//                                                  (its max, or a running max), sum of exp(x - m)
//   head_ml  [n_seqs][q_heads][2]                  per head: final max and sum
//   arrived  [n_seqs]                              uint32: the sequence's combine blocks done
//                                                  (zeroed by the attention pass)
struct ks_decode_ws {
    uint32_t n_split;
    size_t part_acc, part_ml, blk_ml, head_ml, arrived, floats; // offsets and total, in floats
};

static inline KS_HD struct ks_decode_ws ks_decode_ws_layout(const struct ks_decode_params *p, int sparse)
{
    struct ks_decode_ws w;
    uint32_t cap = ks_decode_cap(p, sparse);
    size_t sh = (size_t)p->n_seqs * p->q_heads;
    w.n_split = ks_ceil_div(cap ? cap : 1, ks_decode_split_blocks(p->block_size));
    w.part_acc = 0;
    w.part_ml = w.part_acc + sh * w.n_split * p->head_dim;
    w.blk_ml = w.part_ml + sh * w.n_split * 2;
    w.head_ml = w.blk_ml + sh * cap * 2;
    w.arrived = w.head_ml + sh * 2;
    w.floats = w.arrived + p->n_seqs;
    return w;
}

// Threads per block of the CUDA combine-and-report kernel (whole warps).
#define KS_COMBINE_THREADS 128

// The CUDA report lists a sequence's missing blocks in access order, one
// thread per entry, blockDim entries (whole warps) at a time: the thread of
// warp `warp`, lane `lane`, whose entry is missing writes at the chunk's base
// plus this slot. ballot: its warp's missing flags (bit i: lane i); counts:
// the missing entries of each warp of the chunk.
static inline KS_HD uint32_t ks_report_slot(uint32_t ballot, uint32_t lane, const uint32_t *counts, uint32_t warp)
{
    uint32_t before = 0;
    for (uint32_t x = 0; x < warp; x++)
        before += counts[x];
    const uint32_t below = lane ? ballot << (32 - lane) : 0; // the flags of lanes < lane
#ifdef __CUDA_ARCH__
    return before + (uint32_t)__popc(below);
#else
    return before + (uint32_t)__builtin_popcount(below);
#endif
}

#endif
