// test_tally.c - a tally (ks_cache_params.tally, tally.c) against a
// per-block manager given the same calls: the same statuses, lengths and
// tiers' counters where no victim is chosen, the same demotions per plan,
// and the oldest pages demoted first.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "cache.h"
#include "rng.h"

static void check(struct ks_cache *c)
{
    char msg[256];
    if (ks_cache_check(c, msg, sizeof msg) != KS_OK)
        fail_msg("%s", msg);
}

static struct ks_cache_params params(uint32_t n_blocks, uint32_t l1, uint32_t l2, uint32_t l3, uint32_t groups,
                                     int tally)
{
    struct ks_cache_params p;
    ks_cache_params_default(&p);
    p.n_blocks = n_blocks;
    p.tier_blocks[KS_L1] = l1;
    p.tier_blocks[KS_L2] = l2;
    p.tier_blocks[KS_L3] = l3;
    p.block_bytes[KS_L1] = p.block_bytes[KS_L2] = p.block_bytes[KS_L3] = 4096;
    p.groups = groups;
    p.tally = tally;
    return p;
}

static struct ks_cache *make(uint32_t n_blocks, uint32_t l1, uint32_t l2, uint32_t l3, uint32_t groups, int tally)
{
    struct ks_cache_params p = params(n_blocks, l1, l2, l3, groups, tally);
    struct ks_cache *c = ks_cache_new(&p, NULL, 0);
    assert_non_null(c);
    return c;
}

static void same_tiers(const struct ks_cache *a, const struct ks_cache *b, int counters)
{
    for (unsigned t = 0; t < KS_TIERS; t++) {
        struct ks_tier_view x, y;
        ks_cache_tier_view(a, t, &x);
        ks_cache_tier_view(b, t, &y);
        assert_int_equal(x.cap, y.cap);
        assert_int_equal(x.used, y.used);
        if (!counters)
            continue;
        assert_int_equal(x.peak, y.peak);
        assert_int_equal(x.allocs, y.allocs);
        assert_int_equal(x.frees, y.frees);
        assert_int_equal(x.mig_in, y.mig_in);
        assert_int_equal(x.mig_out, y.mig_out);
        assert_int_equal(x.alloc_fails, y.alloc_fails);
    }
}

// The plan's batches land (the per-block manager's; a tally's land at its next call).
static void confirm_all(struct ks_cache *c, const struct ks_plan *plan)
{
    for (uint32_t i = 0; i < plan->n; i++)
        assert_int_equal(ks_cache_confirm(c, plan->batch[i]), KS_OK);
}

// Random requests grown, shared and freed, with no reserve (no victim):
// every status, length and counter as block by block, the tiers filling
// up and the block table's chunks running out (n_blocks small). A request
// shared maps all of its source's blocks, which grows no more (a prefix's
// request, as the step driver's): a tally cannot tell which of a source's
// pages a part of it would keep.
static void places_and_frees_as_blocks(void **state)
{
    (void)state;
    for (uint64_t seed = 1; seed <= 4; seed++) {
        struct ks_cache *a = make(640, 96, 160, seed % 2 ? 64 : 0, 3, 0), *b = make(640, 96, 160, seed % 2 ? 64 : 0, 3, 1);
        struct ks_rng rng;
        ks_rng_seed(&rng, seed);
        uint32_t ra[24], rb[24], n = 0, fails = 0, shares = 0;
        uint8_t frozen[24] = {0};
        for (int op = 0; op < 600; op++) {
            uint64_t x = ks_rng_next(&rng);
            uint32_t i = n ? (uint32_t)(x >> 8) % n : 0;
            switch (x % 5) {
            case 0: // a new request, mapping another's prefix at times
                if (n < 24) {
                    assert_int_equal(ks_cache_req_new(a, &ra[n]), KS_OK);
                    assert_int_equal(ks_cache_req_new(b, &rb[n]), KS_OK);
                    uint32_t len = n ? ks_cache_req_len(a, ra[i]) : 0;
                    frozen[n] = 0;
                    if (n && len && (x >> 20) % 2) {
                        int sa = ks_cache_req_share(a, ra[n], ra[i], len);
                        assert_int_equal(ks_cache_req_share(b, rb[n], rb[i], len), sa);
                        shares += sa == KS_OK;
                        frozen[i] |= sa == KS_OK;
                    }
                    n++;
                }
                break;
            case 1:
            case 2: { // growth into L1 (or L2), as admission and new tokens do
                if (!n || frozen[i])
                    break;
                uint32_t k = 1 + (uint32_t)(x >> 32) % 40, pa[KS_TIERS] = {0}, pb[KS_TIERS] = {0};
                unsigned tier = (x >> 40) % 4 == 0 ? KS_L2 : KS_L1;
                int st = ks_cache_req_grow(a, ra[i], k, tier, pa);
                assert_int_equal(ks_cache_req_grow(b, rb[i], k, tier, pb), st);
                assert_memory_equal(pa, pb, sizeof pa);
                fails += st == KS_ENOSPC;
                break;
            }
            case 3: // a request freed (its prefix kept while others map it)
                if (n) {
                    assert_int_equal(ks_cache_req_free(a, ra[i]), KS_OK);
                    assert_int_equal(ks_cache_req_free(b, rb[i]), KS_OK);
                    ra[i] = ra[n - 1];
                    rb[i] = rb[n - 1];
                    frozen[i] = frozen[n - 1];
                    n--;
                }
                break;
            default: { // a step: with no reserve, nothing moves
                struct ks_plan pa, pb;
                assert_int_equal(ks_cache_step(a, (uint32_t)op), KS_OK);
                assert_int_equal(ks_cache_step(b, (uint32_t)op), KS_OK);
                assert_int_equal(ks_cache_plan(a, 0, &pa), KS_OK);
                assert_int_equal(ks_cache_plan(b, 0, &pb), KS_OK);
                assert_int_equal(pa.n, 0);
                assert_int_equal(pb.n, 0);
            }
            }
            for (uint32_t j = 0; j < n; j++)
                assert_int_equal(ks_cache_req_len(a, ra[j]), ks_cache_req_len(b, rb[j]));
            same_tiers(a, b, 1);
            check(a);
            check(b);
        }
        assert_true(fails > 0); // the tiers or the chunks ran out
        assert_true(shares > 0);
        ks_cache_free(a);
        ks_cache_free(b);
    }
}

// With a reserve, and no request freed, a plan demotes as many blocks as
// block by block (from L1 to L2, and L2 to L3 when L2 is full): the tiers'
// counters are the same once the demotions land (ks_cache_land, after the
// per-block manager's confirms).
static void keeps_the_reserve_as_blocks(void **state)
{
    (void)state;
    struct ks_cache *a = make(8192, 64, 96, 512, 2, 0), *b = make(8192, 64, 96, 512, 2, 1);
    uint32_t ra[6], rb[6];
    for (int i = 0; i < 6; i++) {
        assert_int_equal(ks_cache_req_new(a, &ra[i]), KS_OK);
        assert_int_equal(ks_cache_req_new(b, &rb[i]), KS_OK);
    }
    for (uint32_t step = 1; step <= 60; step++) {
        assert_int_equal(ks_cache_step(a, step), KS_OK);
        assert_int_equal(ks_cache_step(b, step), KS_OK);
        same_tiers(a, b, 1); // the last plan's demotions have landed in both
        ks_cache_set_reserve(a, 12);
        ks_cache_set_reserve(b, 12);
        struct ks_plan pa, pb;
        assert_int_equal(ks_cache_plan(a, 0, &pa), KS_OK);
        assert_int_equal(ks_cache_plan(b, 0, &pb), KS_OK);
        assert_int_equal(pb.n, 0); // a tally's demotions carry no batch
        confirm_all(a, &pa);
        check(b); // before they land
        ks_cache_land(a);
        ks_cache_land(b);
        same_tiers(a, b, 1);
        check(a);
        check(b);
        uint32_t i = step % 6, k = step % 7 == 0 ? 20 : 3; // new blocks, a prompt at times
        assert_int_equal(ks_cache_req_grow(a, ra[i], k, KS_L1, NULL), KS_OK);
        assert_int_equal(ks_cache_req_grow(b, rb[i], k, KS_L1, NULL), KS_OK);
        same_tiers(a, b, 1);
    }
    struct ks_tier_view l2, l3;
    ks_cache_tier_view(b, KS_L2, &l2);
    ks_cache_tier_view(b, KS_L3, &l3);
    assert_true(l2.mig_out > 0 && l3.mig_in > 0); // L2 filled up and gave to L3
    ks_cache_free(a);
    ks_cache_free(b);
}

// The oldest pages go first: a request grown before another loses its L1
// pages before that one loses any.
static void demotes_the_oldest(void **state)
{
    (void)state;
    struct ks_cache *c = make(4096, 32, 256, 0, 1, 1);
    uint32_t old, young;
    assert_int_equal(ks_cache_req_new(c, &old), KS_OK);
    assert_int_equal(ks_cache_req_new(c, &young), KS_OK);
    assert_int_equal(ks_cache_req_grow(c, old, 12, KS_L1, NULL), KS_OK);
    assert_int_equal(ks_cache_req_grow(c, young, 12, KS_L1, NULL), KS_OK);
    assert_int_equal(ks_cache_req_grow(c, old, 4, KS_L1, NULL), KS_OK); // old's newest: after young's
    assert_int_equal(ks_cache_step(c, 1), KS_OK);
    ks_cache_set_reserve(c, 24); // 4 free: 20 demoted, old's first 12, then young's 8
    struct ks_plan plan;
    assert_int_equal(ks_cache_plan(c, 0, &plan), KS_OK);
    check(c);
    assert_int_equal(ks_cache_step(c, 2), KS_OK); // they land
    struct ks_tier_view l1;
    ks_cache_tier_view(c, KS_L1, &l1);
    assert_int_equal(l1.used, 8);
    assert_int_equal(l1.mig_out, 20);
    uint64_t frees = l1.frees;
    assert_int_equal(ks_cache_req_free(c, old), KS_OK); // its 4 newest in L1
    ks_cache_tier_view(c, KS_L1, &l1);
    assert_int_equal(l1.frees - frees, 4);
    assert_int_equal(ks_cache_req_free(c, young), KS_OK); // its last 4 in L1
    ks_cache_tier_view(c, KS_L1, &l1);
    assert_int_equal(l1.used, 0);
    check(c);
    ks_cache_free(c);
}

// A reserve beyond L1's pages demotes what L1 holds, no more.
static void reserve_beyond_l1(void **state)
{
    (void)state;
    struct ks_cache *c = make(4096, 16, 256, 0, 1, 1);
    uint32_t r;
    assert_int_equal(ks_cache_req_new(c, &r), KS_OK);
    assert_int_equal(ks_cache_req_grow(c, r, 10, KS_L1, NULL), KS_OK);
    assert_int_equal(ks_cache_step(c, 1), KS_OK);
    ks_cache_set_reserve(c, 40);
    struct ks_plan plan;
    assert_int_equal(ks_cache_plan(c, 0, &plan), KS_OK);
    check(c);
    assert_int_equal(ks_cache_step(c, 2), KS_OK);
    struct ks_tier_view l1, l2;
    ks_cache_tier_view(c, KS_L1, &l1);
    ks_cache_tier_view(c, KS_L2, &l2);
    assert_int_equal(l1.used, 0);
    assert_int_equal(l1.mig_out, 10);
    assert_int_equal(l2.used, 10);
    check(c);
    ks_cache_free(c);
}

// A tally takes no access and keeps no device buffer.
static void takes_no_access(void **state)
{
    (void)state;
    struct ks_cache *c = make(1024, 16, 64, 0, 1, 1);
    uint32_t r;
    assert_int_equal(ks_cache_req_new(c, &r), KS_OK);
    assert_int_equal(ks_cache_req_grow(c, r, 4, KS_L1, NULL), KS_OK);
    assert_int_equal(ks_cache_step(c, 1), KS_OK);
    struct ks_access acc = {.block = 0, .mass = 1.0f, .next = KS_NONE};
    assert_int_not_equal(ks_cache_access(c, r, 0, &acc, 1, NULL, NULL), KS_OK);
    assert_int_equal(ks_cache_settle(c, r), KS_OK);
    assert_int_equal(ks_cache_stats(c)->accesses, 0);
    ks_cache_free(c);
    struct ks_cache_params p = params(1024, 16, 64, 0, 1, 1);
    p.buffer_blocks = 4;
    char err[128] = "";
    assert_null(ks_cache_new(&p, err, sizeof err));
    assert_non_null(strstr(err, "tally"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(places_and_frees_as_blocks),
        cmocka_unit_test(keeps_the_reserve_as_blocks),
        cmocka_unit_test(demotes_the_oldest),
        cmocka_unit_test(reserve_beyond_l1),
        cmocka_unit_test(takes_no_access),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
