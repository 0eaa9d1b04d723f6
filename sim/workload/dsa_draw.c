// dsa_draw.c - the per-unit pass of the DSA access model's noise: scalar,
// AVX2 and AVX-512 (see dsa_draw.h).
//
// The wide forms compute what the scalar one does, lane by lane: the hash in
// 64-bit lanes (AVX-512DQ's vpmullq; on AVX2 the product's low 64 bits from
// three 32 x 32-bit multiplies), the table index from its top bits, the
// table read by a gather, then the same float multiplies and adds, each
// rounded on its own (the intrinsics below are separate multiplies and adds;
// nothing fuses them). So all give the same bits, which the test checks.
// NOTE: on one 32K-token request of hisparse_missrate.lua this pass was
// about half of the drawing thread's samples in its scalar form (perf,
// 2026-12-05), and that thread's draws are the run's critical path.
#include "dsa_draw.h"

#include "rng.h"
#include "status.h"

static inline void draw_one(const struct ks_dsa_draw *p, uint32_t i)
{
    float e = p->table[ks_rng_mix(p->key + i * KS_DSA_GOLDEN) >> (64 - KS_DSA_QBITS)];
    float w = i < p->m ? p->a * p->lower[i] + p->c * e : e;
    float z = p->stationary ? w : p->fa * p->z[i] + p->fc * w;
    p->z[i] = z;
    if (p->s)
        p->s[i] = p->g[i] + p->sigma * z;
    if (p->keep)
        p->keep[i] = w;
}

void ks_dsa_draw_scalar(const struct ks_dsa_draw *p, uint32_t lo, uint32_t hi)
{
    for (uint32_t i = lo; i < hi; i++)
        draw_one(p, i);
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define AVX512 __attribute__((target("avx512f,avx512dq")))
#define AVX2 __attribute__((target("avx2")))
#define MUL1 UINT64_C(0xbf58476d1ce4e5b9) // ks_rng_mix's multipliers
#define MUL2 UINT64_C(0x94d049bb133111eb)

// The units of [lo, hi) below p->m lean, the others not: a wide form's run
// takes its blocks of units in each part and leaves the rest of each part
// (less than a block) to the scalar form.
static void split_run(uint32_t (*run)(const struct ks_dsa_draw *, uint32_t, uint32_t, int),
                      const struct ks_dsa_draw *p, uint32_t lo, uint32_t hi)
{
    uint32_t split = p->m < lo ? lo : p->m > hi ? hi : p->m;
    ks_dsa_draw_scalar(p, run(p, lo, split, 1), split);
    ks_dsa_draw_scalar(p, run(p, split, hi, 0), hi);
}

// Eight units' table values from their hashes x.
AVX512 static inline __m256 table8(const float *table, __m512i x)
{
    x = _mm512_xor_si512(x, _mm512_srli_epi64(x, 30));
    x = _mm512_mullo_epi64(x, _mm512_set1_epi64((long long)MUL1));
    x = _mm512_xor_si512(x, _mm512_srli_epi64(x, 27));
    x = _mm512_mullo_epi64(x, _mm512_set1_epi64((long long)MUL2));
    x = _mm512_xor_si512(x, _mm512_srli_epi64(x, 31));
    return _mm512_i64gather_ps(_mm512_srli_epi64(x, 64 - KS_DSA_QBITS), table, 4);
}

// Units [lo, lo + 16j) of [lo, hi), all leaning (lean) or none; returns
// where it stopped (fewer than 16 units left).
AVX512 static uint32_t run16(const struct ks_dsa_draw *p, uint32_t lo, uint32_t hi, int lean)
{
    uint64_t first[8];
    for (int j = 0; j < 8; j++)
        first[j] = p->key + (uint64_t)(lo + (uint32_t)j) * KS_DSA_GOLDEN;
    __m512i x0 = _mm512_loadu_si512(first);
    __m512i x1 = _mm512_add_epi64(x0, _mm512_set1_epi64((long long)(8 * KS_DSA_GOLDEN)));
    const __m512i step = _mm512_set1_epi64((long long)(16 * KS_DSA_GOLDEN));
    const __m512 a = _mm512_set1_ps(p->a), c = _mm512_set1_ps(p->c);
    const __m512 fa = _mm512_set1_ps(p->fa), fc = _mm512_set1_ps(p->fc), sigma = _mm512_set1_ps(p->sigma);
    uint32_t i = lo;
    for (; hi - i >= 16; i += 16) {
        __m512 e = _mm512_insertf32x8(_mm512_castps256_ps512(table8(p->table, x0)), table8(p->table, x1), 1);
        x0 = _mm512_add_epi64(x0, step);
        x1 = _mm512_add_epi64(x1, step);
        __m512 w = lean ? _mm512_add_ps(_mm512_mul_ps(a, _mm512_loadu_ps(p->lower + i)), _mm512_mul_ps(c, e)) : e;
        __m512 z = p->stationary ? w : _mm512_add_ps(_mm512_mul_ps(fa, _mm512_loadu_ps(p->z + i)), _mm512_mul_ps(fc, w));
        _mm512_storeu_ps(p->z + i, z);
        if (p->s)
            _mm512_storeu_ps(p->s + i, _mm512_add_ps(_mm512_loadu_ps(p->g + i), _mm512_mul_ps(sigma, z)));
        if (p->keep)
            _mm512_storeu_ps(p->keep + i, w);
    }
    return i;
}

// x * m modulo 2^64 in each 64-bit lane, from 32 x 32-bit products: the low
// halves' full product plus the cross products shifted up (the high halves'
// product lies above bit 63).
AVX2 static inline __m256i mul64(__m256i x, uint64_t m)
{
    const __m256i lo = _mm256_set1_epi64x((long long)(m & UINT32_MAX)), hi = _mm256_set1_epi64x((long long)(m >> 32));
    __m256i cross = _mm256_add_epi64(_mm256_mul_epu32(_mm256_srli_epi64(x, 32), lo), _mm256_mul_epu32(x, hi));
    return _mm256_add_epi64(_mm256_mul_epu32(x, lo), _mm256_slli_epi64(cross, 32));
}

// Four units' table values from their hashes x.
AVX2 static inline __m128 table4(const float *table, __m256i x)
{
    x = _mm256_xor_si256(x, _mm256_srli_epi64(x, 30));
    x = mul64(x, MUL1);
    x = _mm256_xor_si256(x, _mm256_srli_epi64(x, 27));
    x = mul64(x, MUL2);
    x = _mm256_xor_si256(x, _mm256_srli_epi64(x, 31));
    return _mm256_i64gather_ps(table, _mm256_srli_epi64(x, 64 - KS_DSA_QBITS), 4);
}

// As run16, eight units at a time.
AVX2 static uint32_t run8(const struct ks_dsa_draw *p, uint32_t lo, uint32_t hi, int lean)
{
    uint64_t first[4];
    for (int j = 0; j < 4; j++)
        first[j] = p->key + (uint64_t)(lo + (uint32_t)j) * KS_DSA_GOLDEN;
    __m256i x0 = _mm256_loadu_si256((const __m256i *)first);
    __m256i x1 = _mm256_add_epi64(x0, _mm256_set1_epi64x((long long)(4 * KS_DSA_GOLDEN)));
    const __m256i step = _mm256_set1_epi64x((long long)(8 * KS_DSA_GOLDEN));
    const __m256 a = _mm256_set1_ps(p->a), c = _mm256_set1_ps(p->c);
    const __m256 fa = _mm256_set1_ps(p->fa), fc = _mm256_set1_ps(p->fc), sigma = _mm256_set1_ps(p->sigma);
    uint32_t i = lo;
    for (; hi - i >= 8; i += 8) {
        __m256 e = _mm256_insertf128_ps(_mm256_castps128_ps256(table4(p->table, x0)), table4(p->table, x1), 1);
        x0 = _mm256_add_epi64(x0, step);
        x1 = _mm256_add_epi64(x1, step);
        __m256 w = lean ? _mm256_add_ps(_mm256_mul_ps(a, _mm256_loadu_ps(p->lower + i)), _mm256_mul_ps(c, e)) : e;
        __m256 z = p->stationary ? w : _mm256_add_ps(_mm256_mul_ps(fa, _mm256_loadu_ps(p->z + i)), _mm256_mul_ps(fc, w));
        _mm256_storeu_ps(p->z + i, z);
        if (p->s)
            _mm256_storeu_ps(p->s + i, _mm256_add_ps(_mm256_loadu_ps(p->g + i), _mm256_mul_ps(sigma, z)));
        if (p->keep)
            _mm256_storeu_ps(p->keep + i, w);
    }
    return i;
}

int ks_dsa_draw_avx512(const struct ks_dsa_draw *p, uint32_t lo, uint32_t hi)
{
    if (!__builtin_cpu_supports("avx512f") || !__builtin_cpu_supports("avx512dq"))
        return KS_EINVAL;
    if (lo < hi)
        split_run(run16, p, lo, hi);
    return KS_OK;
}

int ks_dsa_draw_avx2(const struct ks_dsa_draw *p, uint32_t lo, uint32_t hi)
{
    if (!__builtin_cpu_supports("avx2"))
        return KS_EINVAL;
    if (lo < hi)
        split_run(run8, p, lo, hi);
    return KS_OK;
}
#else
int ks_dsa_draw_avx512(const struct ks_dsa_draw *p, uint32_t lo, uint32_t hi)
{
    (void)p, (void)lo, (void)hi;
    return KS_EINVAL;
}

int ks_dsa_draw_avx2(const struct ks_dsa_draw *p, uint32_t lo, uint32_t hi)
{
    (void)p, (void)lo, (void)hi;
    return KS_EINVAL;
}
#endif

void ks_dsa_draw(const struct ks_dsa_draw *p, uint32_t lo, uint32_t hi)
{
    if (ks_dsa_draw_avx512(p, lo, hi) != KS_OK && ks_dsa_draw_avx2(p, lo, hi) != KS_OK)
        ks_dsa_draw_scalar(p, lo, hi);
}
