// test_aggregate.c - accesses accounted in aggregate (ks_cache_access_uniform)
// give what block-by-block accounting gives, bit for bit.
//
// Two managers with the same parameters live through the same random
// history: requests come (some sharing a prefix) and go, grow by a block
// now and then, and each step are read densely (every block of every group
// with one mass), sparsely (a random subset with random masses), or not at
// all; now and then a group's mass differs from the others' or a group is
// read twice in a step. Manager A accounts every dense read it can with
// ks_cache_access_uniform (and goes block by block where it answers not
// done); manager B goes block by block always. After every step the plans
// (every batch's blocks, pages, tiers, classes, order), the statistics and
// every live block's heat and location must be equal, and whenever A
// accounted a group in aggregate, B must have found all of its blocks in L1.
// Small tiers keep evictions (which read heat and recency), demotions and
// arrivals going; a half-life of 2 steps rebases the heat clock every 128.
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "rng.h"
#include "unit_util.h"

enum { G = 3, MAXREQ = 6, T = 700, MAXN = 48 };

struct world {
    struct ks_cache *a, *b;
    uint32_t req[MAXREQ]; // ids (the same in both), KS_NONE when free
    uint32_t aggregated;  // groups A accounted in aggregate
    uint32_t fallbacks;   // dense groups A had to read block by block
    struct ks_rng rng;
};

static double score(void *ud, const struct ks_block_view *v)
{
    (void)ud;
    return v->heat * 1e3 + (double)v->last - (double)v->pos * 1e-3;
}

static void same_blocks(const struct world *w)
{
    struct ks_cache_stats sa = *ks_cache_stats(w->a), sb = *ks_cache_stats(w->b);
    assert_true(sa.aggregated <= sa.found[KS_L1]);
    assert_int_equal(sb.aggregated, 0);
    sa.aggregated = 0; // the one figure that says how they were counted
    assert_memory_equal(&sa, &sb, sizeof sa);
    for (int i = 0; i < MAXREQ; i++) {
        if (w->req[i] == KS_NONE)
            continue;
        uint32_t n = ks_cache_req_len(w->a, w->req[i]);
        assert_int_equal(n, ks_cache_req_len(w->b, w->req[i]));
        for (uint32_t g = 0; g < G; g++)
            for (uint32_t j = 0; j < n; j++) {
                double ha = ks_cache_heat(w->a, w->req[i], g, j), hb = ks_cache_heat(w->b, w->req[i], g, j);
                if (ha != hb)
                    fail_msg("request %u group %u block %u: heat %.17g in aggregate, %.17g block by block",
                             w->req[i], g, j, ha, hb);
                struct ks_loc la = ks_test_loc(w->a, w->req[i], g, j), lb = ks_test_loc(w->b, w->req[i], g, j);
                assert_memory_equal(&la, &lb, sizeof la);
            }
    }
}

static void dense(struct world *w, uint32_t r, int odd_mass, int twice)
{
    uint32_t n = ks_cache_req_len(w->a, r);
    if (n == 0)
        return;
    struct ks_access acc[MAXN + 64];
    for (uint32_t g = 0; g < G; g++) {
        for (int rep = 0; rep <= (twice && g == 1); rep++) {
            float m = 1.0f / (float)n * (odd_mass && g == 2 ? 2.0f : 1.0f);
            for (uint32_t j = 0; j < n; j++)
                acc[j] = (struct ks_access){.block = j, .mass = m, .next = KS_NONE};
            int done = 0;
            struct ks_access_report ra, rb;
            assert_int_equal(ks_cache_access_uniform(w->a, r, g, m, &done, &ra), KS_OK);
            if (!done) {
                assert_int_equal(ks_cache_access(w->a, r, g, acc, n, NULL, &ra), KS_OK);
                w->fallbacks++;
            } else {
                w->aggregated++;
            }
            assert_int_equal(ks_cache_access(w->b, r, g, acc, n, NULL, &rb), KS_OK);
            assert_memory_equal(&ra, &rb, sizeof ra);
            if (done) // what aggregate accounting claims: every block was in L1
                assert_int_equal(rb.found[KS_L1], n);
        }
    }
}

static void sparse(struct world *w, uint32_t r)
{
    uint32_t n = ks_cache_req_len(w->a, r);
    struct ks_access acc[MAXN + 64];
    for (uint32_t g = 0; g < G; g++) {
        uint32_t k = 0;
        for (uint32_t j = 0; j < n; j++)
            if (ks_rng_below(&w->rng, 3) == 0)
                acc[k++] = (struct ks_access){.block = j, .mass = (float)ks_rng_unit(&w->rng), .next = KS_NONE};
        struct ks_access_report ra, rb;
        assert_int_equal(ks_cache_access(w->a, r, g, acc, k, NULL, &ra), KS_OK);
        assert_int_equal(ks_cache_access(w->b, r, g, acc, k, NULL, &rb), KS_OK);
        assert_memory_equal(&ra, &rb, sizeof ra);
    }
}

static void finish(struct world *w, int i)
{
    assert_int_equal(ks_cache_req_free(w->a, w->req[i]), KS_OK);
    assert_int_equal(ks_cache_req_free(w->b, w->req[i]), KS_OK);
    w->req[i] = KS_NONE;
}

static void arrive(struct world *w, int i, int share)
{
    uint32_t src;
    w->req[i] = ks_test_twin_arrive(w->a, w->b, w->req, MAXREQ, i, share, MAXN, &w->rng, &src);
}

static void run(enum ks_evict_policy pol, uint32_t buffer_blocks, uint32_t samples, uint64_t seed)
{
    struct ks_cache_params p = ks_test_params(buffer_blocks ? buffer_blocks * G * MAXREQ : 300, 2048, 4096);
    p.groups = G;
    p.heat_half_life = 2;
    p.prefetch_window = 2;
    p.evict_samples = samples;
    p.evict = pol;
    p.buffer_blocks = buffer_blocks;
    p.seed = seed;
    if (pol == KS_EVICT_CALLBACK)
        p.evict_fn = score;
    struct world w = {.a = ks_test_new(&p), .b = ks_test_new(&p)};
    ks_rng_seed(&w.rng, seed);
    for (int i = 0; i < MAXREQ; i++)
        w.req[i] = KS_NONE;
    for (uint32_t t = 1; t <= T; t++) {
        assert_int_equal(ks_cache_step(w.a, t), KS_OK);
        assert_int_equal(ks_cache_step(w.b, t), KS_OK);
        for (int i = 0; i < MAXREQ; i++) {
            if (w.req[i] == KS_NONE) {
                if (ks_rng_below(&w.rng, 5) == 0)
                    arrive(&w, i, !buffer_blocks && ks_rng_below(&w.rng, 4) == 0);
                continue;
            }
            if (ks_rng_below(&w.rng, 8) == 0 && ks_cache_req_len(w.a, w.req[i]) < MAXN)
                ks_test_twin_grow(w.a, w.b, w.req[i], 1);
            uint32_t mode = ks_rng_below(&w.rng, 20);
            if (mode < 14)
                dense(&w, w.req[i], mode == 0, mode == 1);
            else if (mode < 18)
                sparse(&w, w.req[i]);
        }
        ks_test_plan_twins(w.a, w.b, &w.rng);
        for (int i = 0; i < MAXREQ; i++)
            if (w.req[i] != KS_NONE && ks_rng_below(&w.rng, 25) == 0)
                finish(&w, i);
        same_blocks(&w);
        if (t % 50 == 0) {
            ks_test_check(w.a);
            ks_test_check(w.b);
        }
    }
    assert_int_equal(ks_cache_stats(w.a)->rebases, T / 128);
    // both ways were exercised: groups in aggregate, and dense ones that could not be
    if (pol != KS_EVICT_LFU) {
        assert_true(w.aggregated > 1000);
    } else {
        assert_int_equal(w.aggregated, 0);
    }
    assert_true(ks_cache_stats(w.a)->aggregated > 0 || pol == KS_EVICT_LFU);
    assert_true(w.fallbacks > 100);
    assert_true(ks_cache_stats(w.b)->migrations[KS_L1][KS_L2] + ks_cache_stats(w.b)->dropped > 100);
    ks_cache_free(w.a);
    ks_cache_free(w.b);
}

static void test_heat(void **state)
{
    (void)state;
    for (uint64_t seed = 1; seed <= 4; seed++)
        run(KS_EVICT_HEAT, 0, seed % 2 ? 5 : 0, seed);
}

static void test_lru(void **state)
{
    (void)state;
    for (uint64_t seed = 1; seed <= 4; seed++)
        run(KS_EVICT_LRU, 0, seed % 2 ? 5 : 0, seed);
}

static void test_random_and_callback(void **state)
{
    (void)state;
    run(KS_EVICT_RANDOM, 0, 5, 7);
    run(KS_EVICT_CALLBACK, 0, 0, 8);
}

static void test_lfu_goes_block_by_block(void **state)
{
    (void)state;
    run(KS_EVICT_LFU, 0, 5, 9);
}

static void test_device_buffers(void **state)
{
    (void)state;
    run(KS_EVICT_LRU, 32, 0, 10);
    run(KS_EVICT_FIFO, 32, 0, 11);
    run(KS_EVICT_RANDOM, 32, 0, 12);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_heat),
        cmocka_unit_test(test_lru),
        cmocka_unit_test(test_random_and_callback),
        cmocka_unit_test(test_lfu_goes_block_by_block),
        cmocka_unit_test(test_device_buffers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
