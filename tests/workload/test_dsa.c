// test_dsa.c - the "dsa" access model (sim/workload/dsa.h): closed forms,
// determinism, the layer mapping, the layers' correlation lambda (cross),
// and the cost of one selection.
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

static struct ks_dsa *model_cross(struct ks_dsa_layer lp, uint32_t layers, uint32_t top_k, float cross)
{
    struct ks_dsa_params p = {.seed = 11, .n_layers = layers, .top_k = top_k, .profile = &lp, .profile_layers = 1,
                              .cross = cross};
    char err[128];
    struct ks_dsa *d = ks_dsa_new(&p, err, sizeof err);
    assert_non_null(d);
    return d;
}

static struct ks_dsa *model(struct ks_dsa_layer lp, uint32_t layers, uint32_t top_k)
{
    return model_cross(lp, layers, top_k, 0);
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
// top_k gives every unit; asking a step again gives its selection again;
// with and without the layers' correlation.
static void deterministic_and_small_contexts(void **state)
{
    (void)state;
    for (int c = 0; c < 2; c++) {
        struct ks_dsa *d = model_cross((struct ks_dsa_layer){1, 0.5f}, 3, 64, c ? 0.9f : 0);
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
                assert_memory_equal(ma, mb, n * sizeof *ma);
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
}

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
    const unsigned char *c = p;
    for (size_t i = 0; i < n; i++)
        h = (h ^ c[i]) * 0x100000001b3ULL;
    return h;
}

// A checksum (FNV-1a) of the counts, units and masses of a fixed sequence of
// selections with rho > 0 and rho = 0 layers: every layer each step, then a
// gap of steps, a step back, a step asked again with units that joined, and
// a context below top_k.
static uint64_t sequence_checksum(float cross)
{
    static const struct ks_dsa_layer prof[3] = {{1.0f, 0.5f}, {0.6f, 0}, {2.0f, 0.9f}};
    struct ks_dsa_params p = {.seed = 11, .n_layers = 3, .top_k = 64, .profile = prof, .profile_layers = 3,
                              .cross = cross};
    char err[128];
    struct ks_dsa *d = ks_dsa_new(&p, err, sizeof err);
    struct ks_dsa_req *r = d ? ks_dsa_req_new(d, 5) : NULL;
    assert_non_null(r);
    struct ask {
        uint32_t layer, step, n;
    } q[78];
    uint32_t nq = 0;
    for (uint32_t t = 0; t < 24; t++)
        for (uint32_t l = 0; l < 3; l++)
            q[nq++] = (struct ask){l, t, 2000 + t};
    for (uint32_t l = 0; l < 3; l++)
        q[nq++] = (struct ask){l, 30, 2030}; // a gap
    q[nq++] = (struct ask){1, 28, 2028};     // a step back
    q[nq++] = (struct ask){2, 30, 2040};     // the same step, units that joined
    q[nq++] = (struct ask){0, 31, 40};       // below top_k
    uint64_t h = 0xcbf29ce484222325ULL;
    uint32_t out[64], k;
    float mass[64];
    for (uint32_t i = 0; i < nq; i++) {
        assert_int_equal(ks_dsa_select(r, q[i].layer, q[i].step, q[i].n, out, mass, &k), KS_OK);
        h = fnv(h, &k, sizeof k);
        h = fnv(h, out, k * sizeof *out);
        h = fnv(h, mass, k * sizeof *mass);
    }
    ks_dsa_req_free(r);
    ks_dsa_free(d);
    return h;
}

// lambda = 0 is the model as it was before lambda existed, bit for bit: the
// checksums below were taken from that code (the same sequence, and 3 steps
// of the shipped profile's 61 layers, 2048 of 32K). lambda outside [0, 1)
// is refused.
static void cross_zero_is_the_model_before(void **state)
{
    (void)state;
    uint64_t h = sequence_checksum(0);
    if (h != 0x566d5bb86712f949ULL)
        fail_msg("lambda = 0: checksum 0x%016llx, the model before lambda 0x566d5bb86712f949", (unsigned long long)h);
    assert_true(sequence_checksum(0.5f) != h); // the checksum sees the draws
    struct ks_dsa_params p;
    ks_dsa_params_default(&p, 1, 61, 2048);
    assert_true(p.cross == ks_dsa_fitted_cross && p.cross > 0);
    p.cross = 0;
    char err[128];
    struct ks_dsa *d = ks_dsa_new(&p, err, sizeof err);
    struct ks_dsa_req *r = d ? ks_dsa_req_new(d, 0) : NULL;
    uint32_t *sel = malloc(2048 * sizeof *sel), k;
    float *mass = malloc(2048 * sizeof *mass);
    assert_true(r && sel && mass);
    h = 0xcbf29ce484222325ULL;
    for (uint32_t t = 0; t < 3; t++)
        for (uint32_t l = 0; l < 61; l++) {
            assert_int_equal(ks_dsa_select(r, l, t, 32768 + t, sel, mass, &k), KS_OK);
            h = fnv(h, sel, k * sizeof *sel);
            h = fnv(h, mass, k * sizeof *mass);
        }
    if (h != 0x89e8a0fb61f34e56ULL)
        fail_msg("shipped profile at lambda = 0: checksum 0x%016llx, before lambda 0x89e8a0fb61f34e56",
                 (unsigned long long)h);
    assert_int_equal(ks_dsa_req_bytes(r), (size_t)65536 * 4 * (3 + 61)); // g, score, tmp, 61 z: no w
    ks_dsa_req_free(r);
    ks_dsa_free(d);
    free(sel);
    free(mass);
    const float bad[] = {1, 1.5f, -0.1f, NAN};
    for (int i = 0; i < 4; i++) {
        ks_dsa_params_default(&p, 1, 61, 2048);
        p.cross = bad[i];
        assert_null(ks_dsa_new(&p, err, sizeof err));
        assert_non_null(strstr(err, "cross"));
    }
}

// Consecutive-step overlap of each layer asked, and the overlap of each
// pair of them at one step, over `steps` steps of a context of n units
// growing by one a step; the layers asked at each step are ask[0 .. n_ask),
// in that order. step[j]: layer ask[j]'s |K(t-1) n K(t)| / |K(t)|; pair[i][j]
// (i < j): |K_i(t) n K_j(t)| / |K_j(t)|, both pooled over steps.
struct overlaps {
    double step[4], pair[4][4];
};
static struct overlaps overlaps_of(struct ks_dsa *d, uint64_t id, const uint32_t *ask, uint32_t n_ask, uint32_t n,
                                   uint32_t k, uint32_t steps)
{
    struct ks_dsa_req *r = ks_dsa_req_new(d, id);
    size_t units = (size_t)n + steps;
    uint32_t *sel = malloc(k * sizeof *sel), *last = calloc(4 * units, sizeof *last); // [j][unit]: step + 1
    float *mass = malloc(k * sizeof *mass);
    assert_true(r && sel && last && mass && n_ask <= 4);
    double shared[4] = {0}, total[4] = {0}, pair[4][4] = {{0}};
    for (uint32_t t = 0; t < steps; t++)
        for (uint32_t j = 0; j < n_ask; j++) {
            uint32_t m;
            assert_int_equal(ks_dsa_select(r, ask[j], t, n + t, sel, mass, &m), KS_OK);
            assert_int_equal(m, k);
            for (uint32_t i = 0; i < m; i++) {
                uint32_t u = sel[i];
                if (t) {
                    shared[j] += last[j * units + u] == t;
                    total[j]++;
                }
                last[j * units + u] = t + 1;
                for (uint32_t a = 0; a < j; a++) // asked before j at this step
                    pair[a][j] += last[a * units + u] == t + 1;
            }
        }
    struct overlaps o;
    for (uint32_t j = 0; j < 4; j++) {
        o.step[j] = j < n_ask ? shared[j] / total[j] : NAN;
        for (uint32_t a = 0; a < 4; a++)
            o.pair[a][j] = a < j && j < n_ask ? pair[a][j] / ((double)steps * k) : NAN;
    }
    free(sel);
    free(last);
    free(mass);
    ks_dsa_req_free(r);
    return o;
}

// lambda leaves each layer's law over steps alone: over 300 steps of 256 of
// 4096 units, each layer's consecutive-step overlap (layers 0-1 sigma 0.6,
// rho 0; layers 2-3 sigma 1.2, rho 0.5: the AR innovation's path) at lambda
// = 0.9 lies within 0.012 of lambda = 0's. Tolerance: a step's overlap of
// 256 entries has a sampling sd of about sqrt(0.6 x 0.4 / 256) = 0.03,
// 0.0018 over 299 steps, 0.0025 for the difference of two runs (the
// importance g is common to both, the noise draws are not): 0.012 is about
// five of those. Layer 0 leans on nothing: its draws are the same. The
// adjacent-layer overlap, meanwhile, rises by more than 0.15 in every pair.
static void cross_keeps_each_layer_law(void **state)
{
    (void)state;
    static const struct ks_dsa_layer prof[2] = {{0.6f, 0}, {1.2f, 0.5f}};
    static const uint32_t all[4] = {0, 1, 2, 3};
    struct overlaps o[2];
    for (int c = 0; c < 2; c++) {
        struct ks_dsa_params p = {.seed = 3, .n_layers = 4, .top_k = 256, .profile = prof, .profile_layers = 2,
                                  .cross = c ? 0.9f : 0};
        char err[128];
        struct ks_dsa *d = ks_dsa_new(&p, err, sizeof err);
        assert_non_null(d);
        o[c] = overlaps_of(d, 1, all, 4, 4096, 256, 300);
        ks_dsa_free(d);
    }
    for (uint32_t l = 0; l < 4; l++) {
        printf("# layer %u: consecutive overlap %.4f at lambda 0, %.4f at 0.9", l, o[0].step[l], o[1].step[l]);
        if (l)
            printf("; with layer %u %.4f, %.4f", l - 1, o[0].pair[l - 1][l], o[1].pair[l - 1][l]);
        printf("\n");
        assert_true(fabs(o[0].step[l] - o[1].step[l]) <= 0.012);
        assert_true(l == 0 || o[1].pair[l - 1][l] > o[0].pair[l - 1][l] + 0.15);
    }
    assert_true(o[0].step[0] == o[1].step[0]);
}

// A run that simulates a subset of the layers (detail.layers) asks layers 1
// and 3 only: layer 3 leans on layer 1 with lambda^2, the correlation the
// full model has between them, so their overlap is the one they have when
// every layer is asked, within 0.02 (200 steps of 256 entries: the sampling
// sd of each pooled figure is about 0.002 and the two runs draw layer 3's
// noise differently); at lambda = 0 they overlap about 0.19 less.
static void cross_over_layers_skipped(void **state)
{
    (void)state;
    static const uint32_t all[4] = {0, 1, 2, 3}, some[2] = {1, 3};
    struct ks_dsa *d = model_cross((struct ks_dsa_layer){0.6f, 0}, 4, 256, 0.9f);
    struct ks_dsa *free_of = model((struct ks_dsa_layer){0.6f, 0}, 4, 256);
    struct overlaps f = overlaps_of(d, 2, all, 4, 4096, 256, 200), s = overlaps_of(d, 2, some, 2, 4096, 256, 200);
    struct overlaps z = overlaps_of(free_of, 2, some, 2, 4096, 256, 200);
    printf("# layers 1 and 3: overlap %.4f with every layer asked, %.4f with 1 and 3 alone, %.4f at lambda 0\n",
           f.pair[1][3], s.pair[0][1], z.pair[0][1]);
    assert_true(fabs(f.pair[1][3] - s.pair[0][1]) <= 0.02);
    assert_true(s.pair[0][1] > z.pair[0][1] + 0.1);
    ks_dsa_free(d);
    ks_dsa_free(free_of);
}

static int by_value_desc(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return (x < y) - (x > y);
}

// A selection's threshold is the want-th largest score, by the sampled bound
// or without it, and the count of scores above it is theirs: against a sort
// and a count, on random scores, ties, sorted and reversed
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
                uint32_t above = UINT32_MAX, larger = 0;
                float got = ks_dsa_top_value(tmp, s, n, want, &above);
                if (got != ref[want - 1])
                    fail_msg("shape %d, n %u, want %u: %g, the sort's %g", shape, n, want, got, ref[want - 1]);
                for (uint32_t i = 0; i < n; i++)
                    larger += s[i] > got;
                if (above != larger)
                    fail_msg("shape %d, n %u, want %u: %u above %g, the count's %u", shape, n, want, above, got, larger);
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
// per block for each layer asked, plus 8 B per block of workspace, plus 4 B
// per block for the draws the next layer leans on": a context of 4096 units
// (a power of two: the arrays' capacity is the context), 3 of 8 layers
// asked: 4096 x (4 + 3 x 4 + 8 + 4) B; one unit more doubles every array
// that layer 0's next step touches. (At lambda = 0 the last 4 B are not
// held: cross_zero_is_the_model_before.)
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
    assert_int_equal(ks_dsa_req_bytes(r), 4096 * (4 + 3 * 4 + 8 + 4));
    assert_int_equal(ks_dsa_select(r, 0, 1, 4097, sel, mass, &k), KS_OK); // layer 0 only grows its z
    assert_int_equal(ks_dsa_req_bytes(r), 8192 * (4 + 4 + 8 + 4) + 4096 * 2 * 4);
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
        cmocka_unit_test(cross_zero_is_the_model_before),
        cmocka_unit_test(cross_keeps_each_layer_law),
        cmocka_unit_test(cross_over_layers_skipped),
        cmocka_unit_test(threshold_is_the_kth_largest),
        cmocka_unit_test(layers_map_by_relative_depth),
        cmocka_unit_test(memory_per_request),
        cmocka_unit_test(selection_cost),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
