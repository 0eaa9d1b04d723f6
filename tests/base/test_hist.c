// test_hist.c - histograms: exact moments, bounded quantile error, merging.
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "hist.h"
#include "rng.h"
#include "status.h"

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static void constant_values_are_exact(void **state)
{
    (void)state;
    struct ks_hist *h = malloc(sizeof *h);
    ks_hist_init(h);
    for (int i = 0; i < 1000; i++)
        assert_int_equal(ks_hist_add(h, 0.268435456e-3), KS_OK);
    // every quantile of identical values is that value: min/max clamp the bin
    assert_true(ks_hist_quantile(h, 0.5) == 0.268435456e-3);
    assert_true(ks_hist_quantile(h, 0.99) == 0.268435456e-3);
    assert_true(fabs(ks_hist_mean(h) - 0.268435456e-3) <= 1e-15);
    assert_int_equal(h->count, 1000);
    free(h);
}

static void quantiles_within_bin_width(void **state)
{
    (void)state;
    enum { N = 100000 };
    struct ks_hist *h = malloc(sizeof *h);
    double *v = malloc(N * sizeof *v);
    ks_hist_init(h);
    struct ks_rng r;
    ks_rng_seed(&r, 3);
    double sum = 0;
    for (int i = 0; i < N; i++) {
        v[i] = exp(ks_rng_unit(&r) * 12.0 - 14.0); // 1e-6 .. 0.1 s, log-uniform
        sum += v[i];
        assert_int_equal(ks_hist_add(h, v[i]), KS_OK);
    }
    qsort(v, N, sizeof *v, cmp_double);
    const double qs[] = {0.001, 0.1, 0.5, 0.9, 0.99, 0.999};
    for (size_t k = 0; k < sizeof qs / sizeof qs[0]; k++) {
        double exact = v[(size_t)ceil(qs[k] * N) - 1]; // nearest rank
        double got = ks_hist_quantile(h, qs[k]);
        assert_true(fabs(got - exact) <= exact * 0x1p-7);
    }
    assert_true(ks_hist_quantile(h, 0) == v[0]);
    assert_true(ks_hist_quantile(h, 1) == v[N - 1]);
    assert_true(fabs(h->sum - sum) <= 1e-9 * sum);
    free(v);
    free(h);
}

static void zeros_and_bad_values(void **state)
{
    (void)state;
    struct ks_hist *h = malloc(sizeof *h);
    ks_hist_init(h);
    assert_true(ks_hist_quantile(h, 0.5) == 0.0); // empty
    assert_int_equal(ks_hist_add(h, -1.0), KS_EINVAL);
    assert_int_equal(ks_hist_add(h, NAN), KS_EINVAL);
    assert_int_equal(ks_hist_add(h, INFINITY), KS_EINVAL);
    assert_int_equal(h->count, 0);
    for (int i = 0; i < 60; i++)
        ks_hist_add(h, 0.0);
    for (int i = 0; i < 40; i++)
        ks_hist_add(h, 1.0);
    assert_true(ks_hist_quantile(h, 0.6) == 0.0);
    assert_true(ks_hist_quantile(h, 0.61) == 1.0);
    ks_hist_add(h, 1e-300); // below the lowest bin: still counted, quantile clamped to min
    ks_hist_add(h, 1e300);
    assert_true(h->min == 0.0 && h->max == 1e300);
    free(h);
}

static void merge_equals_one_histogram(void **state)
{
    (void)state;
    struct ks_hist *a = malloc(sizeof *a), *b = malloc(sizeof *b), *all = malloc(sizeof *all);
    ks_hist_init(a);
    ks_hist_init(b);
    ks_hist_init(all);
    struct ks_rng r;
    ks_rng_seed(&r, 9);
    for (int i = 0; i < 5000; i++) {
        double x = ks_rng_unit(&r) * 0.05;
        ks_hist_add(i % 3 ? a : b, x);
        ks_hist_add(all, x);
    }
    ks_hist_merge(a, b);
    assert_int_equal(a->count, all->count);
    assert_true(a->min == all->min && a->max == all->max);
    for (double q = 0.05; q < 1; q += 0.05)
        assert_true(ks_hist_quantile(a, q) == ks_hist_quantile(all, q));
    free(a);
    free(b);
    free(all);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(constant_values_are_exact),
        cmocka_unit_test(quantiles_within_bin_width),
        cmocka_unit_test(zeros_and_bad_values),
        cmocka_unit_test(merge_equals_one_histogram),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
