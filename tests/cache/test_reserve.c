// test_reserve.c - plans keep L1's reserve free, so new blocks land in L1.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <cmocka.h>

#include "cache.h"

static void check(struct ks_cache *c)
{
    char msg[256];
    if (ks_cache_check(c, msg, sizeof msg) != KS_OK)
        fail_msg("%s", msg);
}

static void reserve_demotes_and_new_blocks_land_in_l1(void **state)
{
    (void)state;
    struct ks_cache_params p;
    ks_cache_params_default(&p);
    p.n_blocks = 1024;
    p.tier_blocks[KS_L1] = 16;
    p.tier_blocks[KS_L2] = 64;
    p.block_bytes[KS_L1] = p.block_bytes[KS_L2] = 4096;
    p.evict = KS_EVICT_LRU;
    p.evict_samples = 0;
    p.prefetch_window = 0;
    struct ks_cache *c = ks_cache_new(&p, NULL, 0);
    assert_non_null(c);
    uint32_t r;
    assert_int_equal(ks_cache_req_new(c, &r), KS_OK);
    uint32_t placed[KS_TIERS] = {0};
    assert_int_equal(ks_cache_req_grow(c, r, 16, KS_L1, placed), KS_OK);
    assert_int_equal(placed[KS_L1], 16); // L1 full

    assert_int_equal(ks_cache_step(c, 1), KS_OK);
    struct ks_access a = {.block = 15, .mass = 1.0f, .next = KS_NONE};
    assert_int_equal(ks_cache_access(c, r, 0, &a, 1, NULL, NULL), KS_OK); // a hit: nothing to move

    struct ks_plan plan;
    assert_int_equal(ks_cache_plan(c, UINT64_MAX, &plan), KS_OK);
    assert_int_equal(plan.n, 0); // no reserve asked for: nothing moves

    ks_cache_set_reserve(c, 4);
    assert_int_equal(ks_cache_plan(c, UINT64_MAX, &plan), KS_OK);
    uint32_t demoted = 0;
    for (uint32_t i = 0; i < plan.n; i++) {
        assert_int_equal(plan.batch[i]->src, KS_L1);
        assert_int_equal(plan.batch[i]->dst, KS_L2);
        for (uint32_t k = 0; k < plan.batch[i]->n; k++) // LRU victims: the oldest, never block 15 (used now)
            assert_true(plan.batch[i]->blocks[k] != 15);
        demoted += plan.batch[i]->n;
    }
    assert_int_equal(demoted, 4);
    check(c);
    // in flight, the pages count already: a second plan adds nothing
    struct ks_plan again;
    assert_int_equal(ks_cache_plan(c, UINT64_MAX, &again), KS_OK);
    assert_int_equal(again.n, 0);
    for (uint32_t i = 0; i < plan.n; i++)
        assert_int_equal(ks_cache_confirm(c, plan.batch[i]), KS_OK);
    struct ks_tier_view v;
    ks_cache_tier_view(c, KS_L1, &v);
    assert_int_equal(v.used, 12);
    // the new blocks of the next step fit in L1
    uint32_t placed2[KS_TIERS] = {0};
    assert_int_equal(ks_cache_req_grow(c, r, 4, KS_L1, placed2), KS_OK);
    assert_int_equal(placed2[KS_L1], 4);
    assert_int_equal(ks_cache_stats(c)->evictions[KS_L1], 4);
    check(c);
    ks_cache_free(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(reserve_demotes_and_new_blocks_land_in_l1),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
