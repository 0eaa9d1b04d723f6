// test_calib_fit.c - the fitter (calib/fit.h) on synthetic curves with known
// parameters: exact recovery, non-negative parameters, residuals, bad input;
// the batched copy call's fixed cost that calib gpu writes as copy_overhead.
#include <math.h>
#include <stdio.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "dram.h"
#include "fit.h"
#include "status.h"

static void assert_rel(double got, double want, double tol)
{
    double r = fabs(got - want) / fabs(want);
    if (!(r <= tol))
        fail_msg("got %.17g, want %.17g (relative error %.3g > %.3g)", got, want, r, tol);
}

static void copy_exact(void **state)
{
    (void)state;
    double s[8], t[8];
    for (int i = 0; i < 8; i++) {
        s[i] = 65536.0 * pow(4, i); // 64 KiB .. 1 GiB
        t[i] = 3e-6 + s[i] / 12.5e9;
    }
    struct ks_fit_copy f;
    assert_int_equal(ks_fit_copy(s, t, 8, &f), KS_OK);
    assert_rel(f.lat, 3e-6, 1e-9);
    assert_rel(f.bw, 12.5e9, 1e-9);
    assert_true(f.worst < 1e-9 && f.rms < 1e-9);
    assert_rel(ks_fit_copy_time(&f, 1e6), 3e-6 + 1e6 / 12.5e9, 1e-9);
}

// A curve that a positive intercept cannot fit better keeps lat = 0, never negative.
static void copy_no_negative_latency(void **state)
{
    (void)state;
    double s[4] = {1e5, 1e6, 1e7, 1e8}, t[4];
    for (int i = 0; i < 4; i++)
        t[i] = s[i] / 5e9 - 1e-6 * (i == 0); // the smallest point a little fast
    struct ks_fit_copy f;
    assert_int_equal(ks_fit_copy(s, t, 4, &f), KS_OK);
    assert_true(f.lat == 0);
    assert_true(f.bw > 0);
    assert_true(f.worst > 0.01); // the first point misses: 20 us predicted, 19 us measured
}

static void ssd_exact(void **state)
{
    (void)state;
    const double sizes[] = {4096, 16384, 65536, 262144, 1048576, 4194304};
    const double qds[] = {1, 2, 4, 8, 16, 32, 64};
    struct ks_fit_ssd_point p[42];
    size_t n = 0;
    for (int i = 0; i < 6; i++)
        for (int j = 0; j < 7; j++, n++)
            p[n] = (struct ks_fit_ssd_point){qds[j], sizes[i], 62e-6 + qds[j] * 8e-6 + qds[j] * sizes[i] / 700e6};
    struct ks_fit_ssd f;
    assert_int_equal(ks_fit_ssd(p, n, &f), KS_OK);
    assert_rel(f.lat, 62e-6, 1e-9);
    assert_rel(f.op, 8e-6, 1e-9);
    assert_rel(f.bw, 700e6, 1e-9);
    assert_true(f.worst < 1e-9);
    assert_rel(ks_fit_ssd_time(&f, 4, 65536), 62e-6 + 32e-6 + 4 * 65536 / 700e6, 1e-9);
}

// Without a per-request cost the fit finds op = 0 exactly (a subset fit).
static void ssd_exact_no_op(void **state)
{
    (void)state;
    struct ks_fit_ssd_point p[6];
    for (int i = 0; i < 6; i++) {
        double qd = 1 << i, s = 4096.0 * (1 << (2 * (i % 3)));
        p[i] = (struct ks_fit_ssd_point){qd, s, 80e-6 + qd * s / 2e9};
    }
    struct ks_fit_ssd f;
    assert_int_equal(ks_fit_ssd(p, 6, &f), KS_OK);
    assert_rel(f.lat, 80e-6, 1e-9);
    assert_true(f.op < 1e-15);
    assert_rel(f.bw, 2e9, 1e-9);
}

// +-3% multiplicative noise: parameters near the truth, worst residual near 3%.
static void ssd_noisy(void **state)
{
    (void)state;
    struct ks_fit_ssd_point p[24];
    size_t n = 0;
    for (int i = 0; i < 6; i++)
        for (int j = 0; j < 4; j++, n++) {
            double qd = 1 << (2 * j), s = 4096.0 * (1 << (2 * i));
            double noise = n % 2 ? 1.03 : 0.97;
            p[n] = (struct ks_fit_ssd_point){qd, s, noise * (50e-6 + qd * 10e-6 + qd * s / 1e9)};
        }
    struct ks_fit_ssd f;
    assert_int_equal(ks_fit_ssd(p, n, &f), KS_OK);
    assert_rel(f.bw, 1e9, 0.05);
    assert_true(f.worst > 0.02 && f.worst < 0.06);
}

// A copy's bytes moved: 3 per byte copied below the non-temporal threshold,
// 2 at or above it and when it is unknown; and this machine's threshold is
// read (x86-64 glibc, where every development and CI machine is).
static void dram_moved(void **state)
{
    (void)state;
    assert_true(ks_dram_moved_per_copied(4096, 1 << 20) == 3.0);
    assert_true(ks_dram_moved_per_copied(1 << 20, 1 << 20) == 2.0);
    assert_true(ks_dram_moved_per_copied(1 << 30, 1 << 20) == 2.0);
    assert_true(ks_dram_moved_per_copied(4096, 0) == 2.0);
#if defined(__x86_64__) && defined(__GLIBC__)
    size_t nt = ks_dram_nt_threshold();
    printf("glibc.cpu.x86_non_temporal_threshold here: %zu bytes\n", nt);
    assert_true(nt >= 0x4040); // glibc's own lower bound for the tunable
#endif
    // the DRAM fit of calib host on copies that follow the model exactly:
    // lat + size * moved / bw recovers bw in bytes moved
    const size_t nt_ = 64u << 20;
    double s[6] = {65536, 1 << 20, 16 << 20, 64 << 20, 256 << 20, 1 << 30}, x[6], t[6];
    for (int i = 0; i < 6; i++) {
        x[i] = s[i] * ks_dram_moved_per_copied((size_t)s[i], nt_);
        t[i] = 2e-6 + x[i] / 25e9;
    }
    struct ks_fit_copy f;
    assert_int_equal(ks_fit_copy(x, t, 6, &f), KS_OK);
    assert_rel(f.bw, 25e9, 1e-9);
    assert_rel(f.lat, 2e-6, 1e-6);
}

// calib gpu's copy_overhead: batched calls of n blocks of 128 KiB, each block
// two copies that cost c besides their bytes, take t = ov + 2 n c + n * block
// / bw. The intercept is the call's fixed cost ov alone (the per-copy part is
// proportional to the bytes and lands in the slope), and the model the
// simulator charges, ov + bytes / pcie_bw, misses by its closed form.
static void batch_overhead(void **state)
{
    (void)state;
    const double ov = 14e-6, c = 0.4e-6, bw = 40e9, block = 131072, blocks[6] = {1, 2, 4, 8, 16, 32};
    double t[6];
    for (int i = 0; i < 6; i++)
        t[i] = ov + 2 * blocks[i] * c + blocks[i] * block / bw;
    struct ks_fit_copy f;
    double worst;
    const double slope_bw = block / (2 * c + block / bw); // bytes/s, the per-copy cost included
    assert_int_equal(ks_fit_batch(blocks, t, 6, block, slope_bw, &f, &worst), KS_OK);
    assert_rel(f.lat, ov, 1e-6);
    assert_rel(f.bw, slope_bw, 1e-9);
    assert_true(f.worst < 1e-9 && worst < 1e-9); // with the fit's own bandwidth the model is exact
    // with the single copies' bandwidth the per-copy part is lost: worst at 32 blocks
    assert_int_equal(ks_fit_batch(blocks, t, 6, block, bw, &f, &worst), KS_OK);
    assert_rel(f.lat, ov, 1e-6);
    assert_rel(worst, 2 * 32 * c / t[5], 1e-6);
    // no fixed cost: the intercept stays 0, never negative
    for (int i = 0; i < 6; i++)
        t[i] = blocks[i] * block / bw * (i == 0 ? 0.99 : 1.0);
    assert_int_equal(ks_fit_batch(blocks, t, 6, block, bw, &f, &worst), KS_OK);
    assert_true(f.lat == 0 && f.bw > 0);
    // bad input: one count, no block size, no link bandwidth, a zero time
    const double one[3] = {8, 8, 8};
    assert_int_equal(ks_fit_batch(one, t, 3, block, bw, &f, &worst), KS_EINVAL);
    assert_int_equal(ks_fit_batch(blocks, t, 6, 0, bw, &f, &worst), KS_EINVAL);
    assert_int_equal(ks_fit_batch(blocks, t, 6, block, 0, &f, &worst), KS_EINVAL);
    t[2] = 0;
    assert_int_equal(ks_fit_batch(blocks, t, 6, block, bw, &f, &worst), KS_EINVAL);
}

static void bad_input(void **state)
{
    (void)state;
    double s[3] = {1, 2, 3}, t[3] = {1, 2, 3}, z[3] = {1, 0, 3}, same[3] = {5, 5, 5};
    struct ks_fit_copy f;
    assert_int_equal(ks_fit_copy(s, t, 1, &f), KS_EINVAL);       // one point
    assert_int_equal(ks_fit_copy(s, z, 3, &f), KS_EINVAL);       // a zero time
    assert_int_equal(ks_fit_copy(same, t, 3, &f), KS_EINVAL);    // one size: no bandwidth
    double dec[3] = {3, 2, 1};
    assert_int_equal(ks_fit_copy(s, dec, 3, &f), KS_OK);         // time falls with size: the best
    assert_true(f.lat == 0 && f.bw > 0 && f.worst > 0.5);        // non-negative fit, and it shows
    struct ks_fit_ssd g;
    struct ks_fit_ssd_point p[3] = {{1, 4096, 1e-4}, {0, 4096, 1e-4}, {1, 8192, 2e-4}};
    assert_int_equal(ks_fit_ssd(p, 3, &g), KS_EINVAL);           // queue depth 0
    assert_int_equal(ks_fit_ssd(p, 2, &g), KS_EINVAL);           // too few
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(copy_exact),       cmocka_unit_test(copy_no_negative_latency),
        cmocka_unit_test(ssd_exact),        cmocka_unit_test(ssd_exact_no_op),
        cmocka_unit_test(ssd_noisy),        cmocka_unit_test(bad_input),
        cmocka_unit_test(dram_moved),       cmocka_unit_test(batch_overhead),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
