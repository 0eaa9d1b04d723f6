// dsa_draw.c - the per-unit pass of the DSA access model's noise, scalar and
// AVX-512 (see dsa_draw.h).
//
// The wide form computes what the scalar one does, lane by lane: the hash in
// 64-bit lanes (vpmullq), the table index from its top bits, the table read
// by a gather, then the same float multiplies and adds, each rounded on its
// own (the intrinsics below are separate multiplies and adds; nothing fuses
// them). So both give the same bits, which the test checks.
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
#define WIDE_TARGET __attribute__((target("avx512f,avx512dq")))

// Eight units' table values from their hashes x.
WIDE_TARGET static inline __m256 table8(const float *table, __m512i x)
{
    x = _mm512_xor_si512(x, _mm512_srli_epi64(x, 30));
    x = _mm512_mullo_epi64(x, _mm512_set1_epi64((long long)UINT64_C(0xbf58476d1ce4e5b9)));
    x = _mm512_xor_si512(x, _mm512_srli_epi64(x, 27));
    x = _mm512_mullo_epi64(x, _mm512_set1_epi64((long long)UINT64_C(0x94d049bb133111eb)));
    x = _mm512_xor_si512(x, _mm512_srli_epi64(x, 31));
    return _mm512_i64gather_ps(_mm512_srli_epi64(x, 64 - KS_DSA_QBITS), table, 4);
}

// Units [lo, lo + 16j) of [lo, hi), all leaning (lean) or none; returns
// where it stopped (fewer than 16 units left).
WIDE_TARGET static uint32_t wide_run(const struct ks_dsa_draw *p, uint32_t lo, uint32_t hi, int lean)
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

static int have_wide(void)
{
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq");
}

int ks_dsa_draw_wide(const struct ks_dsa_draw *p, uint32_t lo, uint32_t hi)
{
    if (!have_wide())
        return KS_EINVAL;
    if (lo >= hi)
        return KS_OK;
    uint32_t split = p->m < lo ? lo : p->m > hi ? hi : p->m; // units below lean
    uint32_t i = wide_run(p, lo, split, 1);
    ks_dsa_draw_scalar(p, i, split);
    i = wide_run(p, split, hi, 0);
    ks_dsa_draw_scalar(p, i, hi);
    return KS_OK;
}
#else
int ks_dsa_draw_wide(const struct ks_dsa_draw *p, uint32_t lo, uint32_t hi)
{
    (void)p, (void)lo, (void)hi;
    return KS_EINVAL;
}
#endif

void ks_dsa_draw(const struct ks_dsa_draw *p, uint32_t lo, uint32_t hi)
{
    if (ks_dsa_draw_wide(p, lo, hi) != KS_OK)
        ks_dsa_draw_scalar(p, lo, hi);
}
