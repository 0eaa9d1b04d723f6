// test_check.c - the invariant checker catches what it claims to.
//
// A healthy manager passes; then each test breaks one invariant by hand (the
// test reaches into the private state for that) and the checker must name it.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "cache_impl.h"

static struct ks_cache *healthy(void)
{
    struct ks_cache_params p;
    ks_cache_params_default(&p);
    p.n_blocks = 256;
    p.tier_blocks[KS_L1] = 8;
    p.tier_blocks[KS_L2] = 64;
    p.block_bytes[KS_L1] = p.block_bytes[KS_L2] = 4096;
    p.evict_samples = 0;
    struct ks_cache *c = ks_cache_new(&p, NULL, 0);
    assert_non_null(c);
    uint32_t a, b;
    assert_int_equal(ks_cache_req_new(c, &a), KS_OK);
    assert_int_equal(ks_cache_req_grow(c, a, 20, KS_L1, NULL), KS_OK);
    assert_int_equal(ks_cache_req_new(c, &b), KS_OK);
    assert_int_equal(ks_cache_req_share(c, b, a, 10), KS_OK);
    assert_int_equal(ks_cache_req_grow(c, b, 5, KS_L1, NULL), KS_OK);
    assert_int_equal(ks_cache_step(c, 1), KS_OK);
    struct ks_access acc[3] = {{.block = 12, .mass = 0.5f, .next = KS_NONE},
                               {.block = 13, .mass = 0.3f, .next = KS_NONE},
                               {.block = 19, .mass = 0.2f, .next = KS_NONE}};
    assert_int_equal(ks_cache_access(c, a, 0, acc, 3, NULL, NULL), KS_OK);
    struct ks_plan plan;
    assert_int_equal(ks_cache_plan(c, UINT64_MAX, &plan), KS_OK);
    assert_true(plan.n > 0); // leave batches in flight: the checker covers them too
    char msg[256];
    int st = ks_cache_check(c, msg, sizeof msg);
    if (st != KS_OK)
        fail_msg("healthy manager refused: %s", msg);
    return c;
}

static void expect_broken(struct ks_cache *c, const char *needle)
{
    char msg[256] = "";
    assert_int_equal(ks_cache_check(c, msg, sizeof msg), KS_ECORRUPT);
    print_message("caught: %s\n", msg);
    assert_non_null(strstr(msg, needle));
}

static uint32_t id_of(struct ks_cache *c, uint32_t req, uint32_t j)
{
    struct ks_loc loc;
    assert_int_equal(ks_cache_locate(c, req, 0, j, &loc), KS_OK);
    return loc.id;
}

static void page_used_twice(void **state)
{
    (void)state;
    struct ks_cache *c = healthy();
    struct ks_block *x = NULL, *y = NULL; // two blocks at rest
    for (uint32_t j = 10; j < 15; j++) {
        struct ks_block *b = &c->tab.blk[id_of(c, 1, j)];
        if (ks_blk_state(b) == KS_BLK_RESIDENT)
            *(x ? &y : &x) = b;
    }
    assert_non_null(y);
    ks_blk_set_loc(y, ks_blk_page(x), ks_blk_tier(x), ks_blk_state(y));
    expect_broken(c, "owned by");
    ks_cache_free(c);
}

static void refs_wrong(void **state)
{
    (void)state;
    struct ks_cache *c = healthy();
    struct ks_block *x = &c->tab.blk[id_of(c, 0, 3)]; // shared by both requests
    ks_blk_set_refs(x, 1);
    expect_broken(c, "refs 1, mapped 2");
    ks_cache_free(c);
}

static void occupancy_wrong(void **state)
{
    (void)state;
    struct ks_cache *c = healthy();
    c->tier[KS_L2].used--;
    expect_broken(c, "L2");
    ks_cache_free(c);
}

static void moving_without_batch(void **state)
{
    (void)state;
    struct ks_cache *c = healthy();
    struct ks_block *x = &c->tab.blk[id_of(c, 1, 14)];
    assert_int_equal(ks_blk_state(x), KS_BLK_RESIDENT);
    ks_blk_set_state(x, KS_BLK_MIG_UP);
    expect_broken(c, "not in a live batch");
    ks_cache_free(c);
}

static void counts_not_conserved(void **state)
{
    (void)state;
    struct ks_cache *c = healthy();
    c->placed[KS_L1]++;
    expect_broken(c, "created");
    ks_cache_free(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(page_used_twice),
        cmocka_unit_test(refs_wrong),
        cmocka_unit_test(occupancy_wrong),
        cmocka_unit_test(moving_without_batch),
        cmocka_unit_test(counts_not_conserved),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
