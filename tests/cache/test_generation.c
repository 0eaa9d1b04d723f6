// test_generation.c - readers' migration generations: a location stays valid
// until a migration of its block is confirmed, then validate refuses it
// (KS_ESTALE, counted in stats.stale_refused).
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "unit_util.h"

static void stale_after_confirm(void **state)
{
    (void)state;
    struct ks_cache_params p = ks_test_params(4, 16, 0);
    p.evict = KS_EVICT_LRU;
    struct ks_cache *c = ks_test_new(&p);
    const struct ks_cache_stats *st = ks_cache_stats(c);
    uint32_t r = ks_test_req(c);
    ks_test_grow(c, r, 8, KS_L1); // 0..3 L1, 4..7 L2
    for (uint32_t t = 1; t <= 4; t++) { // LRU victim: block 0
        ks_cache_step(c, t);
        ks_test_access1(c, r, 0, t - 1, 1.0f);
    }
    struct ks_loc loc[8];
    for (uint32_t j = 0; j < 8; j++) {
        loc[j] = ks_test_loc(c, r, 0, j);
        assert_int_equal(loc[j].gen, 0);
        assert_int_equal(loc[j].state, KS_BLK_RESIDENT);
        assert_int_equal(ks_cache_validate(c, &loc[j]), KS_OK);
    }
    assert_int_equal(loc[4].tier, KS_L2);

    ks_cache_step(c, 10);
    ks_test_access1(c, r, 0, 4, 1.0f);
    struct ks_plan plan;
    assert_int_equal(ks_cache_plan(c, UINT64_MAX, &plan), KS_OK);
    ks_test_plan_sane(&p, &plan);
    assert_int_equal(plan.n, 2);
    struct ks_batch *d = plan.batch[0], *up = plan.batch[1];
    assert_int_equal(d->blocks[0], loc[0].id);
    assert_int_equal(up->blocks[0], loc[4].id);
    // in flight, both are still where the readers found them
    assert_int_equal(ks_test_loc(c, r, 0, 4).state, KS_BLK_MIG_UP);
    assert_int_equal(ks_test_loc(c, r, 0, 0).state, KS_BLK_MIG_DOWN);
    for (uint32_t j = 0; j < 8; j++)
        assert_int_equal(ks_cache_validate(c, &loc[j]), KS_OK);
    assert_int_equal(st->stale_refused, 0);
    // a reader that comes now finds block 4 on its way up
    uint8_t where;
    struct ks_access_report rep;
    struct ks_access a = {.block = 4, .mass = 1.0f, .next = KS_NONE};
    assert_int_equal(ks_cache_access(c, r, 0, &a, 1, &where, &rep), KS_OK);
    assert_int_equal(where, KS_AT_INFLIGHT);
    assert_int_equal(rep.inflight, 1);
    assert_int_equal(rep.misses, 1);
    assert_int_equal(st->found_inflight, 1);

    assert_int_equal(ks_cache_confirm(c, d), KS_OK);
    assert_int_equal(ks_cache_validate(c, &loc[0]), KS_ESTALE); // the victim moved
    assert_int_equal(st->stale_refused, 1);
    assert_int_equal(ks_cache_validate(c, &loc[4]), KS_OK); // not yet
    assert_int_equal(ks_cache_confirm(c, up), KS_OK);
    assert_int_equal(ks_cache_validate(c, &loc[4]), KS_ESTALE);
    assert_int_equal(ks_cache_validate(c, &loc[4]), KS_ESTALE); // each refusal counts
    assert_int_equal(st->stale_refused, 3);
    for (uint32_t j = 1; j < 4; j++)
        assert_int_equal(ks_cache_validate(c, &loc[j]), KS_OK);
    assert_int_equal(st->stale_refused, 3);
    // located again: a new generation, in the new tier, valid
    struct ks_loc n4 = ks_test_loc(c, r, 0, 4), n0 = ks_test_loc(c, r, 0, 0);
    assert_int_equal(n4.gen, 1);
    assert_int_equal(n4.tier, KS_L1);
    assert_int_equal(n4.page, loc[0].page); // the victim's page was handed over
    assert_int_equal(n0.gen, 1);
    assert_int_equal(n0.tier, KS_L2);
    assert_int_equal(ks_cache_validate(c, &n4), KS_OK);
    assert_int_equal(ks_cache_validate(c, &n0), KS_OK);
    // an old location with the new generation is still not the block's
    struct ks_loc forged = loc[4];
    forged.gen = n4.gen;
    assert_int_equal(ks_cache_validate(c, &forged), KS_ESTALE);
    assert_int_equal(st->stale_refused, 4);
    ks_test_check(c);

    // a freed block is stale too; an unknown id is invalid
    assert_int_equal(ks_cache_req_free(c, r), KS_OK);
    assert_int_equal(ks_cache_validate(c, &n4), KS_ESTALE);
    assert_int_equal(st->stale_refused, 5);
    struct ks_loc bogus = n4;
    bogus.id = p.n_blocks + 1000;
    assert_int_equal(ks_cache_validate(c, &bogus), KS_EINVAL);
    ks_test_check(c);
    ks_cache_free(c);
}

// An aborted migration does not change the generation.
static void abort_keeps_generation(void **state)
{
    (void)state;
    struct ks_cache_params p = ks_test_params(4, 16, 0);
    struct ks_cache *c = ks_test_new(&p);
    uint32_t r = ks_test_req(c);
    ks_test_grow(c, r, 2, KS_L2);
    struct ks_loc l = ks_test_loc(c, r, 0, 1);
    ks_cache_step(c, 1);
    ks_test_access1(c, r, 0, 1, 1.0f);
    struct ks_plan plan;
    assert_int_equal(ks_cache_plan(c, UINT64_MAX, &plan), KS_OK);
    assert_int_equal(plan.n, 1);
    assert_int_equal(ks_cache_abort(c, plan.batch[0]), KS_OK);
    assert_int_equal(ks_cache_validate(c, &l), KS_OK);
    assert_int_equal(ks_test_loc(c, r, 0, 1).gen, 0);
    assert_int_equal(ks_cache_stats(c)->stale_refused, 0);
    // planned again and confirmed: now it moves
    ks_cache_step(c, 2);
    ks_test_access1(c, r, 0, 1, 1.0f);
    assert_int_equal(ks_test_plan_confirm(c, &p, UINT64_MAX), 1);
    assert_int_equal(ks_test_loc(c, r, 0, 1).gen, 1);
    assert_int_equal(ks_cache_validate(c, &l), KS_ESTALE);
    assert_int_equal(ks_cache_stats(c)->stale_refused, 1);
    ks_test_check(c);
    ks_cache_free(c);
}

// A block that goes up and comes back down to the very page it left: the
// old location names the right tier and page, but migrations were confirmed
// since, so it is stale.
static void same_page_after_round_trip(void **state)
{
    (void)state;
    struct ks_cache_params p = ks_test_params(1, 4, 0);
    struct ks_cache *c = ks_test_new(&p);
    uint32_t r = ks_test_req(c);
    ks_test_grow(c, r, 2, KS_L1); // 0 in L1, 1 in L2
    struct ks_loc l1 = ks_test_loc(c, r, 0, 1);
    assert_int_equal(l1.tier, KS_L2);
    ks_cache_step(c, 1);
    ks_test_access1(c, r, 0, 1, 1.0f); // 0 down, 1 up
    assert_int_equal(ks_test_plan_confirm(c, &p, UINT64_MAX), 2);
    ks_cache_step(c, 2);
    ks_test_access1(c, r, 0, 0, 1.0f); // 1 down again, 0 up
    assert_int_equal(ks_test_plan_confirm(c, &p, UINT64_MAX), 2);
    struct ks_loc now = ks_test_loc(c, r, 0, 1);
    assert_int_equal(now.tier, KS_L2);
    assert_int_equal(now.gen, 2);
    // pages are reused last-freed first (tier.h): block 1 took back the L2
    // page it left, which block 0 never held
    assert_int_equal(now.page, l1.page);
    assert_int_equal(ks_cache_validate(c, &l1), KS_ESTALE);
    assert_int_equal(ks_cache_validate(c, &now), KS_OK);
    ks_test_check(c);
    ks_cache_free(c);
}

// An id freed and reused by another request: the old reader is refused.
static void stale_after_reuse(void **state)
{
    (void)state;
    struct ks_cache_params p = ks_test_params(4, 4, 0);
    struct ks_cache *c = ks_test_new(&p);
    uint32_t a = ks_test_req(c);
    ks_test_grow(c, a, 1, KS_L1);
    struct ks_loc la = ks_test_loc(c, a, 0, 0);
    assert_int_equal(ks_cache_req_free(c, a), KS_OK);
    uint32_t b = ks_test_req(c);
    ks_test_grow(c, b, 1, KS_L1);
    struct ks_loc lb = ks_test_loc(c, b, 0, 0);
    if (lb.id == la.id && lb.page == la.page) // the case of interest
        print_message("id %u and page %u reused\n", lb.id, lb.page);
    assert_int_equal(ks_cache_validate(c, &la), KS_ESTALE);
    assert_int_equal(ks_cache_validate(c, &lb), KS_OK);
    ks_test_check(c);
    ks_cache_free(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(stale_after_confirm),
        cmocka_unit_test(abort_keeps_generation),
        cmocka_unit_test(same_page_after_round_trip),
        cmocka_unit_test(stale_after_reuse),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
