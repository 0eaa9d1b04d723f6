// test_dsa_draw.c - the DSA model's per-unit noise pass (sim/workload/dsa_draw.h):
// the scalar form against the formula written out, and each wide form (AVX-512,
// AVX2) against the scalar one, bit for bit, over every combination of the
// pass's options, ranges that start and end off the 8- and 16-unit blocks, and
// leans that end inside, before and after the range. A form this CPU lacks is
// skipped; with neither, the test exits with KS_TEST_SKIP_CODE (skipped) after
// the scalar check.
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dsa_draw.h"
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

// The scalar form is the formula of dsa_draw.h, unit by unit; units outside
// [lo, hi) are left alone.
static void scalar_is_the_formula(void **state)
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
        ks_dsa_draw_scalar(&p, lo, hi);
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

// The wide forms write the scalar form's bits, and nothing outside the range.
static void wide_form(int (*form)(const struct ks_dsa_draw *, uint32_t, uint32_t), const char *name)
{
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
                    ks_dsa_draw_scalar(&p, lo, hi);
                    int st = form(&q, lo, hi);
                    if (st == KS_EINVAL) {
                        printf("# no %s here: that form is not checked\n", name);
                        skip();
                    }
                    assert_int_equal(st, KS_OK);
                    if (memcmp(&x, &y, sizeof x) != 0)
                        fail_msg("%s, options %d, units [%u, %u), lean below %u: not the scalar form's bits", name,
                                 opt, lo, hi, ms[c]);
                    cases++;
                }
    }
    printf("# %s: %zu ranges and options, the scalar form's bits\n", name, cases);
}

static void avx512_is_the_scalar(void **state)
{
    (void)state;
    wide_form(ks_dsa_draw_avx512, "AVX-512F and AVX-512DQ");
}

static void avx2_is_the_scalar(void **state)
{
    (void)state;
    wide_form(ks_dsa_draw_avx2, "AVX2");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(scalar_is_the_formula),
        cmocka_unit_test(avx512_is_the_scalar),
        cmocka_unit_test(avx2_is_the_scalar),
    };
    int failed = cmocka_run_group_tests(tests, NULL, NULL);
    struct ks_dsa_draw none = {0};
    int wide = ks_dsa_draw_avx512(&none, 0, 0) == KS_OK || ks_dsa_draw_avx2(&none, 0, 0) == KS_OK;
    return failed || wide ? failed : KS_TEST_SKIP_CODE;
}
