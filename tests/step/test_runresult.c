// test_runresult.c - a run's result (sim/step/runresult.h): the horizon of
// its time series, and thinning /steps as a run of workload.requests
// outlives it: what remains is what sampling at the doubled width from the
// start would have taken (README's results/README.md, /steps).
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <stdlib.h>

#include "runresult.h"

// A run that ends at its duration samples its duration; a run of
// workload.requests starts at min(duration, 1 s) and grows.
static void horizon(void **state)
{
    (void)state;
    struct ks_scenario s = {.duration = 600};
    int grows = -1;
    assert_float_equal(ks_run_horizon(&s, &grows), 600, 0);
    assert_int_equal(grows, 0);
    s.workload.requests = 10;
    assert_float_equal(ks_run_horizon(&s, &grows), KS_RUN_FIRST_HORIZON, 0);
    assert_int_equal(grows, 1);
    s.duration = 0.25;
    assert_float_equal(ks_run_horizon(&s, &grows), 0.25, 0);
}

// The records a GPU whose step boundaries fall at b[0..n) takes at interval
// width `every`: the first boundary in each interval that has one (step.c).
static size_t sampled(const double *b, size_t n, double every, double *out)
{
    size_t k = 0;
    double last = -INFINITY;
    for (size_t i = 0; i < n; i++)
        if (floor(b[i] / every) > floor(last / every))
            out[k++] = last = b[i];
    return k;
}

// Two GPUs with irregular steps (some longer than an interval), their
// records interleaved in time order, thinned twice: each time exactly the
// records sampling at that width would hold.
static void thin_steps(void **state)
{
    (void)state;
    enum { N = 400 };
    static double b[2][N], want[N], got[N];
    for (int g = 0; g < 2; g++) {
        double t = 0.0003 * g;
        for (int i = 0; i < N; i++) {
            b[g][i] = t;
            t += (i % 7 == 3 ? 0.0025 : 0.0004) * (1 + g); // GPU 1 steps twice as long
        }
    }
    struct ks_run_result r;
    assert_int_equal(ks_run_result_init(&r), KS_OK);
    r.sample_every = 0.001;
    r.samples = calloc(2 * N, sizeof *r.samples);
    assert_non_null(r.samples);
    r.cap_samples = 2 * N;
    double sa[2][N];
    size_t na[2] = {sampled(b[0], N, r.sample_every, sa[0]), sampled(b[1], N, r.sample_every, sa[1])};
    for (size_t i = 0, j = 0; i < na[0] || j < na[1];) { // merged by time, as the simulation appends them
        int g = j == na[1] || (i < na[0] && sa[0][i] <= sa[1][j]) ? 0 : 1;
        double t = g == 0 ? sa[0][i++] : sa[1][j++];
        r.samples[r.n_samples++] = (struct ks_step_record){.t = t, .gpu = (uint32_t)g, .batch = 1};
    }
    for (int round = 0; round < 2; round++) {
        ks_run_result_thin_steps(&r);
        assert_float_equal(r.sample_every, 0.002 * (1 << round), 0);
        for (uint32_t g = 0; g < 2; g++) {
            size_t k = 0;
            for (size_t i = 0; i < r.n_samples; i++)
                if (r.samples[i].gpu == g)
                    got[k++] = r.samples[i].t;
            size_t n = sampled(b[g], N, r.sample_every, want);
            assert_int_equal(k, n);
            for (size_t i = 0; i < n; i++)
                assert_true(got[i] == want[i]);
        }
        for (size_t i = 1; i < r.n_samples; i++)
            assert_true(r.samples[i - 1].t <= r.samples[i].t); // still in time order
    }
    ks_run_result_fini(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(horizon),
        cmocka_unit_test(thin_steps),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
