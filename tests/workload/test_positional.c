// test_positional.c - sparse block selection: exact sets for the fixed policies,
// uniform distinct draws for random.
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "positional.h"

static struct ks_scenario_sparse sparse(enum ks_sparse_policy p, uint32_t budget, uint32_t sink, uint32_t window,
                                        uint32_t stride)
{
    return (struct ks_scenario_sparse){
        .policy = p, .budget_tokens = budget, .sink_blocks = sink, .window_blocks = window, .stride = stride};
}

static void expect(const uint32_t *got, uint32_t n, const uint32_t *want, uint32_t m)
{
    assert_int_equal(n, m);
    for (uint32_t i = 0; i < n; i++)
        assert_int_equal(got[i], want[i]);
}

static void fixed_policies(void **state)
{
    (void)state;
    uint32_t out[256];
    float mass[256];
    struct ks_rng r;
    ks_rng_seed(&r, 1);
    struct ks_positional s;

    struct ks_scenario_sparse dense = sparse(KS_SPARSE_DENSE, 64, 1, 2, 0);
    ks_positional_init(&s, &dense, 32);
    uint32_t n = ks_positional_select(&s, 10, &r, out, mass);
    expect(out, n, (uint32_t[]){0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, 10);
    assert_int_equal(ks_positional_max(&s, 10), 10);
    ks_positional_fini(&s);

    // window: 1 sink, 2 recent, budget 3 blocks (96 tokens / 32) more recent ones
    struct ks_scenario_sparse win = sparse(KS_SPARSE_WINDOW, 96, 1, 2, 0);
    ks_positional_init(&s, &win, 32);
    n = ks_positional_select(&s, 20, &r, out, mass);
    expect(out, n, (uint32_t[]){0, 15, 16, 17, 18, 19}, 6);
    assert_true(fabsf(mass[0] - 1.0f / 6) < 1e-7f);
    ks_positional_fini(&s);

    // stride 4 back from the newest block before the window
    struct ks_scenario_sparse str = sparse(KS_SPARSE_STRIDE, 4 * 16, 2, 1, 4);
    ks_positional_init(&s, &str, 16);
    n = ks_positional_select(&s, 30, &r, out, NULL);
    expect(out, n, (uint32_t[]){0, 1, 16, 20, 24, 28, 29}, 7);
    assert_int_equal(ks_positional_max(&s, 30), 7);
    // the budget reaches past the sinks: stop at them
    n = ks_positional_select(&s, 9, &r, out, NULL);
    expect(out, n, (uint32_t[]){0, 1, 3, 7, 8}, 5);
    ks_positional_fini(&s);

    // a context shorter than sinks + window: every block, once
    ks_positional_init(&s, &win, 32);
    n = ks_positional_select(&s, 2, &r, out, mass);
    expect(out, n, (uint32_t[]){0, 1}, 2);
    n = ks_positional_select(&s, 1, &r, out, mass);
    expect(out, n, (uint32_t[]){0}, 1);
    assert_true(mass[0] == 1.0f);
    ks_positional_fini(&s);
}

static void random_is_uniform_and_distinct(void **state)
{
    (void)state;
    enum { N = 200, TRIALS = 20000 };
    struct ks_scenario_sparse rnd = sparse(KS_SPARSE_RANDOM, 20 * 32, 4, 8, 0);
    struct ks_positional s;
    ks_positional_init(&s, &rnd, 32);
    struct ks_rng r;
    ks_rng_seed(&r, 5);
    uint32_t out[N], count[N] = {0};
    for (int t = 0; t < TRIALS; t++) {
        uint32_t n = ks_positional_select(&s, N, &r, out, NULL);
        assert_int_equal(n, 4 + 20 + 8);
        for (uint32_t i = 0; i < n; i++) {
            if (i)
                assert_true(out[i] > out[i - 1]); // increasing, so distinct
            count[out[i]]++;
        }
    }
    for (uint32_t b = 0; b < 4; b++)
        assert_int_equal(count[b], TRIALS);
    for (uint32_t b = N - 8; b < N; b++)
        assert_int_equal(count[b], TRIALS);
    // the middle 188 blocks: each drawn with probability 20/188; chi-square, 187 dof
    double p = 20.0 / 188, chi = 0;
    for (uint32_t b = 4; b < N - 8; b++) {
        double e = TRIALS * p;
        chi += (count[b] - e) * (count[b] - e) / e;
    }
    assert_true(chi < 260); // the 99.9th percentile of chi-square(187) is about 259
    ks_positional_fini(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(fixed_policies),
        cmocka_unit_test(random_is_uniform_and_distinct),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
