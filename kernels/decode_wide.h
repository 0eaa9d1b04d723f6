// decode_wide.h - the arithmetic of the wide decode kernel (decode_wide_cuda.cu),
// in functions the host runs too, so that a plain C test checks it without a GPU.
//
// The wide kernel reads K and V rows as 16-byte vectors (8 fp16 or 16 int8
// values) and walks the blocks of a split in chunks of KS_WIDE_SLOTS token
// slots: several whole blocks when block_size <= KS_WIDE_SLOTS, else
// KS_WIDE_SLOTS tokens of one block. Per chunk and query head it moves the
// running max m to max(m, chunk max), rescales the running sum and
// accumulators by exp(m_old - m_new) and adds exp(logit - m_new) weights. A
// block's report pair is (m_new, sum of its weights) - any reference at or
// above the block's logits represents its mass; m_new never exceeds the head's
// final max, so the pair underflows no sooner than the reference's own sums.
// Invariants: slots that hold no token get weight 0 and their K/V are never
// loaded; an entry with no tokens (past the length, or skipped as missing)
// gets no chunk when block_size > KS_WIDE_SLOTS.
#ifndef KS_DECODE_WIDE_H
#define KS_DECODE_WIDE_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "kernel_impl.h"

#ifdef __CUDACC__
#include <cuda_fp16.h>
#endif

#define KS_WIDE_SLOTS 32 // token slots per chunk: one per lane in the softmax step
#define KS_WIDE_LANES 4  // threads that share a token row in the K step

// Whether the CUDA decode takes the wide kernel for p: whole 16-byte vectors
// per row (head_dim a multiple of 8 for fp16, of 16 for int8) on caches whose
// base is 16-byte aligned (every row then is). Otherwise the scalar kernel.
static inline KS_HD int ks_decode_wide(const struct ks_decode_params *p, int i8)
{
    const void *k = i8 ? (const void *)p->k_i8 : (const void *)p->k;
    const void *v = i8 ? (const void *)p->v_i8 : (const void *)p->v;
    return p->head_dim % (i8 ? 16u : 8u) == 0 && ((uintptr_t)k | (uintptr_t)v) % 16 == 0;
}

// The smallest power of two >= x (x <= 2^31), for choosing an instantiation.
static inline KS_HD uint32_t ks_wide_pow2(uint32_t x)
{
    uint32_t n = 1;
    while (n < x)
        n <<= 1;
    return n;
}

static inline KS_HD float ks_wide_bits_float(uint32_t u)
{
#ifdef __CUDA_ARCH__
    return __uint_as_float(u);
#else
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
#endif
}

// A 16-byte vector of 8 fp16 values (low half of w[0] first) as floats.
static inline KS_HD void ks_wide_f16x8(const uint32_t w[4], float x[8])
{
    for (int i = 0; i < 4; i++) {
#ifdef __CUDA_ARCH__
        x[2 * i] = __half2float(__ushort_as_half((unsigned short)(w[i] & 0xffffu)));
        x[2 * i + 1] = __half2float(__ushort_as_half((unsigned short)(w[i] >> 16)));
#else
        x[2 * i] = ks_half_to_float((uint16_t)(w[i] & 0xffffu));
        x[2 * i + 1] = ks_half_to_float((uint16_t)(w[i] >> 16));
#endif
    }
}

// A 16-byte vector of 16 int8 values (lowest byte of w[0] first) as floats,
// exactly. NOTE: no int-to-float instruction (a quarter of the FMA rate on
// sm_90): the byte plus 128 becomes the low mantissa bits of 2^23, so the
// float is 2^23 + 128 + x, and 2^23 + 128 is subtracted (both exact).
static inline KS_HD void ks_wide_i8x16(const uint32_t w[4], float x[16])
{
    for (int i = 0; i < 4; i++) {
        const uint32_t b = w[i] ^ 0x80808080u;
        for (int k = 0; k < 4; k++)
            x[4 * i + k] = ks_wide_bits_float(0x4b000000u | ((b >> (8 * k)) & 0xffu)) - 8388736.0f;
    }
}

// exp(a - m), 0 when a is -inf (nothing seen yet, or an empty chunk), even if m is too.
static inline KS_HD float ks_wide_exp_from(float a, float m)
{
    return a == -INFINITY ? 0.0f : expf(a - m);
}

// Moves a running (max *m, sum *l) to the larger max mn (>= *m) and returns
// the factor exp(m_old - mn) that the sums and accumulators kept relative to
// the old max take on; the caller then adds the chunk's weights exp(x - mn).
static inline KS_HD float ks_wide_rescale(float *m, float *l, float mn)
{
    const float alpha = ks_wide_exp_from(*m, mn);
    *l *= alpha;
    *m = mn;
    return alpha;
}

// The first chunk of a split of n_e entries whose token counts are ntok[]:
// entry *e0, token *t0. With blocks longer than a chunk, entries without
// tokens get no chunk. The walk ends when *e0 >= n_e.
static inline KS_HD void ks_wide_first(uint32_t bs, const uint32_t *ntok, uint32_t n_e, uint32_t *e0, uint32_t *t0)
{
    *e0 = 0;
    *t0 = 0;
    if (bs > KS_WIDE_SLOTS)
        while (*e0 < n_e && ntok[*e0] == 0)
            ++*e0;
}

// The chunk after (*e0, *t0): the next KS_WIDE_SLOTS / bs entries, or the
// next KS_WIDE_SLOTS tokens of the entry, or the next entry with tokens.
static inline KS_HD void ks_wide_next(uint32_t bs, const uint32_t *ntok, uint32_t n_e, uint32_t *e0, uint32_t *t0)
{
    if (bs <= KS_WIDE_SLOTS) {
        *e0 += KS_WIDE_SLOTS / bs;
        return;
    }
    *t0 += KS_WIDE_SLOTS;
    if (*t0 < ntok[*e0])
        return;
    *t0 = 0;
    do
        ++*e0;
    while (*e0 < n_e && ntok[*e0] == 0);
}

// Slot r of the chunk (e0, t0): its entry *e and token *t; nonzero when the
// slot holds a token (the entry exists and has that many).
static inline KS_HD int ks_wide_slot(uint32_t bs, const uint32_t *ntok, uint32_t n_e, uint32_t e0, uint32_t t0,
                                     uint32_t r, uint32_t *e, uint32_t *t)
{
    if (bs <= KS_WIDE_SLOTS) {
        if (r / bs >= KS_WIDE_SLOTS / bs)
            return 0; // the tail of a chunk that no whole block fills (block_size 7: slots 28..31)
        *e = e0 + r / bs;
        *t = r % bs;
    } else {
        *e = e0;
        *t = t0 + r;
    }
    return *e < n_e && *t < ntok[*e];
}

// One past the last slot of slot r's entry within the chunk (at most
// KS_WIDE_SLOTS): the segments the per-entry report sums run over. Slots of
// the segment without a token carry weight 0.
static inline KS_HD uint32_t ks_wide_seg_end(uint32_t bs, uint32_t r)
{
    if (bs > KS_WIDE_SLOTS)
        return KS_WIDE_SLOTS;
    const uint32_t end = (r / bs + 1) * bs;
    return end < KS_WIDE_SLOTS ? end : KS_WIDE_SLOTS;
}

#ifdef __CUDACC__
// Enqueues the wide attention pass for p's shape on stream
// (decode_wide_cuda.cu); w is p's workspace layout. Returns the launch's
// error (cudaSuccess: enqueued).
cudaError_t ks_decode_wide_launch(const struct ks_decode_params *p, bool sparse, bool i8,
                                  const struct ks_decode_ws *w, struct CUstream_st *stream);
#endif

#endif
