// test_dsa.c - the "dsa" access model (sim/workload/dsa.h): closed forms,
// determinism, the layer mapping, and the cost of one selection.
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "dsa.h"
#include "status.h"

static struct ks_dsa *model(struct ks_dsa_layer lp, uint32_t layers, uint32_t top_k)
{
    struct ks_dsa_params p = {.seed = 11, .n_layers = layers, .top_k = top_k, .profile = &lp, .profile_layers = 1};
    char err[128];
    struct ks_dsa *d = ks_dsa_new(&p, err, sizeof err);
    assert_non_null(d);
    return d;
}

// Pooled overlap of `steps` steps of layer 0 over a fixed context of n units.
static double overlap(struct ks_dsa *d, uint32_t n, uint32_t k, uint32_t steps)
{
    struct ks_dsa_req *r = ks_dsa_req_new(d, 5);
    uint32_t *sel = malloc(k * sizeof *sel), *last = calloc(n, sizeof *last);
    float *mass = malloc(k * sizeof *mass);
    assert_true(r && sel && last && mass);
    double shared = 0, total = 0;
    for (uint32_t t = 0; t < steps; t++) {
        uint32_t m;
        assert_int_equal(ks_dsa_select(r, 0, t, n, sel, mass, &m), KS_OK);
        assert_int_equal(m, k);
        double sum = 0;
        for (uint32_t i = 0; i < m; i++) {
            assert_true(i == 0 || sel[i] > sel[i - 1]); // ascending, distinct
            assert_true(sel[i] < n && mass[i] >= 0); // a far score's weight may underflow
            sum += mass[i];
            if (t) {
                shared += last[sel[i]] == t;
                total++;
            }
            last[sel[i]] = t + 1;
        }
        assert_true(fabs(sum - 1) < 1e-4);
    }
    free(sel);
    free(last);
    free(mass);
    ks_dsa_req_free(r);
    return shared / total;
}

// No noise: the top-k of the static importance, the same every step: overlap 1.
static void no_noise_overlap_is_one(void **state)
{
    (void)state;
    struct ks_dsa *d = model((struct ks_dsa_layer){0, 0.5f}, 1, 100);
    assert_true(overlap(d, 5000, 100, 20) == 1.0);
    ks_dsa_free(d);
}

// Importance negligible against the noise and fresh noise each step: a random
// top-k, whose expected overlap is k / N (1/16 here; sampling sd ~0.002).
static void flat_importance_is_random(void **state)
{
    (void)state;
    struct ks_dsa *d = model((struct ks_dsa_layer){1e4f, 0}, 1, 512);
    double o = overlap(d, 8192, 512, 40);
    printf("# flat importance: overlap %.4f, k / N = %.4f\n", o, 512.0 / 8192);
    assert_true(fabs(o - 512.0 / 8192) < 0.01);
    ks_dsa_free(d);
}

// A noise that persists (rho near 1) keeps the top-k: overlap near 1 even
// when the noise dominates; rho only changes how fast it turns over.
static void persistent_noise_keeps_the_top_k(void **state)
{
    (void)state;
    struct ks_dsa *fresh = model((struct ks_dsa_layer){1e4f, 0}, 1, 512);
    struct ks_dsa *slow = model((struct ks_dsa_layer){1e4f, 0.999f}, 1, 512);
    double a = overlap(fresh, 8192, 512, 20), b = overlap(slow, 8192, 512, 20);
    assert_true(b > 0.9 && b > a + 0.5);
    ks_dsa_free(fresh);
    ks_dsa_free(slow);
}

// The same (seed, request, steps) give the same selections; a context below
// top_k gives every unit; asking a step again gives its selection again.
static void deterministic_and_small_contexts(void **state)
{
    (void)state;
    struct ks_dsa *d = model((struct ks_dsa_layer){1, 0.5f}, 3, 64);
    struct ks_dsa_req *a = ks_dsa_req_new(d, 9), *b = ks_dsa_req_new(d, 9);
    uint32_t sa[64], sb[64], n, m;
    float ma[64], mb[64];
    for (uint32_t t = 0; t < 10; t++)
        for (uint32_t l = 0; l < 3; l++) {
            assert_int_equal(ks_dsa_select(a, l, t, 1000 + t, sa, ma, &n), KS_OK);
            assert_int_equal(ks_dsa_select(b, l, t, 1000 + t, sb, mb, &m), KS_OK);
            assert_int_equal(n, m);
            assert_memory_equal(sa, sb, n * sizeof *sa);
            assert_int_equal(ks_dsa_select(b, l, t, 1000 + t, sb, mb, &m), KS_OK); // the same step again
            assert_memory_equal(sa, sb, n * sizeof *sa);
        }
    assert_int_equal(ks_dsa_select(a, 0, 10, 40, sa, ma, &n), KS_OK);
    assert_int_equal(n, 40);
    for (uint32_t i = 0; i < n; i++)
        assert_int_equal(sa[i], i);
    assert_int_equal(ks_dsa_select(a, 3, 0, 40, sa, ma, &n), KS_EINVAL);
    ks_dsa_req_free(a);
    ks_dsa_req_free(b);
    ks_dsa_free(d);
}

static int by_value_desc(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return (x < y) - (x > y);
}

// A selection's threshold is the want-th largest score, by the sampled bound
// or without it: against a sort, on random scores, ties, sorted and reversed
// orders, a few large outliers, the sampled scores the largest (the bound
// keeps fewer than want: the whole set is searched), long and short contexts.
static void threshold_is_the_kth_largest(void **state)
{
    (void)state;
    enum { N = 40000 };
    float *s = malloc(N * sizeof *s), *tmp = malloc(N * sizeof *tmp), *ref = malloc(N * sizeof *ref);
    assert_true(s && tmp && ref);
    uint64_t x = 88172645463325252u;
    for (int shape = 0; shape < 6; shape++)
        for (uint32_t n = 5000; n <= N; n += 35000 / 2) {
            for (uint32_t i = 0; i < n; i++) {
                x ^= x << 13, x ^= x >> 7, x ^= x << 17;
                float u = (float)(x >> 40) / (float)(1u << 24);
                float outlier = i % 997 == 0 ? 1000 + u : u;
                s[i] = shape == 0   ? u
                       : shape == 1 ? (float)(x % 16)
                       : shape == 2 ? (float)i
                       : shape == 3 ? (float)(n - i)
                                    : outlier;
            }
            if (shape == 5) // every sampled score (j n / 1024) the largest: the bound keeps too few
                for (uint32_t j = 0; j < 1024; j++)
                    s[(uint64_t)j * n / 1024] = 1000 + (float)j;
            memcpy(ref, s, n * sizeof *s);
            qsort(ref, n, sizeof *ref, by_value_desc);
            for (uint32_t want = 1; want < n; want = want * 3 + 7) {
                float got = ks_dsa_top_value(tmp, s, n, want);
                if (got != ref[want - 1])
                    fail_msg("shape %d, n %u, want %u: %g, the sort's %g", shape, n, want, got, ref[want - 1]);
            }
        }
    free(s);
    free(tmp);
    free(ref);
}

// A 61-layer profile read by a 78-layer model (GLM-5.1) by relative depth.
static void layers_map_by_relative_depth(void **state)
{
    (void)state;
    struct ks_dsa_layer prof[61];
    for (uint32_t j = 0; j < 61; j++)
        prof[j] = (struct ks_dsa_layer){(float)j, 0};
    struct ks_dsa_params p = {.seed = 1, .n_layers = 78, .top_k = 8, .profile = prof, .profile_layers = 61};
    char err[128];
    struct ks_dsa *d = ks_dsa_new(&p, err, sizeof err);
    assert_non_null(d);
    assert_true(ks_dsa_layer_of(d, 0).sigma == 0);
    assert_true(ks_dsa_layer_of(d, 39).sigma == 30); // (39.5 / 78) * 61 = 30.9
    assert_true(ks_dsa_layer_of(d, 77).sigma == 60);
    ks_dsa_free(d);
    p.n_layers = 61;
    d = ks_dsa_new(&p, err, sizeof err);
    for (uint32_t l = 0; l < 61; l++)
        assert_true(ks_dsa_layer_of(d, l).sigma == (float)l);
    ks_dsa_free(d);
    prof[3].rho = 1; // rho must be below 1
    assert_null(ks_dsa_new(&p, err, sizeof err));
}

// The cost of one selection of 2048 out of 32K tokens with the shipped
// profile (printed; bounded loosely so that a slow CI machine passes).
// README (the dsa policy): "memory per request is 4 B per block, plus 4 B
// per block for each layer asked, plus 8 B per block of workspace": a
// context of 4096 units (a power of two: the arrays' capacity is the
// context), 3 of 8 layers asked: 4096 x (4 + 3 x 4 + 8) B; one unit more
// doubles every array.
static void memory_per_request(void **state)
{
    (void)state;
    struct ks_dsa_params p;
    ks_dsa_params_default(&p, 1, 8, 64);
    char err[256];
    struct ks_dsa *d = ks_dsa_new(&p, err, sizeof err);
    assert_non_null(d);
    struct ks_dsa_req *r = ks_dsa_req_new(d, 0);
    assert_non_null(r);
    assert_int_equal(ks_dsa_req_bytes(r), 0);
    static uint32_t sel[64];
    static float mass[64];
    uint32_t k;
    for (uint32_t l = 0; l < 3; l++)
        assert_int_equal(ks_dsa_select(r, l, 0, 4096, sel, mass, &k), KS_OK);
    assert_int_equal(ks_dsa_req_bytes(r), 4096 * (4 + 3 * 4 + 8));
    assert_int_equal(ks_dsa_select(r, 0, 1, 4097, sel, mass, &k), KS_OK); // layer 0 only grows its z
    assert_int_equal(ks_dsa_req_bytes(r), 8192 * (4 + 4 + 8) + 4096 * 2 * 4);
    ks_dsa_req_free(r);
    ks_dsa_free(d);
}

static void selection_cost(void **state)
{
    (void)state;
    struct ks_dsa_params p;
    ks_dsa_params_default(&p, 1, 61, 2048);
    char err[128];
    struct ks_dsa *d = ks_dsa_new(&p, err, sizeof err);
    struct ks_dsa_req *r = ks_dsa_req_new(d, 0);
    uint32_t *sel = malloc(2048 * sizeof *sel), n;
    float *mass = malloc(2048 * sizeof *mass);
    assert_true(d && r && sel && mass);
    enum { STEPS = 8, LAYERS = 61 };
    double t0 = ks_clock_mono();
    for (uint32_t t = 0; t < STEPS; t++)
        for (uint32_t l = 0; l < LAYERS; l++)
            assert_int_equal(ks_dsa_select(r, l, t, 32768 + t, sel, mass, &n), KS_OK);
    double us = (ks_clock_mono() - t0) * 1e6 / (STEPS * LAYERS);
    printf("# one selection of 2048 of 32K tokens: %.1f us (mean of %d, first steps included)\n", us, STEPS * LAYERS);
    assert_true(us < 5000);
    free(sel);
    free(mass);
    ks_dsa_req_free(r);
    ks_dsa_free(d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(no_noise_overlap_is_one),
        cmocka_unit_test(flat_importance_is_random),
        cmocka_unit_test(persistent_noise_keeps_the_top_k),
        cmocka_unit_test(deterministic_and_small_contexts),
        cmocka_unit_test(threshold_is_the_kth_largest),
        cmocka_unit_test(layers_map_by_relative_depth),
        cmocka_unit_test(memory_per_request),
        cmocka_unit_test(selection_cost),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
