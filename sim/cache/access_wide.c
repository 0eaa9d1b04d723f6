// access_wide.c - the access report's wide form: eight accesses at a time
// (AVX-512), for the cases where an access reads no state but its block's
// entry and the blocks after it (cache.c, ks_cache_access, says when).
//
// A group of eight accesses: their block ids looked up, their entries
// gathered, their heats decoded, raised by the mass times the clock's gain
// and encoded again (heat.h's operations, in the same order and rounding),
// their recency set to the step, their entries scattered back; then, in
// order, the misses become candidates and the accesses that enter a region
// or raise their block's heat make the next `window` blocks prefetch
// candidates (prefetch.c reads their tiers and states, which no access
// changes). A group with a block twice, or with a
// block that arrived by prefetch and is still unused, is left to the plain
// form (the caller's), as is a tail of fewer than eight. When a candidate
// cannot be added (KS_ENOMEM), the group's later accesses were applied
// already (the plain form stops at the failing one): the run ends there.
// NOTE: the product mass * gain is kept from fusing with the addition (a
// fused multiply-add rounds once where heat.h rounds twice).
#include "cache_impl.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define AVX512 __attribute__((target("avx512f,avx512cd")))

int ks_access_wide_available(void)
{
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512cd");
}

AVX512 uint32_t ks_access_wide(struct ks_cache *c, const struct ks_seq *s, uint32_t req, const struct ks_access *acc,
                               uint32_t n, uint32_t window, uint8_t *where, struct ks_access_report *r, int *err)
{
    enum { AHEAD = 32 }; // entries fetched ahead of their use (cache.c's AHEAD)
    long long *blk = (long long *)c->tab.blk;
    const __m512i now = _mm512_set1_epi64(c->now), low32 = _mm512_set1_epi64(0xffffffffLL);
    const __m512i heat_keep = _mm512_set1_epi64(~(long long)KS_HEAT_MAX);
    const __m512d gain = _mm512_set1_pd(c->clk.gain);
    const __m256i stride = _mm256_set_epi32(28, 24, 20, 16, 12, 8, 4, 0); // ks_access is four words
    _Static_assert(sizeof(struct ks_access) == 16, "an access is four 32-bit words");
    uint32_t i = 0;
    for (; i + 8 <= n; i += 8) {
        for (uint32_t a = i + AHEAD; a < i + AHEAD + 8 && a < n; a++)
            __builtin_prefetch(ks_blocktab_slot(&c->tab, ks_seq_lookup(s, acc[a].block)));
        __m256i j = _mm256_i32gather_epi32((const int *)&acc[i].block, stride, 4);
        __m256 mass = _mm256_i32gather_ps((const float *)&acc[i].mass, stride, 4);
        // ks_seq_lookup without a shared prefix: own[j / 32] + j % 32
        __m256i id32 = _mm256_add_epi32(_mm256_i32gather_epi32((const int *)s->own, _mm256_srli_epi32(j, 5), 4),
                                        _mm256_and_si256(j, _mm256_set1_epi32(31)));
        __m512i id = _mm512_cvtepu32_epi64(id32);
        if (_mm512_cmpneq_epi64_mask(_mm512_conflict_epi64(id), _mm512_setzero_si512()))
            break; // a block twice in the group: the plain form takes it in order
        __m512i idx = _mm512_slli_epi64(id, 1); // an entry is two 64-bit words
        __m512i w0 = _mm512_i64gather_epi64(idx, blk, 8), meta = _mm512_i64gather_epi64(idx, blk + 1, 8);
        if (_mm512_test_epi64_mask(w0, _mm512_set1_epi64(INT64_C(1) << 31)))
            break; // a block that arrived by prefetch: the plain form counts its use
        __m512i tier = _mm512_and_si512(_mm512_srli_epi64(w0, 27), _mm512_set1_epi64(3));
        __m512i state = _mm512_and_si512(_mm512_srli_epi64(w0, 29), _mm512_set1_epi64(3));
        __mmask8 in_l1 = _mm512_cmpeq_epi64_mask(tier, _mm512_setzero_si512());
        __mmask8 inflight = _mm512_mask_cmpeq_epi64_mask((__mmask8)~in_l1, state, _mm512_set1_epi64(KS_BLK_MIG_UP));
        // heat: decode, add mass * gain (mass below zero or NaN counts as 0), encode
        __mmask8 gt0 = (__mmask8)_mm256_movemask_ps(_mm256_cmp_ps(mass, _mm256_setzero_ps(), _CMP_GT_OQ));
        __m512d m = _mm512_maskz_mov_pd(gt0, _mm512_cvtps_pd(mass));
        __m512d add = _mm512_mul_pd(m, gain);
        __asm__("" : "+v"(add)); // no fused multiply-add (the NOTE above)
        __m512d ref = ks_heat_decode8(_mm512_and_si512(meta, _mm512_set1_epi64((long long)KS_HEAT_MAX)));
        __mmask8 rising = _mm512_mask_cmp_pd_mask(gt0, add, ref, _CMP_GE_OQ); // ks_heat_access's
        __m512i code = ks_heat_encode8(_mm512_add_pd(ref, add));
        _mm512_i64scatter_epi64(blk + 1, idx, _mm512_or_si512(_mm512_and_si512(meta, heat_keep), code), 8);
        _mm512_i64scatter_epi64(blk, idx, _mm512_or_si512(_mm512_and_si512(w0, low32), _mm512_slli_epi64(now, 32)), 8);
        if (c->l1_last) { // ks_l1_last_note: the key rises to now, or KS_NONE for a block not resident
            __mmask8 res = _mm512_mask_cmpeq_epi64_mask(in_l1, state, _mm512_set1_epi64(KS_BLK_RESIDENT));
            __m256i v = _mm512_cvtepi64_epi32(_mm512_mask_mov_epi64(_mm512_set1_epi64(KS_NONE), res, now));
            __m512i page = _mm512_and_si512(w0, _mm512_set1_epi64(KS_PAGE_MAX));
            _mm512_mask_i64scatter_epi32(c->l1_last, in_l1, page, v, 4);
        }
        // where each was found; in order, the misses become candidates and
        // the accesses entering a region or raising their heat prefetch after
        __m512i at = _mm512_mask_mov_epi64(tier, inflight, _mm512_set1_epi64(KS_AT_INFLIGHT));
        if (where)
            _mm_storel_epi64((__m128i *)(where + i), _mm512_cvtepi64_epi8(at));
        r->found[KS_L1] += (uint32_t)__builtin_popcount(in_l1);
        r->inflight += (uint32_t)__builtin_popcount(inflight);
        __mmask8 miss = (__mmask8) ~(in_l1 | inflight), ahead = window ? (__mmask8)(~in_l1 | rising) : 0;
        if (!(miss | ahead))
            continue;
        uint64_t t[8];
        uint32_t ids[8], js[8];
        _mm512_storeu_si512(t, tier);
        _mm256_storeu_si256((__m256i *)ids, id32);
        _mm256_storeu_si256((__m256i *)js, j);
        for (unsigned k = miss | ahead; k; k &= k - 1) {
            unsigned l = (unsigned)__builtin_ctz(k);
            if (miss >> l & 1) {
                r->found[t[l]]++;
                if (ks_cache_cand_add(c, ids[l], req, KS_CLASS_MISS, acc[i + l].ahead) != KS_OK) {
                    *err = KS_ENOMEM;
                    return i;
                }
            }
            uint32_t w = window;
            if (ahead >> l & 1 && ks_prefetch_after(c, s, req, ids[l], js[l], !(in_l1 >> l & 1), &w) != KS_OK) {
                *err = KS_ENOMEM;
                return i;
            }
        }
    }
    return i;
}
#else
int ks_access_wide_available(void)
{
    return 0;
}

uint32_t ks_access_wide(struct ks_cache *c, const struct ks_seq *s, uint32_t req, const struct ks_access *acc,
                        uint32_t n, uint32_t window, uint8_t *where, struct ks_access_report *r, int *err)
{
    (void)c, (void)s, (void)req, (void)acc, (void)n, (void)window, (void)where, (void)r, (void)err;
    return 0;
}
#endif
