// test_dsa_pass.c - the DSA model's passes over a layer's units
// (sim/workload/dsa_pass.h). The draw: its plain form against the formula
// written out, and each wide form (AVX2, AVX-512) against the plain one, bit
// for bit, over every combination of the pass's options, ranges that start
// and end off the 8- and 16-unit blocks, and leans that end inside, before
// and after the range. The bound and the threshold: every form against the
// rule written unit by unit, on values with many ties and some NaNs. The
// masses' division: every form against the quotient written out, on
// lengths off the 4- and 8-unit blocks, sums near one and far from it, and
// masses from the smallest subnormal to the largest float. A form
// this CPU lacks is skipped; with neither wide form, the test exits with
// KS_TEST_SKIP_CODE (skipped) after the plain checks.
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dsa_pass.h"
#include "rng.h"
#include "status.h"

enum { N = 300, QN = 1 << KS_DSA_QBITS };

struct arrays {
    float z[N], s[N], keep[N], lower[N];
};

static float table[QN], g[N];

static void fill(struct ks_rng *rng, float *a, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++)
        a[i] = (float)((double)(ks_rng_next(rng) >> 11) * 0x1.0p-53 * 8 - 4);
}

// The pass's options: stationary, scored, kept, kept where the lean is read.
struct options {
    int stationary, scored, keep, alias;
};

static struct ks_dsa_draw pass_of(struct arrays *x, struct options o, uint64_t key, uint32_t m)
{
    return (struct ks_dsa_draw){.table = table, .key = key, .a = 0.6f, .c = 0.8f, .m = m, .lower = x->lower,
                                .stationary = o.stationary, .fa = 0.3f, .fc = 0.95393920f, .z = x->z, .g = g,
                                .sigma = 1.7f, .s = o.scored ? x->s : NULL,
                                .keep = !o.keep ? NULL : o.alias ? x->lower : x->keep};
}

// The plain form is the formula of dsa_pass.h, unit by unit; units outside
// [lo, hi) are left alone.
static void plain_is_the_formula(void **state)
{
    (void)state;
    struct ks_rng rng;
    ks_rng_seed(&rng, 3);
    fill(&rng, table, QN);
    fill(&rng, g, N);
    static struct arrays x, ref;
    for (int opt = 0; opt < 16; opt++) {
        struct options o = {opt & 1, opt >> 1 & 1, opt >> 2 & 1, opt >> 3 & 1};
        fill(&rng, x.z, N), fill(&rng, x.s, N), fill(&rng, x.keep, N), fill(&rng, x.lower, N);
        ref = x;
        uint32_t lo = 5, hi = 250, m = 100;
        struct ks_dsa_draw p = pass_of(&x, o, 77 + (uint64_t)opt, m);
        ks_dsa_draw(KS_DSA_PLAIN, &p, lo, hi);
        for (uint32_t i = 0; i < N; i++) {
            float e = table[ks_rng_mix(p.key + i * KS_DSA_GOLDEN) >> (64 - KS_DSA_QBITS)];
            float lower = ref.lower[i];
            float w = e;
            if (i < m) {
                float aw = p.a * lower, ce = p.c * e;
                w = aw + ce;
            }
            float z = ref.z[i];
            if (o.stationary)
                z = w;
            else {
                float az = p.fa * z, cw = p.fc * w;
                z = az + cw;
            }
            int in = i >= lo && i < hi;
            float *kept = o.alias ? x.lower : x.keep, *kref = o.alias ? ref.lower : ref.keep;
            assert_memory_equal(&x.z[i], in ? &z : &ref.z[i], sizeof z);
            float sz = p.sigma * z, s = g[i] + sz;
            assert_memory_equal(&x.s[i], in && o.scored ? &s : &ref.s[i], sizeof s);
            assert_memory_equal(&kept[i], in && o.keep ? &w : &kref[i], sizeof w);
        }
    }
}

static const char *isa_name(enum ks_dsa_isa isa)
{
    return isa == KS_DSA_AVX512 ? "AVX-512" : isa == KS_DSA_AVX2 ? "AVX2" : "plain C";
}

// Skips a test of a form this CPU lacks.
static void need(enum ks_dsa_isa isa)
{
    if (isa > ks_dsa_isa_best()) {
        printf("# no %s here: that form is not checked\n", isa_name(isa));
        skip();
    }
}

// A wide form of the draw writes the plain form's bits, and nothing outside the range.
static void draw_form(enum ks_dsa_isa isa)
{
    need(isa);
    struct ks_rng rng;
    ks_rng_seed(&rng, 5);
    fill(&rng, table, QN);
    fill(&rng, g, N);
    static const uint32_t los[] = {0, 1, 7, 8, 16, 33}, his[] = {0, 7, 15, 16, 17, 64, 131, 299, 300};
    static const uint32_t ms[] = {0, 1, 20, 48, 49, 140, 300};
    static struct arrays x, y;
    size_t cases = 0;
    for (int opt = 0; opt < 16; opt++) {
        struct options o = {opt & 1, opt >> 1 & 1, opt >> 2 & 1, opt >> 3 & 1};
        for (size_t a = 0; a < sizeof los / sizeof *los; a++)
            for (size_t b = 0; b < sizeof his / sizeof *his; b++)
                for (size_t c = 0; c < sizeof ms / sizeof *ms; c++) {
                    uint32_t lo = los[a], hi = his[b] < lo ? lo : his[b];
                    fill(&rng, x.z, N), fill(&rng, x.s, N), fill(&rng, x.keep, N), fill(&rng, x.lower, N);
                    y = x;
                    uint64_t key = ks_rng_next(&rng);
                    struct ks_dsa_draw p = pass_of(&x, o, key, ms[c]), q = pass_of(&y, o, key, ms[c]);
                    ks_dsa_draw(KS_DSA_PLAIN, &p, lo, hi);
                    ks_dsa_draw(isa, &q, lo, hi);
                    if (memcmp(&x, &y, sizeof x) != 0)
                        fail_msg("%s, options %d, units [%u, %u), lean below %u: not the plain form's bits",
                                 isa_name(isa), opt, lo, hi, ms[c]);
                    cases++;
                }
    }
    printf("# %s draw: %zu ranges and options, the plain form's bits\n", isa_name(isa), cases);
}

static void draw_avx2(void **state)
{
    (void)state;
    draw_form(KS_DSA_AVX2);
}

static void draw_avx512(void **state)
{
    (void)state;
    draw_form(KS_DSA_AVX512);
}

// Values 0 .. 15 with a NaN every 101st: ties everywhere, and NaNs.
enum { NV = 4099 };
static float vals[NV];
static void fill_ties(void)
{
    uint64_t x = 2463534242u;
    for (uint32_t i = 0; i < NV; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        vals[i] = i % 101 == 50 ? NAN : (float)(x % 16);
    }
}
static const uint32_t lens[] = {0, 1, 15, 16, 17, 31, 33, 100, 1000, NV};

// The values at or above a bound, in order, against the rule; in place too.
static void at_least_form(enum ks_dsa_isa isa)
{
    need(isa);
    fill_ties();
    static float got[NV], ref[NV];
    int checked = 0;
    for (unsigned li = 0; li < sizeof lens / sizeof *lens; li++) {
        uint32_t n = lens[li];
        for (int t = -1; t <= 16; t++) {
            float low = t < 0 ? -INFINITY : (float)t;
            uint32_t m = 0;
            for (uint32_t i = 0; i < n; i++)
                if (vals[i] >= low)
                    ref[m++] = vals[i];
            uint32_t k = ks_dsa_at_least(isa, got, vals, n, low);
            if (k != m || memcmp(got, ref, m * sizeof *ref) != 0)
                fail_msg("%s, n %u, bound %g: %u kept, the rule's %u", isa_name(isa), n, low, k, m);
            memcpy(got, vals, n * sizeof *got);
            k = ks_dsa_at_least(isa, got, got, n, low);
            if (k != m || memcmp(got, ref, m * sizeof *ref) != 0)
                fail_msg("%s, in place, n %u, bound %g: %u kept, the rule's %u", isa_name(isa), n, low, k, m);
            checked += 2;
        }
    }
    printf("# %s bound: %d cases as the rule\n", isa_name(isa), checked);
}

static void at_least_plain(void **state)
{
    (void)state;
    at_least_form(KS_DSA_PLAIN);
}

static void at_least_avx512(void **state)
{
    (void)state;
    at_least_form(KS_DSA_AVX512);
}

// The order statistics' passes of a form against the plain ones: the range
// (first values NaN, zero of either sign, or neither; NaNs and zeros of both
// signs inside, in a pattern and strewn: the plain form keeps the first zero
// it meets), the bucket counts and the values of each bucket, in place too,
// on values with ties, NaNs and zeros, random floats, and a narrow range.
static void rank_form(enum ks_dsa_isa isa)
{
    need(isa);
    struct ks_rng rng;
    ks_rng_seed(&rng, 9);
    enum { M = 1000, TOPB = 63 };
    static float a[M], got[M], ref[M];
    static const uint32_t ns[] = {1, 2, 15, 16, 17, 33, 100, 999, M};
    int checked = 0;
    for (int kind = 0; kind < 5; kind++)
        for (size_t ni = 0; ni < sizeof ns / sizeof *ns; ni++) {
            uint32_t n = ns[ni];
            for (uint32_t i = 0; i < n; i++) {
                double u = (double)(ks_rng_next(&rng) >> 11) * 0x1.0p-53;
                a[i] = kind == 0 ? (float)(ks_rng_next(&rng) % 16) // ties
                       : kind == 1 ? (float)(u * 8 - 4)            // random floats
                       : kind == 2 ? (float)(1 + u * 0x1.0p-20)    // a narrow range
                       : kind == 3 ? (i % 3 == 0 ? 0.0f : i % 3 == 1 ? -0.0f : (float)u) // zeros of both signs
                                   : (u < 0.125 ? (u < 0.0625 ? 0.0f : -0.0f) : (float)u); // zeros strewn
                if (i % 37 == 36)
                    a[i] = NAN;
            }
            for (int first = 0; first < 5; first++) {
                a[0] = first == 0 ? a[0] : first == 1 ? NAN : first == 2 ? 0.0f : first == 3 ? -0.0f : 0.5f;
                float lo, hi, rlo, rhi;
                ks_dsa_range(isa, a, n, &lo, &hi);
                ks_dsa_range(KS_DSA_PLAIN, a, n, &rlo, &rhi);
                if (memcmp(&lo, &rlo, sizeof lo) != 0 || memcmp(&hi, &rhi, sizeof hi) != 0)
                    fail_msg("%s, kind %d, n %u, first %d: range [%g, %g], the plain form's [%g, %g]", isa_name(isa),
                             kind, n, first, lo, hi, rlo, rhi);
                if (!(hi > lo))
                    continue;
                float scale = (float)(TOPB + 1) / (hi - lo);
                uint32_t count[TOPB + 1] = {0}, rcount[TOPB + 1] = {0};
                ks_dsa_count_buckets(isa, a, n, lo, scale, (float)TOPB, count);
                ks_dsa_count_buckets(KS_DSA_PLAIN, a, n, lo, scale, (float)TOPB, rcount);
                if (memcmp(count, rcount, sizeof count) != 0)
                    fail_msg("%s, kind %d, n %u: bucket counts differ", isa_name(isa), kind, n);
                for (uint32_t b = 0; b <= TOPB; b += 7) {
                    uint32_t k = ks_dsa_in_bucket(isa, got, a, n, lo, scale, (float)TOPB, b);
                    uint32_t r = ks_dsa_in_bucket(KS_DSA_PLAIN, ref, a, n, lo, scale, (float)TOPB, b);
                    if (k != r || k != rcount[b] || memcmp(got, ref, k * sizeof *got) != 0)
                        fail_msg("%s, kind %d, n %u, bucket %u: %u values, the plain form's %u", isa_name(isa), kind,
                                 n, b, k, r);
                    memcpy(got, a, n * sizeof *got);
                    k = ks_dsa_in_bucket(isa, got, got, n, lo, scale, (float)TOPB, b);
                    if (k != r || memcmp(got, ref, k * sizeof *got) != 0)
                        fail_msg("%s, in place, kind %d, n %u, bucket %u: not the plain form's", isa_name(isa), kind,
                                 n, b);
                }
                checked++;
            }
        }
    printf("# %s rank passes: %d cases as the plain form's\n", isa_name(isa), checked);
}

static void rank_avx512(void **state)
{
    (void)state;
    rank_form(KS_DSA_AVX512);
}

// What a selection keeps once its threshold is known (ks_dsa_take): every
// unit above it and the first `ties` at it, in order, until want are kept;
// against that rule written unit by unit, on values with many ties and some
// NaNs, lengths around the 16-unit blocks, every threshold, tie allowance
// and want.
static void take_form(enum ks_dsa_isa isa)
{
    need(isa);
    fill_ties();
    static uint32_t got[NV], ref[NV];
    int checked = 0;
    for (unsigned li = 0; li < sizeof lens / sizeof *lens; li++) {
        uint32_t n = lens[li];
        for (int t = -1; t <= 16; t++) {
            float thr = t < 0 ? -INFINITY : (float)t;
            const uint32_t tie_counts[] = {0, 1, 5, n};
            for (unsigned ti = 0; ti < 4; ti++) {
                const uint32_t wants[] = {1, 7, n / 3 + 1, n + 1};
                for (unsigned wi = 0; wi < 4; wi++) {
                    uint32_t want = wants[wi], ties = tie_counts[ti], m = 0;
                    for (uint32_t i = 0; i < n && m < want; i++) {
                        int take = vals[i] > thr || (vals[i] == thr && ties > 0 && ties--);
                        if (take)
                            ref[m++] = i;
                    }
                    uint32_t k = ks_dsa_take(isa, vals, n, thr, tie_counts[ti], want, got);
                    if (k != m || memcmp(got, ref, m * sizeof *ref) != 0)
                        fail_msg("%s, n %u, threshold %g, ties %u, want %u: %u kept, the rule's %u",
                                 isa_name(isa), n, thr, tie_counts[ti], want, k, m);
                    checked++;
                }
            }
        }
    }
    printf("# %s threshold: %d cases as the rule\n", isa_name(isa), checked);
}

static void take_plain(void **state)
{
    (void)state;
    take_form(KS_DSA_PLAIN);
}

static void take_avx2(void **state)
{
    (void)state;
    take_form(KS_DSA_AVX2);
}

static void take_avx512(void **state)
{
    (void)state;
    take_form(KS_DSA_AVX512);
}

// Each mass divided by the sum in double, rounded to float once: the rule,
// against every form, in lengths that end off the 4- and 8-unit blocks.
static void divide_form(enum ks_dsa_isa isa)
{
    need(isa);
    enum { M = 1029 };
    static float mass[M], ref[M];
    static const uint32_t ms[] = {0, 1, 3, 4, 5, 7, 8, 9, 15, 16, 17, 1000, M};
    static const double sums[] = {1.0, 1.0000000001, 3.7, 2048.25, 1e-30, 7e300};
    struct ks_rng rng;
    ks_rng_seed(&rng, 11);
    int checked = 0;
    for (unsigned si = 0; si < sizeof sums / sizeof *sums; si++)
        for (unsigned mi = 0; mi < sizeof ms / sizeof *ms; mi++) {
            uint32_t m = ms[mi];
            for (uint32_t i = 0; i < m; i++) // (0, 1], with the ends of float's range strewn in
                mass[i] = i % 97 == 3 ? 0x1p-149f : i % 89 == 5 ? 3.4e38f : i % 83 == 7 ? 0.0f
                                                                              : (float)ks_rng_unit(&rng) + 0x1p-24f;
            for (uint32_t i = 0; i < m; i++) {
                volatile double q = (double)mass[i] / sums[si];
                ref[i] = (float)q;
            }
            ks_dsa_divide(isa, mass, m, sums[si]);
            for (uint32_t i = 0; i < m; i++)
                if (memcmp(&mass[i], &ref[i], sizeof *ref) != 0)
                    fail_msg("%s, m %u, sum %g, mass %u: %a, the rule's %a", isa_name(isa), m, sums[si], i,
                             (double)mass[i], (double)ref[i]);
            checked++;
        }
    printf("# %s division: %d cases as the rule\n", isa_name(isa), checked);
}

static void divide_plain(void **state)
{
    (void)state;
    divide_form(KS_DSA_PLAIN);
}

static void divide_avx2(void **state)
{
    (void)state;
    divide_form(KS_DSA_AVX2);
}

static void divide_avx512(void **state)
{
    (void)state;
    divide_form(KS_DSA_AVX512);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(plain_is_the_formula), cmocka_unit_test(draw_avx2),       cmocka_unit_test(draw_avx512),
        cmocka_unit_test(at_least_plain),       cmocka_unit_test(at_least_avx512), cmocka_unit_test(take_plain),
        cmocka_unit_test(take_avx2),            cmocka_unit_test(take_avx512),     cmocka_unit_test(rank_avx512),
        cmocka_unit_test(divide_plain),         cmocka_unit_test(divide_avx2),     cmocka_unit_test(divide_avx512),
    };
    int failed = cmocka_run_group_tests(tests, NULL, NULL);
    return failed || ks_dsa_isa_best() > KS_DSA_PLAIN ? failed : KS_TEST_SKIP_CODE;
}
