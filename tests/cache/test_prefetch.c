// test_prefetch.c - prefetch candidates and their classes (miss, shared,
// neighbour, heat), the byte budget that drops the lowest classes, and the
// prefetch counters (issued, used, dropped, wasted).
//
// The window of an accessed block B is B+1 .. B+prefetch_window (cache.h):
// a block entering L1's attention (a miss, a block in flight, or the first
// use of a prefetched block) opens it at SHARED (refs > 1) or NEIGHBOR; a hit
// whose heat is rising opens it at HEAT; a steady hit opens nothing.
//
// Classes are observed through the documented budget rule: misses are always
// planned, prefetches in class order while they fit, so a budget of k blocks
// plans the k highest-class candidates; and through each batch's klass.
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "job.h"
#include "unit_util.h"

enum { BB = 4096 }; // block bytes in every tier

// L1 holds blocks 0..4 of one request, L2 blocks 5..39; window 4. L1 has
// room for everything, so no plan here needs a victim.
static struct ks_cache *setup(struct ks_cache_params *p, uint32_t *r)
{
    *p = ks_test_params(64, 64, 0);
    p->prefetch_window = 4;
    struct ks_cache *c = ks_test_new(p);
    *r = ks_test_req(c);
    ks_test_grow(c, *r, 5, KS_L1);
    ks_test_grow(c, *r, 35, KS_L2);
    return c;
}

// One batch L2 -> L1 of the plan, of class `klass`, moving exactly the
// request's blocks want[0..n) (in any order).
static void expect_batch(struct ks_cache *c, uint32_t r, const struct ks_batch *b, unsigned klass,
                         const uint32_t *want, uint32_t n)
{
    assert_int_equal(b->src, KS_L2);
    assert_int_equal(b->dst, KS_L1);
    assert_int_equal(b->after, KS_NONE);
    assert_int_equal(b->klass, klass);
    assert_int_equal(b->n, n);
    for (uint32_t i = 0; i < n; i++)
        if (ks_test_in_batch(b, ks_test_id(c, r, 0, want[i])) < 0)
            fail_msg("block %u is not in the batch", want[i]);
}

// The plan must move exactly the request's blocks want[0..n): the misses
// want[0..misses) in a batch of their own, of class MISS, first; the others
// in one batch of class `klass` (a batch of misses carries no prefetch: the
// layer that waits for it would wait for blocks it does not read). It is
// confirmed.
static void expect_moves(struct ks_cache *c, const struct ks_cache_params *p, uint32_t r, uint64_t budget,
                         const uint32_t *want, uint32_t misses, uint32_t n, unsigned klass)
{
    struct ks_plan plan;
    assert_int_equal(ks_cache_plan(c, budget, &plan), KS_OK);
    ks_test_plan_sane(p, &plan);
    assert_int_equal(plan.n, (misses > 0) + (n > misses));
    if (misses > 0)
        expect_batch(c, r, plan.batch[0], KS_CLASS_MISS, want, misses);
    if (n > misses)
        expect_batch(c, r, plan.batch[misses > 0], klass, want + misses, n - misses);
    ks_test_confirm_all(c, &plan);
    ks_test_check(c);
}

static void classes_and_budget(void **state)
{
    (void)state;
    struct ks_cache_params p;
    uint32_t r;
    struct ks_cache *c = setup(&p, &r);
    const struct ks_cache_stats *st = ks_cache_stats(c);

    // a miss on 10: MISS 10, NEIGHBOR 11..14. Budget 0: only the miss.
    ks_cache_step(c, 1);
    uint8_t where;
    struct ks_access a = {.block = 10, .mass = 1.0f, .next = KS_NONE};
    assert_int_equal(ks_cache_access(c, r, 0, &a, 1, &where, NULL), KS_OK);
    assert_int_equal(where, KS_AT_L2);
    expect_moves(c, &p, r, 0, (uint32_t[]){10}, 1, 1, KS_CLASS_MISS);
    assert_int_equal(st->pf_issued, 0);
    assert_int_equal(st->pf_dropped, 4);

    // a hit on 10, heat rising: HEAT 11..14; a miss on 15: NEIGHBOR 16..19.
    // Budget: the miss and 4 blocks. The neighbours go, the heat class drops.
    ks_cache_step(c, 2);
    ks_test_access1(c, r, 0, 10, 1.0f);
    ks_test_access1(c, r, 0, 15, 1.0f);
    expect_moves(c, &p, r, 5 * BB, (uint32_t[]){15, 16, 17, 18, 19}, 1, 5, KS_CLASS_NEIGHBOR);
    assert_int_equal(st->pf_issued, 4);
    assert_int_equal(st->pf_dropped, 8);

    // 10 again with a mass that doubles its heat (about 2): rising, only
    // HEAT 11..14, all planned
    ks_cache_step(c, 3);
    ks_test_access1(c, r, 0, 10, 5.0f);
    expect_moves(c, &p, r, UINT64_MAX, (uint32_t[]){11, 12, 13, 14}, 0, 4, KS_CLASS_HEAT);
    assert_int_equal(st->pf_issued, 8);
    assert_int_equal(st->pf_dropped, 8);

    // a budget of 3.5 blocks after the miss: 3 of NEIGHBOR 31..34 fit
    ks_cache_step(c, 4);
    ks_test_access1(c, r, 0, 30, 1.0f);
    struct ks_plan plan;
    assert_int_equal(ks_cache_plan(c, 4 * BB + BB / 2, &plan), KS_OK);
    ks_test_plan_sane(&p, &plan);
    assert_int_equal(plan.n, 2);
    expect_batch(c, r, plan.batch[0], KS_CLASS_MISS, (uint32_t[]){30}, 1);
    assert_int_equal(plan.batch[1]->n, 3);
    assert_int_equal(plan.batch[1]->klass, KS_CLASS_NEIGHBOR);
    for (uint32_t i = 0; i < 3; i++) {
        int in = 0;
        for (uint32_t j = 31; j <= 34; j++)
            in |= plan.batch[1]->blocks[i] == ks_test_id(c, r, 0, j);
        assert_true(in);
    }
    ks_test_confirm_all(c, &plan);
    assert_int_equal(st->pf_issued, 11);
    assert_int_equal(st->pf_dropped, 9);
    assert_int_equal(st->pf_used, 0);
    ks_test_check(c);
    ks_cache_free(c);
}

// Misses are planned whatever the budget; prefetches get what is left after
// the misses' bytes. A candidate keeps its most urgent class.
static void misses_always_planned(void **state)
{
    (void)state;
    struct ks_cache_params p;
    uint32_t r;
    struct ks_cache *c = setup(&p, &r);
    const struct ks_cache_stats *st = ks_cache_stats(c);
    ks_cache_step(c, 1);
    // 5: MISS 5, NEIGHBOR 6..9; 7: MISS 7 (was NEIGHBOR), NEIGHBOR 8..11
    ks_test_access(c, r, 0, (uint32_t[]){5, 7}, 2, 1.0f);
    struct ks_plan plan;
    // 2 misses + 1 prefetch fit
    assert_int_equal(ks_cache_plan(c, 3 * BB, &plan), KS_OK);
    ks_test_plan_sane(&p, &plan);
    assert_int_equal(plan.n, 2);
    expect_batch(c, r, plan.batch[0], KS_CLASS_MISS, (uint32_t[]){5, 7}, 2);
    assert_int_equal(plan.batch[1]->n, 1);
    assert_int_equal(plan.batch[1]->klass, KS_CLASS_NEIGHBOR);
    int neighbor = 0;
    for (uint32_t j = 6; j <= 11; j++)
        if (j != 7 && ks_test_in_batch(plan.batch[1], ks_test_id(c, r, 0, j)) >= 0)
            neighbor++;
    assert_int_equal(neighbor, 1);
    assert_int_equal(st->pf_issued, 1);
    assert_int_equal(st->pf_dropped, 4);
    ks_test_confirm_all(c, &plan);
    ks_test_check(c);

    // budget 1 byte, three misses (17..19; NEIGHBOR 20..23): all the misses
    ks_cache_step(c, 2);
    ks_test_access(c, r, 0, (uint32_t[]){17, 18, 19}, 3, 1.0f);
    assert_int_equal(ks_cache_plan(c, 1, &plan), KS_OK);
    ks_test_plan_sane(&p, &plan);
    uint32_t n = 0;
    for (uint32_t i = 0; i < plan.n; i++)
        n += plan.batch[i]->n;
    assert_int_equal(n, 3);
    assert_int_equal(st->pf_issued, 1);
    assert_int_equal(st->pf_dropped, 8);
    ks_test_confirm_all(c, &plan);
    for (uint32_t j = 17; j <= 23; j++)
        assert_int_equal(ks_test_tier(c, r, 0, j), j <= 19 ? KS_L1 : KS_L2);
    ks_test_check(c);
    ks_cache_free(c);
}

// Window blocks mapped by more than one request are SHARED, ahead of the
// unshared NEIGHBOR ones even when those came first; NEIGHBOR is ahead of
// HEAT.
static void shared_before_neighbor(void **state)
{
    (void)state;
    struct ks_cache_params p = ks_test_params(32, 64, 0);
    p.prefetch_window = 4;
    struct ks_cache *c = ks_test_new(&p);
    const struct ks_cache_stats *st = ks_cache_stats(c);
    uint32_t a = ks_test_req(c), b = ks_test_req(c);
    ks_test_grow(c, a, 4, KS_L1); // 0..3
    ks_test_grow(c, a, 4, KS_L2); // 4..7
    assert_int_equal(ks_cache_req_share(c, b, a, 8), KS_OK);
    ks_test_grow(c, b, 10, KS_L2); // b's own 8..17
    // b misses 9 (NEIGHBOR 10..13) then 4 (SHARED 5..7, NEIGHBOR 8).
    // Budget: both misses and 3 blocks.
    ks_cache_step(c, 1);
    ks_test_access(c, b, 0, (uint32_t[]){9, 4}, 2, 1.0f);
    expect_moves(c, &p, b, 5 * BB, (uint32_t[]){9, 4, 5, 6, 7}, 2, 5, KS_CLASS_SHARED);
    assert_int_equal(st->pf_issued, 3);
    assert_int_equal(st->pf_dropped, 5);
    assert_int_equal(ks_test_tier(c, a, 0, 6), KS_L1); // the same blocks for a
    // a rising hit on 4 (HEAT 8) and a miss on 14 (NEIGHBOR 15..17); budget
    // for the miss and 3 blocks: the neighbours, not the heat class
    ks_cache_step(c, 2);
    ks_test_access(c, b, 0, (uint32_t[]){4, 14}, 2, 1.0f);
    expect_moves(c, &p, b, 4 * BB, (uint32_t[]){14, 15, 16, 17}, 1, 4, KS_CLASS_NEIGHBOR);
    assert_int_equal(st->pf_issued, 6);
    assert_int_equal(st->pf_dropped, 6);
    assert_int_equal(ks_test_tier(c, b, 0, 8), KS_L2);
    ks_test_check(c);
    ks_cache_free(c);
}

// A hit opens its window (at HEAT) only while its heat rises (the access
// at least doubles it).
static void heat_class_needs_rising(void **state)
{
    (void)state;
    struct ks_cache_params p = ks_test_params(32, 64, 0);
    p.prefetch_window = 4;
    struct ks_cache *c = ks_test_new(&p);
    const struct ks_cache_stats *st = ks_cache_stats(c);
    uint32_t r = ks_test_req(c);
    ks_test_grow(c, r, 1, KS_L1);  // 0
    ks_test_grow(c, r, 19, KS_L2); // 1..19
    struct ks_plan plan;
    // mass 1 at every step: rising at the first two accesses (from 0, then
    // from 2^(-1/256) < 1); from the third on the heat exceeds the mass
    for (uint32_t t = 1; t <= 100; t++) {
        ks_cache_step(c, t);
        ks_test_access1(c, r, 0, 0, 1.0f); // HEAT 1..4 while rising
        assert_int_equal(ks_cache_plan(c, 0, &plan), KS_OK);
        assert_int_equal(plan.n, 0);
        assert_int_equal(st->pf_dropped, 4 * (t < 2 ? t : 2));
    }
    // a hundredth of the usual mass: not rising, no candidates at all
    ks_cache_step(c, 101);
    ks_test_access1(c, r, 0, 0, 0.01f);
    assert_int_equal(ks_cache_plan(c, UINT64_MAX, &plan), KS_OK);
    assert_int_equal(plan.n, 0);
    assert_int_equal(st->pf_dropped, 8);
    assert_int_equal(st->pf_issued, 0);
    // a burst above the heat (about 87 after 100 steps): rising again
    // a burst: rising again
    ks_cache_step(c, 102);
    ks_test_access1(c, r, 0, 0, 1000.0f);
    expect_moves(c, &p, r, UINT64_MAX, (uint32_t[]){1, 2, 3, 4}, 0, 4, KS_CLASS_HEAT);
    assert_int_equal(st->pf_issued, 4);
    ks_cache_free(c);
}

// pf_used counts prefetched blocks accessed after arriving (and their first
// use opens their window); pf_wasted the ones freed unused.
static void used_and_wasted_by_free(void **state)
{
    (void)state;
    struct ks_cache_params p;
    uint32_t r;
    struct ks_cache *c = setup(&p, &r);
    const struct ks_cache_stats *st = ks_cache_stats(c);
    ks_cache_step(c, 1);
    ks_test_access1(c, r, 0, 10, 1.0f); // MISS 10, NEIGHBOR 11..14
    expect_moves(c, &p, r, UINT64_MAX, (uint32_t[]){10, 11, 12, 13, 14}, 1, 5, KS_CLASS_NEIGHBOR);
    assert_int_equal(st->pf_issued, 4);
    assert_int_equal(st->pf_used, 0);
    ks_cache_step(c, 2);
    // first uses of 11 and 12: windows 12..15 and 13..16 leave NEIGHBOR 15, 16
    uint8_t where[2];
    struct ks_access acc[2] = {{.block = 11, .mass = 1.0f, .next = KS_NONE},
                               {.block = 12, .mass = 1.0f, .next = KS_NONE}};
    assert_int_equal(ks_cache_access(c, r, 0, acc, 2, where, NULL), KS_OK);
    assert_int_equal(where[0], KS_AT_L1);
    assert_int_equal(where[1], KS_AT_L1);
    assert_int_equal(st->pf_used, 2);
    // at NEIGHBOR priority (their heat rises too, but entering comes first)
    expect_moves(c, &p, r, UINT64_MAX, (uint32_t[]){15, 16}, 0, 2, KS_CLASS_NEIGHBOR);
    assert_int_equal(st->pf_issued, 6);
    assert_int_equal(st->pf_dropped, 0);
    // a second access of a used block does not count again
    ks_test_access1(c, r, 0, 11, 1.0f);
    assert_int_equal(st->pf_used, 2);
    ks_test_check(c);
    // 13..16 were prefetched and never accessed
    assert_int_equal(ks_cache_req_free(c, r), KS_OK);
    assert_int_equal(st->pf_wasted, 4);
    assert_int_equal(ks_test_used(c, KS_L1), 0);
    assert_int_equal(ks_test_used(c, KS_L2), 0);
    ks_test_check(c);
    ks_cache_free(c);
}

// A prefetched block evicted before any access is wasted; one evicted after
// being used is not.
static void wasted_by_eviction(void **state)
{
    (void)state;
    struct ks_cache_params p = ks_test_params(5, 64, 0);
    p.prefetch_window = 1;
    p.evict = KS_EVICT_LRU;
    struct ks_cache *c = ks_test_new(&p);
    const struct ks_cache_stats *st = ks_cache_stats(c);
    uint32_t r = ks_test_req(c);
    ks_test_grow(c, r, 3, KS_L1); // 0..2
    ks_test_grow(c, r, 7, KS_L2); // 3..9
    ks_cache_step(c, 1);
    ks_test_access1(c, r, 0, 3, 1.0f); // MISS 3, NEIGHBOR 4
    expect_moves(c, &p, r, UINT64_MAX, (uint32_t[]){3, 4}, 1, 2, KS_CLASS_NEIGHBOR);
    assert_int_equal(st->pf_issued, 1);
    assert_int_equal(ks_test_used(c, KS_L1), 5);
    for (uint32_t t = 2; t <= 5; t++) { // 0..3 used at 2..5; windows all in L1
        ks_cache_step(c, t);
        ks_test_access1(c, r, 0, t - 2, 1.0f);
        assert_int_equal(ks_test_plan_confirm(c, &p, UINT64_MAX), 0);
    }
    assert_int_equal(st->pf_dropped, 0);
    // L1 by last use: 4 (arrived at 1, never used), 0, 1, 2, 3: 4 goes
    ks_cache_step(c, 6);
    ks_test_access1(c, r, 0, 7, 1.0f); // MISS 7, NEIGHBOR 8 (dropped)
    assert_int_equal(ks_test_plan_confirm(c, &p, 0), 2);
    assert_int_equal(st->pf_dropped, 1);
    assert_int_equal(ks_test_tier(c, r, 0, 4), KS_L2);
    assert_int_equal(ks_test_tier(c, r, 0, 7), KS_L1);
    assert_int_equal(st->pf_wasted, 1);
    assert_int_equal(st->pf_used, 0);
    // MISS 8, NEIGHBOR 9: victims 0 and 1 (the least recent)
    ks_cache_step(c, 7);
    ks_test_access1(c, r, 0, 8, 1.0f);
    assert_int_equal(ks_test_plan_confirm(c, &p, UINT64_MAX), 4);
    assert_int_equal(st->pf_issued, 2);
    assert_int_equal(ks_test_tier(c, r, 0, 0), KS_L2);
    assert_int_equal(ks_test_tier(c, r, 0, 1), KS_L2);
    ks_cache_step(c, 8);
    ks_test_access1(c, r, 0, 9, 1.0f); // used: the last block, no window
    assert_int_equal(st->pf_used, 1);
    // 9 is the least recent now; it goes, used, so not wasted
    ks_cache_step(c, 20);
    ks_test_access(c, r, 0, (uint32_t[]){2, 3, 7, 8, 5}, 5, 1.0f);
    assert_int_equal(ks_test_plan_confirm(c, &p, 0), 2);
    assert_int_equal(ks_test_tier(c, r, 0, 9), KS_L2);
    assert_int_equal(ks_test_tier(c, r, 0, 5), KS_L1);
    assert_int_equal(st->pf_wasted, 1);
    ks_test_check(c);
    ks_cache_free(c);
}

// A batch carries one layer's blocks, and a batch of misses no prefetch: a
// prefetch of layer 0 planned with a miss of layer 1 goes in a batch of its
// own, as do the miss's neighbours in layer 1; no layer waits for either
// (this step does not read them), and the miss's batch waits from layer 1.
static void prefetch_sets_no_waiting_layer(void **state)
{
    (void)state;
    struct ks_cache_params p = ks_test_params(64, 64, 0);
    p.groups = 2;
    p.prefetch_window = 4;
    struct ks_cache *c = ks_test_new(&p);
    uint32_t r = ks_test_req(c);
    ks_test_grow(c, r, 5, KS_L1);  // blocks 0..4 of both layers
    ks_test_grow(c, r, 30, KS_L2); // 5..34
    // layer 0: a miss on 10 (NEIGHBOR 11..14), confirmed; then a rising hit
    // on it opens HEAT 11..14 without a miss in layer 0
    ks_cache_step(c, 1);
    ks_test_access1(c, r, 0, 10, 1.0f);
    struct ks_plan plan;
    assert_int_equal(ks_cache_plan(c, BB, &plan), KS_OK);
    ks_test_confirm_all(c, &plan);
    ks_cache_step(c, 2);
    ks_test_access1(c, r, 0, 10, 5.0f);
    ks_test_access1(c, r, 1, 20, 1.0f); // layer 1: a miss
    assert_int_equal(ks_cache_plan(c, UINT64_MAX, &plan), KS_OK);
    ks_test_plan_sane(&p, &plan);
    assert_int_equal(plan.n, 3);
    // layer by layer: layer 0's HEAT 11..14, layer 1's miss, its NEIGHBOR 21..24
    const struct ks_batch *b0 = plan.batch[0], *b1 = plan.batch[1], *b2 = plan.batch[2];
    assert_int_equal(b0->n, 4);
    assert_int_equal(b1->n, 1);
    assert_int_equal(b2->n, 4);
    assert_true(ks_test_in_batch(b0, ks_test_id(c, r, 0, 11)) >= 0);
    assert_int_equal(b1->blocks[0], ks_test_id(c, r, 1, 20));
    for (uint32_t j = 21; j <= 24; j++)
        assert_true(ks_test_in_batch(b2, ks_test_id(c, r, 1, j)) >= 0);
    assert_int_equal(b0->klass, KS_CLASS_HEAT);
    assert_int_equal(b1->klass, KS_CLASS_MISS);
    assert_int_equal(b2->klass, KS_CLASS_NEIGHBOR);
    struct ks_step_job j0 = ks_step_job_of(plan.batch[0]), j1 = ks_step_job_of(plan.batch[1]),
                       j2 = ks_step_job_of(plan.batch[2]);
    assert_false(j0.needed);
    assert_true(j1.needed);
    assert_int_equal(j1.layer, 1);
    assert_false(j2.needed);
    ks_test_confirm_all(c, &plan);
    ks_test_check(c);
    ks_cache_free(c);
}

// A request that sits a step out (ks_cache_defer) has its misses warm up
// aside: in a batch of their own, of class WARM, after the other requests'
// misses, which no layer waits for; a warm-up floor of one full batch goes
// even when the budget is spent.
static void warm_ups_ride_apart(void **state)
{
    (void)state;
    struct ks_cache_params p = ks_test_params(64, 64, 0);
    assert_true(p.migration_batch >= 3); // room for the three moves in one batch
    struct ks_cache *c = ks_test_new(&p);
    const struct ks_cache_stats *st = ks_cache_stats(c);
    uint32_t a = ks_test_req(c), b = ks_test_req(c);
    ks_test_grow(c, a, 5, KS_L1);  // a: 0..4
    ks_test_grow(c, a, 10, KS_L2); // 5..14
    ks_test_grow(c, b, 5, KS_L1);
    ks_test_grow(c, b, 10, KS_L2);
    for (uint32_t t = 1; t <= 2; t++) {
        ks_cache_step(c, t);
        ks_test_access1(c, a, 0, 5 + t, 1.0f);                        // a: a miss
        ks_test_access(c, b, 0, (uint32_t[]){7 + 2 * t, 8 + 2 * t}, 2, 1.0f); // b: two
        assert_int_equal(ks_cache_defer(c, b), 2);
        struct ks_plan plan;
        assert_int_equal(ks_cache_plan(c, t == 1 ? UINT64_MAX : 0, &plan), KS_OK); // 0: the floor only
        ks_test_plan_sane(&p, &plan);
        assert_int_equal(plan.n, 2);
        const struct ks_batch *m = plan.batch[0], *w = plan.batch[1];
        assert_int_equal(m->klass, KS_CLASS_MISS);
        assert_int_equal(m->n, 1);
        assert_int_equal(m->blocks[0], ks_test_id(c, a, 0, 5 + t));
        assert_int_equal(w->klass, KS_CLASS_WARM);
        assert_int_equal(w->n, 2);
        assert_true(ks_test_in_batch(w, ks_test_id(c, b, 0, 7 + 2 * t)) >= 0);
        assert_true(ks_test_in_batch(w, ks_test_id(c, b, 0, 8 + 2 * t)) >= 0);
        struct ks_step_job jm = ks_step_job_of(plan.batch[0]), jw = ks_step_job_of(plan.batch[1]);
        assert_true(jm.needed);
        assert_false(jw.needed);
        ks_test_confirm_all(c, &plan);
        ks_test_check(c);
        assert_int_equal(st->deferred, 2 * t);
        assert_int_equal(st->warmed, 2 * t);
    }
    ks_cache_free(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(classes_and_budget),
        cmocka_unit_test(misses_always_planned),
        cmocka_unit_test(shared_before_neighbor),
        cmocka_unit_test(heat_class_needs_rising),
        cmocka_unit_test(used_and_wasted_by_free),
        cmocka_unit_test(wasted_by_eviction),
        cmocka_unit_test(prefetch_sets_no_waiting_layer),
        cmocka_unit_test(warm_ups_ride_apart),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
