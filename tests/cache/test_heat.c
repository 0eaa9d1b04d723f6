// test_heat.c - heat codes and lazy decay (heat.h), alone and through the
// manager (ks_cache_heat): the lazy clock must equal eager decay, where every
// block is multiplied by 2^(-1/H) at every step.
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "heat.h"
#include "rng.h"
#include "unit_util.h"

static double rel_err(double got, double want)
{
    return fabs(got - want) / fabs(want);
}

static void encode_round_trip(void **state)
{
    (void)state;
    struct ks_rng r;
    ks_rng_seed(&r, 42);
    // every binade from 2^-510 to 2^511, several mantissas each
    for (int e = -510; e <= 511; e++) {
        for (int k = 0; k < 64; k++) {
            // k == 1: the largest mantissa, which rounds up into the next
            // binade (at e = 511 that would be 2^512, the saturation point)
            double m = k == 0 ? 1.0 : k == 1 && e < 511 ? 2.0 - 0x1p-52 : 1.0 + ks_rng_unit(&r) * (1.0 - 0x1p-28);
            double x = ldexp(m, e);
            uint64_t code = ks_heat_encode(x);
            assert_true(code > 0 && code <= KS_HEAT_MAX);
            double y = ks_heat_decode(code);
            if (rel_err(y, x) > 0x1p-29)
                fail_msg("x = %a: decoded %a, relative error %g > 2^-29", x, y, rel_err(y, x));
            assert_int_equal(ks_heat_encode(y), code); // decoded values are fixed points
        }
    }
    // exactly representable values come back exactly
    assert_true(ks_heat_decode(ks_heat_encode(1.0)) == 1.0);
    assert_true(ks_heat_decode(ks_heat_encode(0.75)) == 0.75);
    assert_true(ks_heat_decode(ks_heat_encode(1.0 + 0x1p-28)) == 1.0 + 0x1p-28);
    assert_true(ks_heat_decode(ks_heat_encode(0x1p100)) == 0x1p100);
    // rounding to nearest at 28 mantissa bits, carrying into the exponent
    assert_true(ks_heat_decode(ks_heat_encode(1.0 + 0x1p-30)) == 1.0);
    assert_true(ks_heat_decode(ks_heat_encode(1.0 + 0x1.8p-29)) == 1.0 + 0x1p-28);
    assert_true(ks_heat_decode(ks_heat_encode(2.0 - 0x1p-30)) == 2.0);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static void codes_ordered_like_values(void **state)
{
    (void)state;
    enum { N = 20000 };
    static double v[N];
    struct ks_rng r;
    ks_rng_seed(&r, 7);
    for (int i = 0; i < N; i++)
        v[i] = ldexp(1.0 + ks_rng_unit(&r), (int)ks_rng_below(&r, 1000) - 500);
    v[0] = 0.0;
    v[1] = 1.0;
    v[2] = 1.0 + 0x1p-28; // neighbours one code apart
    qsort(v, N, sizeof *v, cmp_double);
    for (int i = 1; i < N; i++) {
        uint64_t a = ks_heat_encode(v[i - 1]), b = ks_heat_encode(v[i]);
        assert_true(a <= b);
        // distinct codes mean distinct decoded values in the same order
        if (a < b)
            assert_true(ks_heat_decode(a) < ks_heat_decode(b));
    }
    assert_true(ks_heat_encode(1.0) + 1 == ks_heat_encode(1.0 + 0x1p-28));
    // integer order of any two codes is the order of their values
    for (int i = 0; i < 10000; i++) {
        uint64_t a = 1 + ks_rng_next(&r) % KS_HEAT_MAX, b = 1 + ks_rng_next(&r) % KS_HEAT_MAX;
        assert_int_equal(a < b, ks_heat_decode(a) < ks_heat_decode(b));
    }
}

static void encode_zero_nan_and_range(void **state)
{
    (void)state;
    assert_int_equal(ks_heat_encode(0.0), 0);
    assert_int_equal(ks_heat_encode(-0.0), 0);
    assert_int_equal(ks_heat_encode(NAN), 0);
    assert_int_equal(ks_heat_encode(-1.0), 0);
    assert_int_equal(ks_heat_encode(-INFINITY), 0);
    assert_true(ks_heat_decode(0) == 0.0);
    assert_int_equal(ks_heat_encode(0x1p-600), 0); // below 2^-511
    assert_int_equal(ks_heat_encode(0x1p-512), 0);
    assert_int_equal(ks_heat_encode(0x1p520), KS_HEAT_MAX); // above 2^512
    assert_int_equal(ks_heat_encode(INFINITY), KS_HEAT_MAX);
    assert_true(ks_heat_decode(KS_HEAT_MAX) >= 0x1p512);
    // rescaling keeps zero at zero
    assert_int_equal(ks_heat_rescale(0, 0x1p-64), 0);
    assert_true(ks_heat_decode(ks_heat_rescale(ks_heat_encode(0x1p70), 0x1p-64)) == 64.0);
}

#ifdef KS_HEAT_WIDE
KS_HEAT_AVX512 static void wide8(const double x[8], const uint64_t code[8], uint64_t enc[8], double dec[8])
{
    _mm512_storeu_si512(enc, ks_heat_encode8(_mm512_loadu_pd(x)));
    _mm512_storeu_pd(dec, ks_heat_decode8(_mm512_loadu_si512(code)));
}
#endif

// The eight-lane forms (heat.h, for the access report's wide form) give the
// scalar ones' codes and values: the edges above, mantissas that round up
// into the next power of two (all 28 kept bits ones, the next one set),
// halfway cases, and random doubles and codes over the whole range.
static void wide_forms(void **state)
{
    (void)state;
#ifndef KS_HEAT_WIDE
    skip();
#else
    if (!__builtin_cpu_supports("avx512f"))
        skip();
    struct ks_rng r;
    ks_rng_seed(&r, 17);
    double x[8];
    uint64_t code[8], enc[8];
    double dec[8];
    uint64_t carries = 0;
    for (int round = 0; round < 20000; round++) {
        for (int i = 0; i < 8; i++) {
            uint64_t u;
            switch (round < 8 ? round : (int)ks_rng_below(&r, 6)) {
            case 0: { // edges
                const double edge[] = {0.0, -0.0, NAN, -1.0, INFINITY, -INFINITY, 0x1p-600, 0x1p-511, 0x1p-510,
                                       0x1p-512, 0x1p520, 0x1p512, 0x1.ffffffp511, 4.9e-324, 1.0, 0x1p-1022};
                x[i] = edge[(round * 8 + i) % 16];
                break;
            }
            case 1: // the 28 kept bits all ones, the next one set: rounds up to the next power of two
                u = ((uint64_t)(1023 - 40 + ks_rng_below(&r, 80)) << 52) | (((UINT64_C(1) << 28) - 1) << 24) |
                    (UINT64_C(1) << 23) | (ks_rng_next(&r) & ((UINT64_C(1) << 23) - 1));
                memcpy(&x[i], &u, sizeof u);
                carries++;
                break;
            case 2: // exactly halfway between two codes
                u = ((uint64_t)(1023 - 40 + ks_rng_below(&r, 80)) << 52) |
                    ((ks_rng_next(&r) & ((UINT64_C(1) << 28) - 1)) << 24) | (UINT64_C(1) << 23);
                memcpy(&x[i], &u, sizeof u);
                break;
            case 3: // the largest exponents kept, and the smallest
                u = (uint64_t)(ks_rng_below(&r, 2) ? 1023 + 505 + ks_rng_below(&r, 12)
                                                   : 1023 - 516 + ks_rng_below(&r, 12)) << 52 |
                    (ks_rng_next(&r) & ((UINT64_C(1) << 52) - 1));
                memcpy(&x[i], &u, sizeof u);
                break;
            default: // any bits: every exponent, both signs, NaNs and infinities
                u = ks_rng_next(&r);
                memcpy(&x[i], &u, sizeof u);
                break;
            }
            code[i] = ks_rng_below(&r, 4) == 0 ? 0 : ks_rng_next(&r) % (KS_HEAT_MAX + 1);
        }
        wide8(x, code, enc, dec);
        for (int i = 0; i < 8; i++) {
            if (enc[i] != ks_heat_encode(x[i]))
                fail_msg("encode(%a): %#llx in eight lanes, %#llx alone", x[i], (unsigned long long)enc[i],
                         (unsigned long long)ks_heat_encode(x[i]));
            double d = ks_heat_decode(code[i]);
            if (memcmp(&dec[i], &d, sizeof d) != 0)
                fail_msg("decode(%#llx): %a in eight lanes, %a alone", (unsigned long long)code[i], dec[i], d);
        }
    }
    assert_true(carries > 1000);
#endif
}

// Runs n_blocks blocks for `steps` steps with half-life H, each block
// accessed after random gaps of 1..max_gap steps with random masses spread
// over three decades; compares the lazy clock with eager decay in double.
static void lazy_vs_eager(uint32_t H, uint32_t steps, uint32_t max_gap, uint64_t seed, uint32_t *rebases)
{
    enum { NB = 64 };
    uint64_t code[NB] = {0};
    double eager[NB] = {0};
    uint32_t next[NB];
    struct ks_rng r;
    ks_rng_seed(&r, seed);
    struct ks_heat_clock clk;
    ks_heat_clock_init(&clk, H, 0);
    double d = exp2(-1.0 / H);
    for (int i = 0; i < NB; i++)
        next[i] = ks_rng_below(&r, max_gap);
    *rebases = 0;
    double worst = 0.0;
    for (uint32_t t = 0; t < steps; t++) {
        double f = ks_heat_clock_advance(&clk, t);
        if (f != 1.0) {
            (*rebases)++;
            for (int i = 0; i < NB; i++)
                code[i] = ks_heat_rescale(code[i], f);
        }
        for (int i = 0; i < NB; i++) {
            eager[i] *= d;
            if (next[i] != t)
                continue;
            double mass = pow(10.0, -3.0 * ks_rng_unit(&r));
            code[i] = ks_heat_add(&clk, code[i], mass);
            eager[i] += mass;
            next[i] = t + 1 + ks_rng_below(&r, max_gap);
        }
        for (int i = 0; i < NB; i++) {
            if (eager[i] == 0.0) {
                assert_true(ks_heat_value(&clk, code[i]) == 0.0);
                continue;
            }
            double e = rel_err(ks_heat_value(&clk, code[i]), eager[i]);
            if (e > worst)
                worst = e;
            if (e > 1e-6)
                fail_msg("H=%u step %u block %d: lazy %.12g eager %.12g (relative %g)", H, t, i,
                         ks_heat_value(&clk, code[i]), eager[i], e);
        }
    }
    print_message("H=%u: %u steps, %u rebases, worst relative error %.3g\n", H, steps, *rebases, worst);
}

static void lazy_decay_default_half_life(void **state)
{
    (void)state;
    uint32_t rebases;
    // 64 half-lives of 256 steps = 16384 steps between rebases
    lazy_vs_eager(256, 40000, 24, 1, &rebases);
    assert_int_equal(rebases, (40000 - 1) / (KS_HEAT_REBASE_HALF_LIVES * 256));
    assert_int_equal(rebases, 2);
    lazy_vs_eager(256, 20000, 600, 2, &rebases); // long gaps
    assert_int_equal(rebases, 1);
}

static void lazy_decay_small_half_life(void **state)
{
    (void)state;
    uint32_t rebases;
    lazy_vs_eager(8, 5000, 12, 3, &rebases);
    assert_int_equal(rebases, (5000 - 1) / (KS_HEAT_REBASE_HALF_LIVES * 8));
    assert_int_equal(rebases, 9);
    lazy_vs_eager(3, 3000, 5, 4, &rebases);
    assert_int_equal(rebases, (3000 - 1) / (KS_HEAT_REBASE_HALF_LIVES * 3));
}

static void clock_advance_rebases(void **state)
{
    (void)state;
    struct ks_heat_clock clk;
    ks_heat_clock_init(&clk, 4, 100);
    assert_true(clk.gain == 1.0);
    assert_true(ks_heat_clock_advance(&clk, 104) == 1.0);
    assert_true(clk.gain == 2.0); // one half-life
    assert_true(ks_heat_clock_advance(&clk, 100 + 4 * 64 - 1) == 1.0);
    assert_int_equal(clk.epoch, 100);
    double f = ks_heat_clock_advance(&clk, 100 + 4 * 64); // 64 half-lives: rebase
    assert_true(f == 0x1p-64);
    assert_int_equal(clk.epoch, 100 + 4 * 64);
    assert_true(clk.gain == 1.0);
    // a long jump rebases once, by the whole span
    f = ks_heat_clock_advance(&clk, 100 + 4 * 64 + 4 * 100);
    assert_true(f == 0x1p-100);
    assert_true(clk.gain == 1.0);
}

// Through the manager: every block of a request in L1, random accesses with
// float masses; ks_cache_heat must follow eager decay and the clock rebase.
static void manager_heat(uint32_t H, uint32_t steps, uint32_t max_gap)
{
    enum { NB = 40 };
    struct ks_cache_params p = ks_test_params(64, 0, 0);
    p.heat_half_life = H;
    struct ks_cache *c = ks_test_new(&p);
    uint32_t req = ks_test_req(c);
    ks_test_grow(c, req, NB, KS_L1);
    struct ks_rng r;
    ks_rng_seed(&r, H);
    double eager[NB] = {0}, d = exp2(-1.0 / H);
    uint32_t next[NB];
    for (int i = 0; i < NB; i++)
        next[i] = 1 + ks_rng_below(&r, max_gap);
    for (uint32_t t = 1; t < steps; t++) {
        assert_int_equal(ks_cache_step(c, t), KS_OK);
        struct ks_access acc[NB];
        uint32_t n = 0;
        for (int i = 0; i < NB; i++) {
            eager[i] *= d;
            if (next[i] != t)
                continue;
            float mass = (float)pow(10.0, -2.0 * ks_rng_unit(&r));
            acc[n++] = (struct ks_access){.block = (uint32_t)i, .mass = mass, .next = KS_NONE};
            eager[i] += mass;
            next[i] = t + 1 + ks_rng_below(&r, max_gap);
        }
        struct ks_access_report rep;
        assert_int_equal(ks_cache_access(c, req, 0, acc, n, NULL, &rep), KS_OK);
        assert_int_equal(rep.found[KS_L1], n);
        assert_int_equal(rep.misses, 0);
        for (int i = 0; i < NB; i++) {
            double h = ks_cache_heat(c, req, 0, (uint32_t)i);
            if (eager[i] == 0.0) {
                assert_true(h == 0.0);
                continue;
            }
            if (rel_err(h, eager[i]) > 1e-6)
                fail_msg("H=%u step %u block %d: ks_cache_heat %.12g, eager %.12g", H, t, i, h, eager[i]);
        }
    }
    // the clock started at step 0 and rebases every 64 half-lives
    assert_int_equal(ks_cache_stats(c)->rebases, (steps - 1) / (KS_HEAT_REBASE_HALF_LIVES * H));
    ks_test_check(c);
    ks_cache_free(c);
}

static void manager_heat_default(void **state)
{
    (void)state;
    manager_heat(256, 17000, 16); // one rebase at step 16384
}

static void manager_heat_small(void **state)
{
    (void)state;
    manager_heat(8, 4000, 10); // rebases at 512, 1024, ... : 7 of them
}

// ks_heat_rising: the access at least doubles the heat (mass >= heat), and
// a zero mass never rises.
static void rising(void **state)
{
    (void)state;
    struct ks_heat_clock clk;
    ks_heat_clock_init(&clk, 256, 0);
    assert_true(ks_heat_rising(&clk, 0, 1e-9));
    assert_false(ks_heat_rising(&clk, 0, 0.0));
    assert_false(ks_heat_rising(&clk, ks_heat_encode(2.0), 0.0));
    assert_true(ks_heat_rising(&clk, ks_heat_encode(2.0), 2.0)); // exactly doubles
    assert_false(ks_heat_rising(&clk, ks_heat_encode(2.0), 1.99));
    assert_true(ks_heat_rising(&clk, ks_heat_encode(2.0), 2.01));
    // the same heat stored at a later step of the clock (refs scaled by gain)
    ks_heat_clock_advance(&clk, 1000);
    assert_true(clk.gain > 1.0);
    assert_false(ks_heat_rising(&clk, ks_heat_encode(2.0 * clk.gain), 1.99));
    assert_true(ks_heat_rising(&clk, ks_heat_encode(2.0 * clk.gain), 2.01));
    // a ref stored long ago has decayed: 2 stored at step 0 is 0.25 at 768
    ks_heat_clock_init(&clk, 256, 0);
    uint64_t old = ks_heat_encode(2.0);
    ks_heat_clock_advance(&clk, 768);
    assert_false(ks_heat_rising(&clk, old, 0.2));
    assert_true(ks_heat_rising(&clk, old, 0.3));

    // mass 1 at every step (H = 16): the first access rises from nothing,
    // the second from d = 2^(-1/16) < 1; from the third on the heat exceeds 1
    // and a steady mass no longer doubles it
    ks_heat_clock_init(&clk, 16, 0);
    uint64_t code = 0;
    for (uint32_t t = 0; t < 200; t++) {
        ks_heat_clock_advance(&clk, t);
        if (ks_heat_rising(&clk, code, 1.0) != (t < 2))
            fail_msg("step %u: rising %d", t, ks_heat_rising(&clk, code, 1.0));
        code = ks_heat_add(&clk, code, 1.0);
    }
    // near the steady state (22.6 one step after an access), a burst must
    // exceed the heat
    ks_heat_clock_advance(&clk, 200);
    double d = exp2(-1.0 / 16), steady = 1.0 / (1.0 - d);
    assert_true(rel_err(ks_heat_value(&clk, code), d * (1.0 - pow(d, 200)) * steady) < 1e-6);
    assert_false(ks_heat_rising(&clk, code, 2.0));
    assert_false(ks_heat_rising(&clk, code, 20.0));
    assert_true(ks_heat_rising(&clk, code, 25.0));
    // after 8 silent half-lives the heat is 22.6 / 256 = 0.088: mass 0.1 rises
    ks_heat_clock_advance(&clk, 200 + 16 * 8);
    assert_false(ks_heat_rising(&clk, code, 0.085));
    assert_true(ks_heat_rising(&clk, code, 0.1));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(encode_round_trip),
        cmocka_unit_test(codes_ordered_like_values),
        cmocka_unit_test(encode_zero_nan_and_range),
        cmocka_unit_test(wide_forms),
        cmocka_unit_test(clock_advance_rebases),
        cmocka_unit_test(lazy_decay_default_half_life),
        cmocka_unit_test(lazy_decay_small_half_life),
        cmocka_unit_test(manager_heat_default),
        cmocka_unit_test(manager_heat_small),
        cmocka_unit_test(rising),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
