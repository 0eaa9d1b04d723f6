// dsa_pass.c - the DSA access model's passes over a layer's units, in
// plain C, AVX2 and AVX-512 forms (see dsa_pass.h).
//
// The wide forms compute what the plain one does, lane by lane. The draw:
// the hash in 64-bit lanes (AVX-512DQ's vpmullq; on AVX2 the product's low
// 64 bits from three 32 x 32-bit multiplies), the table index from its top
// bits, the table read by a gather, then the same float multiplies and adds,
// each rounded on its own (the intrinsics below are separate multiplies and
// adds; nothing fuses them). The bound and the threshold: ordered compares
// (false for NaN, as C's), the units kept written in order by a compress
// (AVX-512) or taken bit by bit from a mask (SSE2).
// NOTE: on one 32K-token request of hisparse_missrate.lua the draw was about
// half of the drawing thread's samples in its plain form (perf, 2026-12-05);
// the AVX-512 forms of the bound and the threshold took ks_dsa_select (2048
// of 32K units, 78 layers x 32 steps) from 0.29 to 0.17 s, those of the
// rank's passes from 0.258 to 0.208 s on a slower hour of the same machine
// (a harness calling it alone, 6 and 10 alternating runs, medians,
// 2026-12-05).
#include "dsa_pass.h"

#include "rng.h"
#include "status.h"

// ---- plain forms ------------------------------------------------------------

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

static void draw_plain(const struct ks_dsa_draw *p, uint32_t lo, uint32_t hi)
{
    for (uint32_t i = lo; i < hi; i++)
        draw_one(p, i);
}

// ks_dsa_at_least from unit i on, c kept so far. No branch: every value is
// written at dst[c], which only the kept ones move past (c <= i: in place
// when dst is s).
static uint32_t at_least_plain(float *dst, const float *s, uint32_t i, uint32_t n, float low, uint32_t c)
{
    for (; i < n; i++) {
        float v = s[i];
        dst[c] = v;
        c += v >= low;
    }
    return c;
}

static inline uint32_t bucket_of(float v, float lo, float scale, float top)
{
    float x = (v - lo) * scale;
    return (uint32_t)(x < top ? x : top);
}

static void range_plain(const float *a, uint32_t i, uint32_t n, float *lo, float *hi)
{
    float l = *lo, h = *hi;
    for (; i < n; i++) {
        l = a[i] < l ? a[i] : l;
        h = a[i] > h ? a[i] : h;
    }
    *lo = l;
    *hi = h;
}

static void count_plain(const float *a, uint32_t i, uint32_t n, float lo, float scale, float top, uint32_t *count)
{
    for (; i < n; i++)
        count[bucket_of(a[i], lo, scale, top)]++;
}

// As at_least_plain, for the values in bucket b.
static uint32_t in_bucket_plain(float *dst, const float *a, uint32_t i, uint32_t n, float lo, float scale, float top,
                                uint32_t b, uint32_t c)
{
    for (; i < n; i++) {
        float v = a[i];
        dst[c] = v;
        c += bucket_of(v, lo, scale, top) == b;
    }
    return c;
}

// Appends to out[0 .. m) the units of [from, to) above thr and, while *ties
// lasts, those at it, in order, until want are there; returns the new count.
// No branch but for a tie (scores are random floats: ties are rare, and a
// branch taken for about one unit in sixteen mispredicts often).
static uint32_t take_units(const float *s, uint32_t from, uint32_t to, float thr, uint32_t *ties, uint32_t want,
                           uint32_t *out, uint32_t m)
{
    for (uint32_t i = from; i < to && m < want; i++) {
        float v = s[i];
        uint32_t take = v > thr;
        if (__builtin_expect(v == thr, 0) && *ties > 0) {
            --*ties;
            take = 1;
        }
        out[m] = i; // m < want: within out, kept only when taken
        m += take;
    }
    return m;
}

static void divide_plain(float *mass, uint32_t i, uint32_t m, double sum)
{
    for (; i < m; i++)
        mass[i] = (float)(mass[i] / sum);
}

// ---- wide forms ---------------------------------------------------------------

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define KS_DSA_X86 1
#include <immintrin.h>
#define AVX512 __attribute__((target("avx512f,avx512dq")))
#define AVX2 __attribute__((target("avx2")))

// The units of [lo, hi) below p->m lean, the others not: a wide form's run
// takes its blocks of units in each part and leaves the rest of each part
// (less than a block) to the plain form.
static void split_run(uint32_t (*run)(const struct ks_dsa_draw *, uint32_t, uint32_t, int),
                      const struct ks_dsa_draw *p, uint32_t lo, uint32_t hi)
{
    uint32_t split = p->m < lo ? lo : p->m > hi ? hi : p->m;
    draw_plain(p, run(p, lo, split, 1), split);
    draw_plain(p, run(p, split, hi, 0), hi);
}

// mass[0 .. 8j) / sum, eight at a time (each widened to double, divided,
// rounded to float: the plain form's operations); returns 8j.
AVX512 static uint32_t divide8(float *mass, uint32_t m, double sum)
{
    __m512d d = _mm512_set1_pd(sum);
    uint32_t i = 0;
    for (; i + 8 <= m; i += 8)
        _mm256_storeu_ps(mass + i, _mm512_cvtpd_ps(_mm512_div_pd(_mm512_cvtps_pd(_mm256_loadu_ps(mass + i)), d)));
    return i;
}

// The same, four at a time.
AVX2 static uint32_t divide4(float *mass, uint32_t m, double sum)
{
    __m256d d = _mm256_set1_pd(sum);
    uint32_t i = 0;
    for (; i + 4 <= m; i += 4)
        _mm_storeu_ps(mass + i, _mm256_cvtpd_ps(_mm256_div_pd(_mm256_cvtps_pd(_mm_loadu_ps(mass + i)), d)));
    return i;
}

// Eight units' table values from their hashes x.
AVX512 static inline __m256 table8(const float *table, __m512i x)
{
    x = _mm512_xor_si512(x, _mm512_srli_epi64(x, 30));
    x = _mm512_mullo_epi64(x, _mm512_set1_epi64((long long)KS_RNG_MIX_M1));
    x = _mm512_xor_si512(x, _mm512_srli_epi64(x, 27));
    x = _mm512_mullo_epi64(x, _mm512_set1_epi64((long long)KS_RNG_MIX_M2));
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
        __m512 z =
            p->stationary ? w : _mm512_add_ps(_mm512_mul_ps(fa, _mm512_loadu_ps(p->z + i)), _mm512_mul_ps(fc, w));
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
    x = mul64(x, KS_RNG_MIX_M1);
    x = _mm256_xor_si256(x, _mm256_srli_epi64(x, 27));
    x = mul64(x, KS_RNG_MIX_M2);
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
        __m256 z =
            p->stationary ? w : _mm256_add_ps(_mm256_mul_ps(fa, _mm256_loadu_ps(p->z + i)), _mm256_mul_ps(fc, w));
        _mm256_storeu_ps(p->z + i, z);
        if (p->s)
            _mm256_storeu_ps(p->s + i, _mm256_add_ps(_mm256_loadu_ps(p->g + i), _mm256_mul_ps(sigma, z)));
        if (p->keep)
            _mm256_storeu_ps(p->keep + i, w);
    }
    return i;
}

// Units [i, i + 16j) of the take (ks_dsa_take, m kept so far), 16 at a time:
// the units above thr written in order by a compress, unless the block would
// pass `want` (then bit by bit) or holds a unit at thr (then unit by unit).
// Returns the new count; *at: where it stopped.
AVX512 static uint32_t take16(const float *s, uint32_t n, float thr, uint32_t *ties, uint32_t want, uint32_t *out,
                              uint32_t *at)
{
    const __m512 t = _mm512_set1_ps(thr);
    __m512i idx = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    const __m512i sixteen = _mm512_set1_epi32(16);
    uint32_t m = 0, i = 0;
    for (; n - i >= 16 && m < want; i += 16, idx = _mm512_add_epi32(idx, sixteen)) {
        __m512 v = _mm512_loadu_ps(s + i);
        __mmask16 gt = _mm512_cmp_ps_mask(v, t, _CMP_GT_OQ);
        if (__builtin_expect(_mm512_cmp_ps_mask(v, t, _CMP_EQ_OQ) != 0, 0)) {
            m = take_units(s, i, i + 16, thr, ties, want, out, m);
            continue;
        }
        uint32_t k = (uint32_t)__builtin_popcount(gt);
        if (__builtin_expect(m + k > want, 0)) {
            for (unsigned b = gt; b && m < want; b &= b - 1)
                out[m++] = i + (uint32_t)__builtin_ctz(b);
            continue;
        }
        _mm512_mask_compressstoreu_epi32(out + m, gt, idx);
        m += k;
    }
    *at = i;
    return m;
}

// ks_dsa_at_least's units [0, 16j), 16 at a time; *at: where it stopped.
AVX512 static uint32_t at_least16(float *dst, const float *s, uint32_t n, float low, uint32_t *at)
{
    const __m512 b = _mm512_set1_ps(low);
    uint32_t c = 0, i = 0;
    for (; n - i >= 16; i += 16) {
        __m512 v = _mm512_loadu_ps(s + i);
        __mmask16 k = _mm512_cmp_ps_mask(v, b, _CMP_GE_OQ);
        _mm512_mask_compressstoreu_ps(dst + c, k, v); // c <= i: below the units still to read
        c += (uint32_t)__builtin_popcount(k);
    }
    *at = i;
    return c;
}

// ks_dsa_range's units [1, 1 + 16j), 16 lanes each keeping its own least
// and greatest in order (vminps(x, lo) keeps lo on a tie or a NaN, as the
// plain form does), then the lanes in order. Lanes can disagree only on
// the sign of a zero, which the plain form settles by order: a zero found
// sends the caller to the plain form. *at: where it stopped.
AVX512 static void range16(const float *a, uint32_t n, float *lo, float *hi, uint32_t *at)
{
    __m512 l = _mm512_set1_ps(*lo), h = _mm512_set1_ps(*hi);
    uint32_t i = 1;
    for (; n - i >= 16; i += 16) {
        __m512 v = _mm512_loadu_ps(a + i);
        l = _mm512_min_ps(v, l);
        h = _mm512_max_ps(v, h);
    }
    float ls[16], hs[16];
    _mm512_storeu_ps(ls, l);
    _mm512_storeu_ps(hs, h);
    float x = ls[0], y = hs[0];
    for (int j = 1; j < 16; j++) {
        x = ls[j] < x ? ls[j] : x;
        y = hs[j] > y ? hs[j] : y;
    }
    *lo = x;
    *hi = y;
    *at = i;
}

AVX512 static inline __m512i buckets16(__m512 v, __m512 lo, __m512 scale, __m512 top)
{
    return _mm512_cvttps_epu32(_mm512_min_ps(_mm512_mul_ps(_mm512_sub_ps(v, lo), scale), top));
}

// ks_dsa_count_buckets' units [0, 16j): the buckets of 256 units at a
// time, 16 by 16, then counted one by one (read well after they were
// written: the counts do not wait on the stores).
AVX512 static uint32_t count16(const float *a, uint32_t n, float lo, float scale, float top, uint32_t *count)
{
    const __m512 l = _mm512_set1_ps(lo), s = _mm512_set1_ps(scale), t = _mm512_set1_ps(top);
    uint32_t i = 0, b[256];
    while (n - i >= 16) {
        uint32_t k = 0;
        for (; k < 256 && n - i >= 16; k += 16, i += 16)
            _mm512_storeu_si512(b + k, buckets16(_mm512_loadu_ps(a + i), l, s, t));
        for (uint32_t j = 0; j < k; j++)
            count[b[j]]++;
    }
    return i;
}

// ks_dsa_in_bucket's units [0, 16j), compressed; *at: where it stopped.
AVX512 static uint32_t in_bucket16(float *dst, const float *a, uint32_t n, float lo, float scale, float top,
                                   uint32_t b, uint32_t *at)
{
    const __m512 l = _mm512_set1_ps(lo), s = _mm512_set1_ps(scale), t = _mm512_set1_ps(top);
    const __m512i want = _mm512_set1_epi32((int)b);
    uint32_t c = 0, i = 0;
    for (; n - i >= 16; i += 16) {
        __m512 v = _mm512_loadu_ps(a + i);
        __mmask16 k = _mm512_cmpeq_epi32_mask(buckets16(v, l, s, t), want);
        _mm512_mask_compressstoreu_ps(dst + c, k, v); // c <= i: below the units still to read
        c += (uint32_t)__builtin_popcount(k);
    }
    *at = i;
    return c;
}

// The take's units [0, 16j) with SSE2 (the AVX2 level): each block's
// comparisons as bit masks, the units above thr taken bit by bit.
// NOTE: about one unit in sixteen is kept (top-2048 of 32K), so most blocks
// cost four compares; unit by unit throughout, ks_dsa_select (2048 of 32K
// units, 78 layers x 32 steps) took 1.09 times as long (8 alternating runs,
// medians, 2026-12-05).
static uint32_t take16_sse2(const float *s, uint32_t n, float thr, uint32_t *ties, uint32_t want, uint32_t *out,
                            uint32_t *at)
{
    const __m128 t4 = _mm_set1_ps(thr);
    uint32_t m = 0, i = 0;
    for (; n - i >= 16 && m < want; i += 16) {
        unsigned gt = 0, eq = 0;
        for (unsigned q = 0; q < 4; q++) {
            __m128 v = _mm_loadu_ps(s + i + 4 * q);
            gt |= (unsigned)_mm_movemask_ps(_mm_cmpgt_ps(v, t4)) << (4 * q);
            eq |= (unsigned)_mm_movemask_ps(_mm_cmpeq_ps(v, t4)) << (4 * q);
        }
        if (__builtin_expect(eq != 0, 0)) {
            m = take_units(s, i, i + 16, thr, ties, want, out, m);
            continue;
        }
        for (; gt && m < want; gt &= gt - 1)
            out[m++] = i + (unsigned)__builtin_ctz(gt);
    }
    *at = i;
    return m;
}
#endif

enum ks_dsa_isa ks_dsa_isa_best(void)
{
#ifdef KS_DSA_X86
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq"))
        return KS_DSA_AVX512;
    if (__builtin_cpu_supports("avx2"))
        return KS_DSA_AVX2;
#endif
    return KS_DSA_PLAIN;
}

void ks_dsa_draw(enum ks_dsa_isa isa, const struct ks_dsa_draw *p, uint32_t lo, uint32_t hi)
{
    if (lo >= hi)
        return;
#ifdef KS_DSA_X86
    if (isa == KS_DSA_AVX512) {
        split_run(run16, p, lo, hi);
        return;
    }
    if (isa == KS_DSA_AVX2) {
        split_run(run8, p, lo, hi);
        return;
    }
#endif
    (void)isa;
    draw_plain(p, lo, hi);
}

uint32_t ks_dsa_at_least(enum ks_dsa_isa isa, float *dst, const float *s, uint32_t n, float low)
{
    uint32_t c = 0, i = 0;
#ifdef KS_DSA_X86
    if (isa == KS_DSA_AVX512)
        c = at_least16(dst, s, n, low, &i);
#endif
    (void)isa;
    return at_least_plain(dst, s, i, n, low, c);
}

uint32_t ks_dsa_take(enum ks_dsa_isa isa, const float *s, uint32_t n, float thr, uint32_t ties, uint32_t want,
                     uint32_t *out)
{
    uint32_t m = 0, i = 0;
#ifdef KS_DSA_X86
    if (isa == KS_DSA_AVX512)
        m = take16(s, n, thr, &ties, want, out, &i);
    else if (isa == KS_DSA_AVX2)
        m = take16_sse2(s, n, thr, &ties, want, out, &i);
#endif
    (void)isa;
    return take_units(s, i, n, thr, &ties, want, out, m);
}

void ks_dsa_range(enum ks_dsa_isa isa, const float *a, uint32_t n, float *lo, float *hi)
{
    *lo = *hi = a[0];
#ifdef KS_DSA_X86
    if (isa == KS_DSA_AVX512) {
        float l = a[0], h = a[0];
        uint32_t i;
        range16(a, n, &l, &h, &i);
        range_plain(a, i, n, &l, &h);
        if (l != 0 && h != 0) {
            *lo = l;
            *hi = h;
            return;
        }
    }
#endif
    (void)isa;
    range_plain(a, 1, n, lo, hi);
}

void ks_dsa_count_buckets(enum ks_dsa_isa isa, const float *a, uint32_t n, float lo, float scale, float top,
                          uint32_t *count)
{
    uint32_t i = 0;
#ifdef KS_DSA_X86
    if (isa == KS_DSA_AVX512)
        i = count16(a, n, lo, scale, top, count);
#endif
    (void)isa;
    count_plain(a, i, n, lo, scale, top, count);
}

uint32_t ks_dsa_in_bucket(enum ks_dsa_isa isa, float *dst, const float *a, uint32_t n, float lo, float scale,
                          float top, uint32_t b)
{
    uint32_t c = 0, i = 0;
#ifdef KS_DSA_X86
    if (isa == KS_DSA_AVX512)
        c = in_bucket16(dst, a, n, lo, scale, top, b, &i);
#endif
    (void)isa;
    return in_bucket_plain(dst, a, i, n, lo, scale, top, b, c);
}

void ks_dsa_divide(enum ks_dsa_isa isa, float *mass, uint32_t m, double sum)
{
    uint32_t i = 0;
#ifdef KS_DSA_X86
    if (isa == KS_DSA_AVX512)
        i = divide8(mass, m, sum);
    else if (isa == KS_DSA_AVX2)
        i = divide4(mass, m, sum);
#endif
    (void)isa;
    divide_plain(mass, i, m, sum);
}
