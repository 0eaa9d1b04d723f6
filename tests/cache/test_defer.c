// test_defer.c - selections deferred (ks_cache_access_deferred) give what
// block-by-block accounting gives, bit for bit.
//
// Two managers with the same parameters live through the same random
// history: requests come (some sharing a prefix) and go or are retracted
// (settled, then freed), grow by a block now and then, and each step read a
// selection of every group, or sit it out. A selection is a pure function of
// its request slot, group, draw number and context (its size known before
// its blocks: the last block and a hashed share of the others, with hashed
// masses), as the access model's are. Manager A defers every selection it
// can (its settle_fn draws them when asked, in order); manager B draws and
// accesses each in its step. After every step the plans (every batch's
// blocks, pages, tiers, classes, order), the statistics and every live
// block's location must be equal; every fifth step A is settled and every
// block's heat compared too. Small tiers keep victims being chosen (which
// settles A first), demotions and arrivals going; a half-life of 2 steps
// rebases the heat clock every 128 (A settles before it rescales). A's
// requests are fetched ahead each step (ks_cache_warm_req, ks_cache_warm_access), B's not.
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
    uint32_t req[MAXREQ];          // ids (the same in both), KS_NONE when free
    uint32_t gen[MAXREQ];          // the slot's request number (its selections' seed)
    uint32_t drawn_a[MAXREQ][G];   // selections A drew (in its step or settled)
    uint32_t drawn_b[MAXREQ][G];
    uint32_t deferred, settled;    // selections A deferred, and drew later
    uint32_t arrivals;
    struct ks_rng rng;
};

// Selection number d of slot i's request gen, group g, over n blocks:
// the last block, and each other with probability 1/3, masses hashed.
static uint32_t selection(uint32_t gen, uint32_t g, uint32_t d, uint32_t n, struct ks_access *acc)
{
    struct ks_rng r;
    ks_rng_seed(&r, ks_rng_mix(((uint64_t)gen << 40) ^ ((uint64_t)g << 32) ^ d));
    uint32_t k = 0;
    for (uint32_t j = 0; j + 1 < n; j++)
        if (ks_rng_below(&r, 3) == 0)
            acc[k++] = (struct ks_access){.block = j, .mass = (float)ks_rng_unit(&r), .next = KS_NONE};
    acc[k++] = (struct ks_access){.block = n - 1, .mass = (float)ks_rng_unit(&r), .next = KS_NONE};
    return k;
}

static int slot_of(const struct world *w, uint32_t req)
{
    for (int i = 0; i < MAXREQ; i++)
        if (w->req[i] == req)
            return i;
    fail_msg("settle_fn called for request %u, which no slot holds", req);
    return -1;
}

static int settle(void *ud, struct ks_cache *c, uint32_t req, uint32_t g, const struct ks_deferred *e, uint32_t n)
{
    struct world *w = ud;
    assert_ptr_equal(c, w->a);
    int i = slot_of(w, req);
    struct ks_access acc[MAXN];
    for (uint32_t t = 0; t < n; t++) {
        uint32_t k = selection(w->gen[i], g, w->drawn_a[i][g]++, e[t].arg, acc);
        assert_int_equal(ks_cache_access_past(c, req, g, &e[t], acc, k), KS_OK);
        w->settled++;
    }
    return KS_OK;
}

static void same_blocks(struct world *w, int heat)
{
    struct ks_cache_stats sa = *ks_cache_stats(w->a), sb = *ks_cache_stats(w->b);
    assert_int_equal(sb.aggregated, 0);
    sa.aggregated = 0; // the one figure that says how they were counted
    assert_memory_equal(&sa, &sb, sizeof sa);
    for (int i = 0; i < MAXREQ; i++) {
        if (w->req[i] == KS_NONE)
            continue;
        if (heat)
            assert_int_equal(ks_cache_settle(w->a, w->req[i]), KS_OK);
        uint32_t n = ks_cache_req_len(w->a, w->req[i]);
        assert_int_equal(n, ks_cache_req_len(w->b, w->req[i]));
        for (uint32_t g = 0; g < G; g++)
            for (uint32_t j = 0; j < n; j++) {
                double ha = ks_cache_heat(w->a, w->req[i], g, j), hb = ks_cache_heat(w->b, w->req[i], g, j);
                if (heat && ha != hb)
                    fail_msg("request %u group %u block %u: heat %.17g deferred, %.17g block by block", w->req[i],
                             g, j, ha, hb);
                struct ks_loc la = ks_test_loc(w->a, w->req[i], g, j), lb = ks_test_loc(w->b, w->req[i], g, j);
                assert_memory_equal(&la, &lb, sizeof la);
            }
    }
}

static void read_step(struct world *w, int i)
{
    uint32_t r = w->req[i], n = ks_cache_req_len(w->a, r);
    if (n == 0)
        return;
    struct ks_access acc[MAXN];
    for (uint32_t g = 0; g < G; g++) {
        uint32_t behind = ks_cache_deferred(w->a, r, g);
        uint32_t k = selection(w->gen[i], g, w->drawn_a[i][g] + behind, n, acc);
        int done = 0;
        struct ks_access_report ra, rb;
        assert_int_equal(ks_cache_access_deferred(w->a, r, g, k, n, &done, &ra), KS_OK);
        if (done) {
            w->deferred++;
            assert_int_equal(ks_cache_deferred(w->a, r, g), behind + 1);
        } else {
            if (behind) { // its deferred selections first, as the contract asks
                assert_int_equal(ks_cache_access(w->a, r, g, acc, k, NULL, &ra), KS_ESTATE);
                assert_int_equal(ks_cache_settle(w->a, r), KS_OK);
            }
            assert_int_equal(ks_cache_deferred(w->a, r, g), 0);
            assert_int_equal(w->drawn_a[i][g], w->drawn_b[i][g]);
            assert_int_equal(selection(w->gen[i], g, w->drawn_a[i][g]++, n, acc), k);
            assert_int_equal(ks_cache_access(w->a, r, g, acc, k, NULL, &ra), KS_OK);
        }
        assert_int_equal(selection(w->gen[i], g, w->drawn_b[i][g]++, n, acc), k);
        assert_int_equal(ks_cache_access(w->b, r, g, acc, k, NULL, &rb), KS_OK);
        assert_memory_equal(&ra, &rb, sizeof ra);
        if (done) // what deferring claims: every block was in L1
            assert_int_equal(rb.found[KS_L1], k);
    }
}

// Request i leaves: finished (A drops its deferred selections) or retracted
// (A settles them first, as the step driver does).
static void leave(struct world *w, int i, int retracted)
{
    if (retracted)
        assert_int_equal(ks_cache_settle(w->a, w->req[i]), KS_OK);
    assert_int_equal(ks_cache_req_free(w->a, w->req[i]), KS_OK);
    assert_int_equal(ks_cache_req_free(w->b, w->req[i]), KS_OK);
    w->req[i] = KS_NONE;
}

static void arrive(struct world *w, int i, int share)
{
    uint32_t src;
    w->req[i] = ks_test_twin_arrive(w->a, w->b, w->req, MAXREQ, i, share, MAXN, &w->rng, &src);
    w->gen[i] = ++w->arrivals;
    memset(w->drawn_a[i], 0, sizeof w->drawn_a[i]);
    memset(w->drawn_b[i], 0, sizeof w->drawn_b[i]);
    // the source's deferred selections were settled as it was mapped
    for (uint32_t g = 0; src != KS_NONE && g < G; g++)
        assert_int_equal(ks_cache_deferred(w->a, src, g), 0);
}

static void run(enum ks_evict_policy pol, uint32_t buffer_blocks, uint32_t samples, uint32_t l1, uint64_t seed)
{
    struct ks_cache_params p = ks_test_params(buffer_blocks ? buffer_blocks * G * MAXREQ : l1, 2048, 4096);
    p.groups = G;
    p.heat_half_life = 2;
    p.prefetch_window = 2;
    p.evict_samples = samples;
    p.evict = pol;
    p.buffer_blocks = buffer_blocks;
    p.seed = seed;
    struct world w = {.a = ks_test_new(&p), .b = ks_test_new(&p)};
    ks_cache_set_settle(w.a, settle, &w);
    ks_rng_seed(&w.rng, seed);
    for (int i = 0; i < MAXREQ; i++)
        w.req[i] = KS_NONE;
    for (uint32_t t = 1; t <= T; t++) {
        assert_int_equal(ks_cache_step(w.a, t), KS_OK);
        assert_int_equal(ks_cache_step(w.b, t), KS_OK);
        // A's requests fetched ahead (ks_cache_warm_req, ks_cache_warm_access:
        // blocks within, beyond and far beyond a group's length), B's not: it
        // must change nothing; ids of requests gone, never made or out of
        // range, and groups out of range, too
        uint32_t blocks[] = {0, 1, MAXN / 2, MAXN - 1, MAXN, UINT32_MAX};
        for (int stage = 0; stage < 3; stage++)
            for (uint32_t id = 0; id < 2 * MAXREQ; id++) {
                ks_cache_warm_req(w.a, id, stage);
                for (uint32_t g = 0; g <= G && stage < 2; g++)
                    ks_cache_warm_access(w.a, id, g, stage ? blocks : NULL, stage ? 6 : 0, stage);
            }
        for (int i = 0; i < MAXREQ; i++) {
            if (w.req[i] == KS_NONE) {
                if (ks_rng_below(&w.rng, 5) == 0)
                    arrive(&w, i, !buffer_blocks && ks_rng_below(&w.rng, 4) == 0);
                continue;
            }
            if (ks_rng_below(&w.rng, 8) == 0 && ks_cache_req_len(w.a, w.req[i]) < MAXN)
                ks_test_twin_grow(w.a, w.b, w.req[i], 1);
            if (ks_rng_below(&w.rng, 10) != 0) // else it sits the step out
                read_step(&w, i);
        }
        ks_test_plan_twins(w.a, w.b, &w.rng);
        for (int i = 0; i < MAXREQ; i++)
            if (w.req[i] != KS_NONE && ks_rng_below(&w.rng, 25) == 0)
                leave(&w, i, ks_rng_below(&w.rng, 3) == 0);
        same_blocks(&w, t % 5 == 0);
        if (t % 50 == 0) {
            ks_test_check(w.a);
            ks_test_check(w.b);
        }
    }
    assert_int_equal(ks_cache_stats(w.a)->rebases, T / 128);
    // both ways were exercised: selections deferred and drawn later, and
    // ones that could not wait; and victims were chosen
    print_message("policy %d, buffers %u, samples %u, L1 %u: %u selections deferred, %u drawn later\n", (int)pol,
                  buffer_blocks, samples, l1, w.deferred, w.settled);
    assert_true(w.deferred > 500 && w.settled > 100);
    assert_true(ks_cache_stats(w.a)->aggregated > 0);
    uint64_t victims = ks_cache_stats(w.b)->migrations[KS_L1][KS_L2] + ks_cache_stats(w.b)->dropped;
    print_message("  %llu victims left L1\n", (unsigned long long)victims);
    assert_true(l1 == 600 || victims > 100); // L1 of 600 blocks: room, no victim (settled every fifth step)
    ks_cache_free(w.a);
    ks_cache_free(w.b);
}

static void test_heat(void **state)
{
    (void)state;
    for (uint64_t seed = 1; seed <= 4; seed++)
        run(KS_EVICT_HEAT, 0, seed % 2 ? 5 : 0, seed <= 2 ? 300 : 600, seed);
}

static void test_lru_random_fifo(void **state)
{
    (void)state;
    run(KS_EVICT_LRU, 0, 5, 300, 5);
    run(KS_EVICT_LRU, 0, 0, 600, 6);
    run(KS_EVICT_RANDOM, 0, 5, 300, 7);
}

static void test_device_buffers(void **state)
{
    (void)state;
    run(KS_EVICT_LRU, 32, 0, 0, 10);
    run(KS_EVICT_FIFO, 32, 0, 0, 11);
    run(KS_EVICT_HEAT, 32, 0, 0, 12);
}

// A policy that reads more than heat and recency defers nothing.
static void test_lfu_defers_nothing(void **state)
{
    (void)state;
    struct ks_cache_params p = ks_test_params(300, 2048, 4096);
    p.groups = G;
    p.evict = KS_EVICT_LFU;
    struct ks_cache *c = ks_test_new(&p);
    struct world w = {.a = c};
    ks_cache_set_settle(c, settle, &w);
    uint32_t r;
    assert_int_equal(ks_cache_step(c, 1), KS_OK);
    assert_int_equal(ks_cache_req_new(c, &r), KS_OK);
    assert_int_equal(ks_cache_req_grow(c, r, 8, KS_L1, NULL), KS_OK);
    int done = 1;
    assert_int_equal(ks_cache_access_deferred(c, r, 0, 3, 8, &done, NULL), KS_OK);
    assert_int_equal(done, 0);
    assert_false(ks_cache_deferrable(c, r));
    ks_cache_free(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_heat),
        cmocka_unit_test(test_lru_random_fifo),
        cmocka_unit_test(test_device_buffers),
        cmocka_unit_test(test_lfu_defers_nothing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
