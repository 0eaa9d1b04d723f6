// test_tracestats.c - trace statistics (tracestats.h) on hand-built traces with known answers.
//
// Every expected figure below was counted by hand from the selections
// written next to it (the counts are in the comments); OPT is checked
// against an exhaustive search over every eviction choice.
//
// Run as `trace_tracestats --write GOOD.h5 CUT.h5` it writes instead a small
// random trace and a truncated copy of it, the fixtures of the CLI tests.
#define _POSIX_C_SOURCE 200809L // mkdtemp

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rng.h"
#include "status.h"
#include "trace.h"
#include "tracestats.h"

#define END UINT32_MAX // ends a record's block list
#define EPS 1e-12

static char tmpdir[256];

static int make_tmpdir(void **state)
{
    (void)state;
    const char *base = getenv("TMPDIR");
    snprintf(tmpdir, sizeof tmpdir, "%s/ks_tracestats_XXXXXX", base && base[0] ? base : "/tmp");
    return mkdtemp(tmpdir) ? 0 : -1;
}

static int remove_tmpdir(void **state)
{
    (void)state;
    return rmdir(tmpdir);
}

// Writes a one-request trace: rec[step * layers + layer] is an END-ended
// block list; each record's first block gets mass 0.5, the others share
// the other 0.5 (a one-block record: 1). Loads it back.
static struct ks_trace *hand_trace(const char *name, uint32_t layers, uint32_t steps, uint32_t context,
                                   const uint32_t *const *rec)
{
    char path[512], err[512] = "";
    snprintf(path, sizeof path, "%s/%s.h5", tmpdir, name);
    struct ks_trace_meta m = {.block_size = 1, .layers = layers, .kv_heads = 1, .q_heads = 1, .head_dim = 8};
    snprintf(m.source, sizeof m.source, "test_tracestats %s", name);
    struct ks_trace_writer *w = ks_trace_writer_open(path, &m, err, sizeof err);
    if (!w)
        fail_msg("ks_trace_writer_open: %s", err);
    for (uint32_t s = 0; s < steps; s++)
        for (uint32_t l = 0; l < layers; l++) {
            const uint32_t *b = rec[s * layers + l];
            uint32_t n = 0;
            while (b[n] != END)
                n++;
            float mass[64];
            assert_true(n <= 64);
            for (uint32_t i = 0; i < n; i++)
                mass[i] = n == 1 ? 1.0f : i == 0 ? 0.5f : 0.5f / (float)(n - 1);
            if (ks_trace_writer_add(w, 0, s, l, context, b, mass, n, -1) != KS_OK)
                fail_msg("ks_trace_writer_add: %s", err);
        }
    assert_int_equal(ks_trace_writer_commit(w), KS_OK);
    struct ks_trace *t = ks_trace_load(path, err, sizeof err);
    if (!t)
        fail_msg("ks_trace_load: %s", err);
    unlink(path);
    return t;
}

static void near(double got, double want, const char *what)
{
    if (!(fabs(got - want) <= EPS))
        fail_msg("%s: got %.15g, want %.15g", what, got, want);
}

// One stream, six steps:
//   s0 {0 1 2}   s1 {0 1 3}   s2 {0 4}   s3 {0 1 2}   s4 {5}   s5 {2 5}
// Distances: s1: 0,1 -> 1; s2: 0 -> 1; s3: 0 -> 1, 1 -> 2, 2 -> 3; s5: 2 -> 2,
// 5 -> 1; the other six selections are cold. R(1) = 5 of the 11 selections
// at s >= 1; R(4) = 2 of the 3 at s >= 4; no step reaches 16 or 256.
// Neighbours (b+1 at s+1 given b at s): 2/3, 1/3, 1/2, 0/3, 0/1 = 4/12;
// counting only b+1 not at s: 1/1, 1/2, 1/2, 0/1, 0/1 = 3/7.
// Runs begun at s >= 1: 1 at s3, 2 at s3, 3 at s1, 4 at s2, 5 at s4 (cut by
// the end), 2 at s5 (cut): 6 runs; the 11 selections at s >= 1 include 0's
// at s1-s3 and 1's at s1 (runs begun at s0): persistence 11/6; new share
// 1 - 5/11 = 6/11.
static void reuse_and_neighbours_by_hand(void **state)
{
    (void)state;
    static const uint32_t s0[] = {0, 1, 2, END}, s1[] = {0, 1, 3, END}, s2[] = {0, 4, END}, s3[] = {0, 1, 2, END},
                          s4[] = {5, END}, s5[] = {2, 5, END};
    const uint32_t *rec[] = {s0, s1, s2, s3, s4, s5};
    struct ks_trace *t = hand_trace("hand", 1, 6, 16, rec);
    struct ks_tracestats s;
    assert_int_equal(ks_tracestats_compute(t, &s), KS_OK);
    assert_int_equal(s.records, 6);
    assert_int_equal(s.selections, 14);
    assert_int_equal(s.cold, 6);
    assert_int_equal(s.hist_buckets, 3);
    assert_int_equal(s.reuse_hist[0], 5); // d = 1
    assert_int_equal(s.reuse_hist[1], 2); // d = 2
    assert_int_equal(s.reuse_hist[2], 1); // d = 3..4
    near(s.reuse[0], 5.0 / 11, "R(1)");
    assert_int_equal(s.reuse_eligible[1], 3);
    near(s.reuse[1], 2.0 / 3, "R(4)");
    assert_true(isnan(s.reuse[2]) && isnan(s.reuse[3]));
    assert_int_equal(s.neighbour_trials, 12);
    near(s.neighbour, 4.0 / 12, "neighbour");
    assert_int_equal(s.neighbour_new_trials, 7);
    near(s.neighbour_new, 3.0 / 7, "neighbour_new");
    near(s.layer[0].overlap, 5.0 / 11, "layer 0 R(1)");
    near(s.layer[0].new_share, 6.0 / 11, "layer 0 new share");
    near(s.layer[0].persistence, 11.0 / 6, "layer 0 persistence");
    near(s.layer[0].neighbour, 4.0 / 12, "layer 0 neighbour");
    // mass: the first block holds 0.5 of each record but the lone block of s4
    near(s.mass_top[0], (5 * 0.5 + 1) / 6, "mass_top1");
    near(s.mass_top[1], 1.0, "mass_top8");
    assert_true(fabs(s.mass_total - 1) < 1e-6);
    near(s.mean_selected, 14.0 / 6, "mean_selected");
    assert_int_equal(s.min_selected, 1);
    assert_int_equal(s.max_selected, 3);
    assert_true(isnan(s.ws[0].mean) && s.ws[0].points == 0); // 6 steps never fill 16
    ks_tracestats_fini(&s);
    ks_trace_free(t);
}

// Three layers, two steps (layer by layer):
//   s0  L0 {0 1 2 3}  L1 {1 2 3 4}  L2 {0 5}
//   s1  L0 {0 1 9}    L1 {0 1 7}    L2 {4 7 9}
// Adjacent-layer overlap, |S_{l-1} n S_l| over |S_l| pooled over steps:
// layer 1: s0 {1 2 3} 3 of 4, s1 {0 1} 2 of 3: 5/7; layer 2: s0 none of 2
// (0 is layer 0's, two layers down), s1 {7} 1 of 3 (4 was layer 1's the
// step before, 9 is layer 0's): 1/5; layer 0 has none below (NaN); the
// trace: (5 + 1) / (7 + 5) = 1/2.
static void adjacent_by_hand(void **state)
{
    (void)state;
    static const uint32_t a0[] = {0, 1, 2, 3, END}, a1[] = {1, 2, 3, 4, END}, a2[] = {0, 5, END},
                          b0[] = {0, 1, 9, END}, b1[] = {0, 1, 7, END}, b2[] = {4, 7, 9, END};
    const uint32_t *rec[] = {a0, a1, a2, b0, b1, b2};
    struct ks_trace *t = hand_trace("adjacent", 3, 2, 16, rec);
    struct ks_tracestats s;
    assert_int_equal(ks_tracestats_compute(t, &s), KS_OK);
    assert_true(isnan(s.layer[0].adjacent));
    near(s.layer[1].adjacent, 5.0 / 7, "layer 1 adjacent");
    near(s.layer[2].adjacent, 1.0 / 5, "layer 2 adjacent");
    near(s.adjacent, 0.5, "adjacent");
    ks_tracestats_fini(&s);
    ks_trace_free(t);
    const uint32_t *one[] = {a0, b0}; // one layer: nothing below
    t = hand_trace("adjacent1", 1, 2, 16, one);
    assert_int_equal(ks_tracestats_compute(t, &s), KS_OK);
    assert_true(isnan(s.adjacent) && isnan(s.layer[0].adjacent));
    ks_tracestats_fini(&s);
    ks_trace_free(t);
}

// Forty steps of {s mod 5, 100 + s}: the cyclic block comes back after
// exactly 5 steps, the other is always new. So R(1) = R(4) = 0, R(16) = 1/2
// (s >= 16: one of two), every window of 16 steps holds 5 + 16 blocks, and
// the 35 reuses all fall in bucket 5..8.
static void working_set_by_hand(void **state)
{
    (void)state;
    enum { STEPS = 40 };
    uint32_t blocks[STEPS][3];
    const uint32_t *rec[STEPS];
    for (uint32_t s = 0; s < STEPS; s++) {
        blocks[s][0] = s % 5;
        blocks[s][1] = 100 + s;
        blocks[s][2] = END;
        rec[s] = blocks[s];
    }
    struct ks_trace *t = hand_trace("cycle", 1, STEPS, 200, rec);
    struct ks_tracestats s;
    assert_int_equal(ks_tracestats_compute(t, &s), KS_OK);
    assert_int_equal(s.cold, 45);
    assert_int_equal(s.hist_buckets, 4);
    assert_int_equal(s.reuse_hist[3], 35);
    near(s.reuse[0], 0, "R(1)");
    near(s.reuse[1], 0, "R(4)");
    near(s.reuse[2], 0.5, "R(16)");
    assert_int_equal(s.reuse_eligible[2], 2 * (STEPS - 16));
    assert_true(isnan(s.reuse[3]));
    near(s.ws[0].mean, 21, "working set over 16");
    assert_int_equal(s.ws[0].points, KS_TRACESTATS_SERIES);
    assert_int_equal(s.ws[0].step[0], 15);
    assert_int_equal(s.ws[0].step[KS_TRACESTATS_SERIES - 1], STEPS - 1);
    for (uint32_t i = 0; i < s.ws[0].points; i++)
        near(s.ws[0].value[i], 21, "working-set series");
    assert_true(isnan(s.ws[1].mean));
    // b + 1 at s + 1: always for 100 + s, and for s mod 5 unless it is 4
    // (s = 4, 9, ..., 34): 39 + 32 of 78; b + 1 is never in S_s
    near(s.neighbour, 71.0 / 78, "neighbour");
    near(s.neighbour_new, 71.0 / 78, "neighbour_new");
    ks_tracestats_fini(&s);
    ks_trace_free(t);
}

// Two layers selecting {0, 1} at each of three steps: the request's stream
// is a b c d a b c d a b c d over 4 (layer, block) keys, mean_selected x
// layers = 4. L1 of 1 entry: no hits; 2 (counted by hand: hits at the 5th,
// 8th and 11th access): 3; 4 and 8: all but the 4 first accesses.
static void opt_by_hand(void **state)
{
    (void)state;
    static const uint32_t ab[] = {0, 1, END};
    const uint32_t *rec[] = {ab, ab, ab, ab, ab, ab};
    struct ks_trace *t = hand_trace("opt", 2, 3, 4, rec);
    struct ks_tracestats s;
    assert_int_equal(ks_tracestats_compute(t, &s), KS_OK);
    const uint32_t cap[] = {1, 2, 4, 8};
    const double hit[] = {0, 3.0 / 12, 8.0 / 12, 8.0 / 12};
    for (int k = 0; k < KS_TRACESTATS_OPT; k++) {
        assert_int_equal(s.opt_capacity[k], cap[k]);
        near(s.opt_hit[k], hit[k], "OPT hit rate");
    }
    ks_tracestats_fini(&s);
    ks_trace_free(t);
}

// The best hit count over every eviction choice (demand fetch), by dynamic
// programming over (position, resident set).
static int brute_opt(const uint32_t *keys, int n, int i, unsigned mask, int cap, int *memo)
{
    if (i == n)
        return 0;
    int *m = &memo[i * 64 + mask];
    if (*m >= 0)
        return *m;
    unsigned k = 1u << keys[i];
    int best;
    if (mask & k) {
        best = 1 + brute_opt(keys, n, i + 1, mask, cap, memo);
    } else if (__builtin_popcount(mask) < cap) {
        best = brute_opt(keys, n, i + 1, mask | k, cap, memo);
    } else {
        best = -1;
        for (unsigned r = 0; r < 6; r++)
            if (mask & (1u << r)) {
                int h = brute_opt(keys, n, i + 1, (mask & ~(1u << r)) | k, cap, memo);
                best = h > best ? h : best;
            }
    }
    return *m = best;
}

static void opt_matches_brute_force(void **state)
{
    (void)state;
    enum { N = 16, KEYS = 6 };
    struct ks_rng rng;
    ks_rng_seed(&rng, 42);
    int memo[(N + 1) * 64];
    for (int trial = 0; trial < 500; trial++) {
        uint32_t keys[N], n_keys = 2 + ks_rng_below(&rng, KEYS - 1);
        int n = 1 + (int)ks_rng_below(&rng, N);
        for (int i = 0; i < n; i++)
            keys[i] = ks_rng_below(&rng, n_keys);
        for (uint32_t cap = 1; cap <= 4; cap++) {
            memset(memo, 0xff, sizeof memo);
            int want = brute_opt(keys, n, 0, 0, (int)cap, memo);
            uint64_t got;
            assert_int_equal(ks_tracestats_opt_hits(keys, (size_t)n, n_keys, cap, &got), KS_OK);
            if ((int)got != want)
                fail_msg("trial %d, capacity %u: OPT %d hits, the best schedule %d", trial, cap, (int)got, want);
        }
    }
    uint64_t h;
    const uint32_t k[] = {0, 1, 2};
    assert_int_equal(ks_tracestats_opt_hits(k, 3, 3, 0, &h), KS_EINVAL);
    assert_int_equal(ks_tracestats_opt_hits(k, 3, 2, 1, &h), KS_EINVAL);
    assert_int_equal(ks_tracestats_opt_hits(k, 0, 3, 1, &h), KS_OK);
    assert_int_equal(h, 0);
}

// Fixture for the CLI tests: 2 requests x 40 steps x 2 layers of a random
// walk (8 blocks kept with probability 0.8, else moved by up to 3), then a
// copy cut in half (no longer an HDF5 file).
static int write_fixtures(const char *good, const char *cut)
{
    char err[512] = "";
    struct ks_trace_meta m = {.block_size = 16, .layers = 2, .kv_heads = 1, .q_heads = 1, .head_dim = 8};
    snprintf(m.source, sizeof m.source, "test_tracestats fixture");
    struct ks_trace_writer *w = ks_trace_writer_open(good, &m, err, sizeof err);
    if (!w) {
        fprintf(stderr, "%s\n", err);
        return 1;
    }
    struct ks_rng rng;
    ks_rng_seed(&rng, 7);
    for (uint32_t r = 0; r < 2; r++) {
        uint32_t pos[2][8];
        for (uint32_t l = 0; l < 2; l++)
            for (uint32_t i = 0; i < 8; i++)
                pos[l][i] = 8 * i;
        for (uint32_t s = 0; s < 40; s++)
            for (uint32_t l = 0; l < 2; l++) {
                uint32_t blocks[8];
                float mass[8];
                for (uint32_t i = 0; i < 8; i++) {
                    if (ks_rng_unit(&rng) > 0.8) // stays inside its own stripe of 8, so distinct
                        pos[l][i] = 8 * i + ks_rng_below(&rng, 8);
                    blocks[i] = pos[l][i];
                    mass[i] = 1.0f / 8;
                }
                if (ks_trace_writer_add(w, r, s, l, 64 * 16 + s, blocks, mass, 8, -1) != KS_OK) {
                    fprintf(stderr, "%s\n", err);
                    ks_trace_writer_abort(w);
                    return 1;
                }
            }
    }
    if (ks_trace_writer_commit(w) != KS_OK) {
        fprintf(stderr, "%s\n", err);
        return 1;
    }
    FILE *in = fopen(good, "rb"), *out = fopen(cut, "wb");
    int rc = !in || !out;
    if (!rc && fseek(in, 0, SEEK_END) == 0) {
        long half = ftell(in) / 2;
        rewind(in);
        for (long i = 0; i < half; i++)
            fputc(fgetc(in), out);
    }
    if (in)
        fclose(in);
    if (out && fclose(out) != 0)
        rc = 1;
    return rc;
}

int main(int argc, char **argv)
{
    if (argc == 4 && strcmp(argv[1], "--write") == 0)
        return write_fixtures(argv[2], argv[3]);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(reuse_and_neighbours_by_hand),
        cmocka_unit_test(adjacent_by_hand),
        cmocka_unit_test(working_set_by_hand),
        cmocka_unit_test(opt_by_hand),
        cmocka_unit_test(opt_matches_brute_force),
    };
    return cmocka_run_group_tests(tests, make_tmpdir, remove_tmpdir);
}
