// heat.h - attention heat with exponential decay, decayed lazily, in 38 bits.
//
// A block's heat at step t is the sum of the attention masses it received,
// each multiplied by 2^-(t - t_access)/half_life. Decaying every block at
// every step would cost O(blocks) per step; instead a clock keeps an epoch E
// and each block stores its heat referred to that epoch,
//     ref = heat(t) * 2^((t - E)/half_life),
// which does not change while the block is not accessed. An access adds
// mass * 2^((t - E)/half_life) to ref (one multiply-add, the factor is computed
// once per step), so decay is O(1) per access and exact up to rounding. Since
// every block shares the factor, comparing refs compares heats at any step:
// eviction never evaluates an exponential.
//
// Refs grow as 2^((t - E)/half_life); when that factor passes 2^64 the clock
// rebases: E moves to t and every stored ref is multiplied by the inverse
// factor (O(blocks), once every 64 half-lives).
//
// Storage is a 38-bit unsigned float (10-bit exponent, 28-bit mantissa,
// rounded to nearest). Its integer order is the order of the values, so codes
// compare as integers. Relative rounding is 2^-29 per access; in steady state
// about 1.44 * half_life accesses weigh on a heat, which bounds the accumulated
// error below 1e-6 for the default half-life of 256 steps.
#ifndef KS_HEAT_H
#define KS_HEAT_H

#include <stdint.h>
#include <string.h>

#define KS_HEAT_BITS 38
#define KS_HEAT_MAX ((UINT64_C(1) << KS_HEAT_BITS) - 1)
#define KS_HEAT_REBASE_HALF_LIVES 64 // rebase when the epoch factor reaches 2^64

struct ks_heat_clock {
    uint32_t half_life; // steps
    uint32_t epoch;     // step the stored refs are referred to
    uint32_t now;       // current step
    double gain;        // 2^((now - epoch)/half_life): mass -> ref units
};

#define KS_HEAT_MANT_BITS 28
#define KS_HEAT_EXP_BIAS 511

// Encodes a non-negative value; values below 2^-510 become 0 and values
// from 2^512 up saturate to KS_HEAT_MAX (which decodes to just under 2^513).
// NOTE: inline, as decode: the cache manager encodes once per block access,
// and the call was a third of a dense run's time (perf, 2026-12-01).
static inline uint64_t ks_heat_encode(double x)
{
    if (!(x > 0.0)) // also maps NaN to zero
        return 0;
    uint64_t u;
    memcpy(&u, &x, sizeof u);
    int64_t e = (int64_t)((u >> 52) & 0x7ff) - 1023; // the double's exponent and 52-bit mantissa
    uint64_t m = u & ((UINT64_C(1) << 52) - 1);
    // round the mantissa to nearest at 28 bits; a carry bumps the exponent
    m = (m + (UINT64_C(1) << (52 - KS_HEAT_MANT_BITS - 1))) >> (52 - KS_HEAT_MANT_BITS);
    if (m >> KS_HEAT_MANT_BITS) {
        m = 0;
        e++;
    }
    int64_t be = e + KS_HEAT_EXP_BIAS;
    if (be <= 0)
        return 0;
    if (be >= 1023)
        return KS_HEAT_MAX;
    return ((uint64_t)be << KS_HEAT_MANT_BITS) | m;
}

static inline double ks_heat_decode(uint64_t code)
{
    if (code == 0)
        return 0.0;
    uint64_t be = code >> KS_HEAT_MANT_BITS;
    uint64_t m = code & ((UINT64_C(1) << KS_HEAT_MANT_BITS) - 1);
    uint64_t u = ((be - KS_HEAT_EXP_BIAS + 1023) << 52) | (m << (52 - KS_HEAT_MANT_BITS));
    double x;
    memcpy(&x, &u, sizeof x);
    return x;
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define KS_HEAT_WIDE 1
#define KS_HEAT_AVX512 __attribute__((target("avx512f")))

// ks_heat_decode in eight lanes (a CPU with AVX-512 only: access_wide.c).
KS_HEAT_AVX512 static inline __attribute__((always_inline)) __m512d ks_heat_decode8(__m512i code)
{
    __m512i be = _mm512_srli_epi64(code, KS_HEAT_MANT_BITS);
    __m512i m = _mm512_and_si512(code, _mm512_set1_epi64((INT64_C(1) << KS_HEAT_MANT_BITS) - 1));
    __m512i u = _mm512_or_si512(_mm512_slli_epi64(_mm512_add_epi64(be, _mm512_set1_epi64(1023 - KS_HEAT_EXP_BIAS)), 52),
                                _mm512_slli_epi64(m, 52 - KS_HEAT_MANT_BITS));
    return _mm512_castsi512_pd(_mm512_maskz_mov_epi64(_mm512_test_epi64_mask(code, code), u));
}

// ks_heat_encode in eight lanes, the same codes.
KS_HEAT_AVX512 static inline __attribute__((always_inline)) __m512i ks_heat_encode8(__m512d x)
{
    __mmask8 pos = _mm512_cmp_pd_mask(x, _mm512_setzero_pd(), _CMP_GT_OQ); // NaN too goes to zero
    __m512i u = _mm512_castpd_si512(x);
    __m512i e = _mm512_and_si512(_mm512_srli_epi64(u, 52), _mm512_set1_epi64(0x7ff)); // biased by 1023
    __m512i m = _mm512_and_si512(u, _mm512_set1_epi64((INT64_C(1) << 52) - 1));
    m = _mm512_srli_epi64(_mm512_add_epi64(m, _mm512_set1_epi64(INT64_C(1) << (52 - KS_HEAT_MANT_BITS - 1))),
                          52 - KS_HEAT_MANT_BITS);
    __mmask8 carry = _mm512_test_epi64_mask(m, _mm512_set1_epi64(INT64_C(1) << KS_HEAT_MANT_BITS));
    m = _mm512_mask_mov_epi64(m, carry, _mm512_setzero_si512());
    e = _mm512_mask_add_epi64(e, carry, e, _mm512_set1_epi64(1));
    __m512i be = _mm512_sub_epi64(e, _mm512_set1_epi64(1023 - KS_HEAT_EXP_BIAS));
    __m512i code = _mm512_or_si512(_mm512_slli_epi64(be, KS_HEAT_MANT_BITS), m);
    __mmask8 high = _mm512_cmpge_epi64_mask(be, _mm512_set1_epi64(1023));
    code = _mm512_mask_mov_epi64(code, high, _mm512_set1_epi64((long long)KS_HEAT_MAX));
    __mmask8 keep = pos & _mm512_cmpgt_epi64_mask(be, _mm512_setzero_si512());
    return _mm512_maskz_mov_epi64(keep, code);
}
#endif

void ks_heat_clock_init(struct ks_heat_clock *clk, uint32_t half_life, uint32_t step);

// Advances the clock to `step` (>= clk->now). Returns the factor by which
// every stored ref must be multiplied (ks_heat_rescale) if the clock rebased,
// or 1.0 if it did not.
double ks_heat_clock_advance(struct ks_heat_clock *clk, uint32_t step);

// Adds `mass` at the clock's current step to the ref in `code`.
static inline uint64_t ks_heat_add(const struct ks_heat_clock *clk, uint64_t code, double mass)
{
    return ks_heat_encode(ks_heat_decode(code) + mass * clk->gain);
}

// An access of `mass` now: returns the new code and sets *rising as
// ks_heat_rising would, decoding the stored ref once for both.
static inline uint64_t ks_heat_access(const struct ks_heat_clock *clk, uint64_t code, double mass, int *rising)
{
    double ref = ks_heat_decode(code), add = mass * clk->gain;
    *rising = mass > 0 && add >= ref; // mass >= ref / gain, the heat now
    return ks_heat_encode(ref + add);
}

// Heat of a stored ref, in attention mass, at the clock's current step.
static inline double ks_heat_value(const struct ks_heat_clock *clk, uint64_t code)
{
    return ks_heat_decode(code) / clk->gain;
}

// Multiplies a stored ref by factor (used when the clock rebases).
static inline uint64_t ks_heat_rescale(uint64_t code, double factor)
{
    return code ? ks_heat_encode(ks_heat_decode(code) * factor) : 0;
}

// True when an access of `mass` at least doubles the block's heat: a block
// coming out of the cold or warming up fast, not one at a steady heat whose
// masses merely fluctuate (one access can never double a heat sustained over
// a half-life).
static inline int ks_heat_rising(const struct ks_heat_clock *clk, uint64_t code, double mass)
{
    return mass > 0 && mass >= ks_heat_value(clk, code);
}

#endif
