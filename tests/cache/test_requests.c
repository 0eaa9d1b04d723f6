// test_requests.c - requests in the manager: growing across tiers, running
// out of pages or ids, layer groups, freeing, lengths, access reports and
// argument checks.
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "unit_util.h"

static void grow_fills_tiers_in_order(void **state)
{
    (void)state;
    struct ks_cache_params p = ks_test_params(4, 6, 8);
    struct ks_cache *c = ks_test_new(&p);
    uint32_t r = ks_test_req(c);
    assert_int_equal(ks_cache_req_len(c, r), 0);
    // 20 blocks do not fit in 4 + 6 + 8 pages: all or nothing
    uint32_t placed[KS_TIERS] = {0};
    assert_int_equal(ks_cache_req_grow(c, r, 20, KS_L1, placed), KS_ENOSPC);
    assert_int_equal(ks_cache_req_len(c, r), 0);
    for (unsigned t = 0; t < KS_TIERS; t++) {
        assert_int_equal(placed[t], 0);
        assert_int_equal(ks_test_used(c, t), 0);
    }
    ks_test_check(c);
    assert_int_equal(ks_cache_req_grow(c, r, 18, KS_L1, placed), KS_OK);
    assert_int_equal(placed[KS_L1], 4);
    assert_int_equal(placed[KS_L2], 6);
    assert_int_equal(placed[KS_L3], 8);
    assert_int_equal(ks_cache_req_len(c, r), 18);
    for (uint32_t j = 0; j < 18; j++) {
        struct ks_loc l = ks_test_loc(c, r, 0, j);
        assert_int_equal(l.tier, j < 4 ? KS_L1 : j < 10 ? KS_L2 : KS_L3);
        assert_int_equal(l.state, KS_BLK_RESIDENT);
    }
    for (unsigned t = 0; t < KS_TIERS; t++) {
        struct ks_tier_view v;
        ks_cache_tier_view(c, t, &v);
        assert_int_equal(v.used, p.tier_blocks[t]);
        assert_int_equal(v.cap, p.tier_blocks[t]);
        assert_int_equal(v.peak, p.tier_blocks[t]);
        assert_int_equal(v.allocs, p.tier_blocks[t]);
    }
    struct ks_loc l;
    assert_int_equal(ks_cache_locate(c, r, 0, 18, &l), KS_EINVAL);
    assert_int_equal(ks_cache_req_grow(c, r, 1, KS_L3, NULL), KS_ENOSPC);
    assert_int_equal(ks_cache_req_len(c, r), 18);
    ks_test_check(c);

    // freeing gives every page back
    assert_int_equal(ks_cache_req_free(c, r), KS_OK);
    assert_int_equal(ks_cache_req_len(c, r), 0);
    assert_int_equal(ks_cache_req_free(c, r), KS_EINVAL);
    assert_int_equal(ks_cache_locate(c, r, 0, 0, &l), KS_EINVAL);
    for (unsigned t = 0; t < KS_TIERS; t++) {
        struct ks_tier_view v;
        ks_cache_tier_view(c, t, &v);
        assert_int_equal(v.used, 0);
        assert_int_equal(v.frees, p.tier_blocks[t]);
        assert_int_equal(v.peak, p.tier_blocks[t]);
    }
    ks_test_check(c);
    // and a new request can take them all again
    uint32_t r2 = ks_test_req(c);
    uint32_t placed2[KS_TIERS] = {0};
    assert_int_equal(ks_cache_req_grow(c, r2, 18, KS_L1, placed2), KS_OK);
    assert_int_equal(placed2[KS_L1] + placed2[KS_L2] + placed2[KS_L3], 18);
    assert_int_equal(placed2[KS_L1], 4);
    ks_test_check(c);
    ks_cache_free(c);
}

static void grow_from_lower_tier(void **state)
{
    (void)state;
    struct ks_cache_params p = ks_test_params(4, 6, 8);
    struct ks_cache *c = ks_test_new(&p);
    uint32_t r = ks_test_req(c);
    uint32_t placed[KS_TIERS] = {0};
    assert_int_equal(ks_cache_req_grow(c, r, 3, KS_L2, placed), KS_OK);
    assert_int_equal(placed[KS_L1], 0);
    assert_int_equal(placed[KS_L2], 3);
    assert_int_equal(placed[KS_L3], 0);
    uint32_t p3[KS_TIERS] = {0};
    assert_int_equal(ks_cache_req_grow(c, r, 2, KS_L3, p3), KS_OK);
    assert_int_equal(p3[KS_L3], 2);
    uint32_t p4[KS_TIERS] = {0};
    assert_int_equal(ks_cache_req_grow(c, r, 5, KS_L2, p4), KS_OK); // 3 fit in L2, 2 go to L3
    assert_int_equal(p4[KS_L1], 0);
    assert_int_equal(p4[KS_L2], 3);
    assert_int_equal(p4[KS_L3], 2);
    assert_int_equal(ks_test_used(c, KS_L1), 0);
    assert_int_equal(ks_test_tier(c, r, 0, 0), KS_L2);
    assert_int_equal(ks_test_tier(c, r, 0, 3), KS_L3);
    assert_int_equal(ks_test_tier(c, r, 0, 7), KS_L2);
    assert_int_equal(ks_test_tier(c, r, 0, 9), KS_L3);
    assert_int_equal(ks_cache_req_grow(c, r, 1, KS_TIERS, NULL), KS_EINVAL);
    assert_int_equal(ks_cache_req_grow(c, 99, 1, KS_L1, NULL), KS_EINVAL);
    ks_test_check(c);
    ks_cache_free(c);
}

// An absent middle tier is skipped.
static void grow_skips_absent_tier(void **state)
{
    (void)state;
    struct ks_cache_params p = ks_test_params(2, 0, 3);
    struct ks_cache *c = ks_test_new(&p);
    uint32_t r = ks_test_req(c);
    uint32_t placed[KS_TIERS] = {0};
    assert_int_equal(ks_cache_req_grow(c, r, 5, KS_L1, placed), KS_OK);
    assert_int_equal(placed[KS_L1], 2);
    assert_int_equal(placed[KS_L2], 0);
    assert_int_equal(placed[KS_L3], 3);
    assert_int_equal(ks_cache_req_grow(c, r, 1, KS_L1, NULL), KS_ENOSPC);
    ks_test_check(c);
    ks_cache_free(c);
}

static void groups(void **state)
{
    (void)state;
    struct ks_cache_params p = ks_test_params(4, 300, 0);
    p.groups = 3;
    struct ks_cache *c = ks_test_new(&p);
    uint32_t r = ks_test_req(c);
    uint32_t placed[KS_TIERS] = {0};
    assert_int_equal(ks_cache_req_grow(c, r, 2, KS_L1, placed), KS_OK);
    assert_int_equal(ks_cache_req_len(c, r), 2); // per group
    assert_int_equal(placed[KS_L1], 4);
    assert_int_equal(placed[KS_L2], 2);
    assert_int_equal(ks_test_used(c, KS_L2), 2);
    assert_int_equal(ks_cache_req_grow(c, r, 40, KS_L2, NULL), KS_OK); // crosses a chunk
    assert_int_equal(ks_cache_req_len(c, r), 42);
    assert_int_equal(ks_test_used(c, KS_L2), 2 + 120);
    // 126 distinct ids, none free
    uint32_t ids[126];
    uint32_t n = 0;
    for (uint32_t g = 0; g < 3; g++)
        for (uint32_t j = 0; j < 42; j++) {
            ids[n] = ks_test_id(c, r, g, j);
            for (uint32_t k = 0; k < n; k++)
                assert_int_not_equal(ids[k], ids[n]);
            n++;
        }
    struct ks_loc l;
    assert_int_equal(ks_cache_locate(c, r, 3, 0, &l), KS_EINVAL);
    ks_test_check(c);
    assert_int_equal(ks_cache_req_free(c, r), KS_OK);
    assert_int_equal(ks_test_used(c, KS_L1), 0);
    assert_int_equal(ks_test_used(c, KS_L2), 0);
    ks_test_check(c);
    ks_cache_free(c);
}

// Virtual ids run out before pages do: n_blocks = two chunks.
static void ids_run_out(void **state)
{
    (void)state;
    struct ks_cache_params p = ks_test_params(100, 0, 0);
    p.n_blocks = 2 * KS_CHUNK;
    struct ks_cache *c = ks_test_new(&p);
    uint32_t a = ks_test_req(c), b = ks_test_req(c), d = ks_test_req(c);
    ks_test_grow(c, a, 20, KS_L1);
    ks_test_grow(c, a, 12, KS_L1); // fills a's chunk exactly
    assert_int_equal(ks_cache_req_grow(c, b, 33, KS_L1, NULL), KS_ENOSPC); // 2 chunks, 1 free
    assert_int_equal(ks_cache_req_len(c, b), 0);
    assert_int_equal(ks_test_used(c, KS_L1), 32);
    ks_test_check(c);
    ks_test_grow(c, b, 32, KS_L1);
    assert_int_equal(ks_cache_req_grow(c, d, 1, KS_L1, NULL), KS_ENOSPC);
    assert_int_equal(ks_cache_req_grow(c, a, 1, KS_L1, NULL), KS_ENOSPC);
    assert_int_equal(ks_cache_req_len(c, d), 0);
    assert_int_equal(ks_cache_req_len(c, a), 32);
    assert_int_equal(ks_test_used(c, KS_L1), 64);
    ks_test_check(c);
    assert_int_equal(ks_cache_req_free(c, a), KS_OK); // its chunk comes back
    ks_test_grow(c, d, 32, KS_L1);
    assert_int_equal(ks_cache_req_grow(c, d, 1, KS_L1, NULL), KS_ENOSPC);
    ks_test_check(c);
    ks_cache_free(c);
}

// Every group must fit: 3 groups of 3 blocks need 9 pages, there are 6.
static void groups_all_or_nothing(void **state)
{
    (void)state;
    struct ks_cache_params p = ks_test_params(4, 2, 0);
    p.groups = 3;
    struct ks_cache *c = ks_test_new(&p);
    uint32_t r = ks_test_req(c);
    assert_int_equal(ks_cache_req_grow(c, r, 3, KS_L1, NULL), KS_ENOSPC);
    assert_int_equal(ks_cache_req_len(c, r), 0);
    assert_int_equal(ks_test_used(c, KS_L1), 0);
    ks_test_check(c);
    uint32_t placed[KS_TIERS] = {0};
    assert_int_equal(ks_cache_req_grow(c, r, 2, KS_L1, placed), KS_OK);
    assert_int_equal(placed[KS_L1], 4);
    assert_int_equal(placed[KS_L2], 2);
    assert_int_equal(ks_cache_req_grow(c, r, 1, KS_L2, NULL), KS_ENOSPC);
    assert_int_equal(ks_cache_req_len(c, r), 2);
    ks_test_check(c);
    ks_cache_free(c);
}

// Pages run out right when a new chunk was needed: the chunk is given back.
static void pages_run_out_at_chunk_start(void **state)
{
    (void)state;
    struct ks_cache_params p = ks_test_params(32, 0, 0);
    p.n_blocks = 2 * KS_CHUNK;
    struct ks_cache *c = ks_test_new(&p);
    uint32_t a = ks_test_req(c), b = ks_test_req(c);
    ks_test_grow(c, a, 32, KS_L1);
    assert_int_equal(ks_cache_req_grow(c, a, 1, KS_L1, NULL), KS_ENOSPC);
    assert_int_equal(ks_cache_req_grow(c, b, 1, KS_L1, NULL), KS_ENOSPC);
    assert_int_equal(ks_cache_req_len(c, a), 32);
    assert_int_equal(ks_cache_req_len(c, b), 0);
    ks_test_check(c);
    assert_int_equal(ks_cache_req_free(c, a), KS_OK);
    ks_test_grow(c, b, 32, KS_L1);
    ks_test_check(c);
    ks_cache_free(c);
}

static void access_reports(void **state)
{
    (void)state;
    struct ks_cache_params p = ks_test_params(2, 2, 2);
    struct ks_cache *c = ks_test_new(&p);
    uint32_t r = ks_test_req(c);
    ks_test_grow(c, r, 6, KS_L1);
    struct ks_access acc[6];
    for (uint32_t j = 0; j < 6; j++)
        acc[j] = (struct ks_access){.block = 5 - j, .mass = 0.5f, .next = KS_NONE};
    uint8_t where[6];
    struct ks_access_report rep;
    assert_int_equal(ks_cache_access(c, r, 0, acc, 6, where, &rep), KS_ESTATE); // no step yet
    assert_int_equal(ks_cache_step(c, 3), KS_OK);
    assert_int_equal(ks_cache_access(c, r, 0, acc, 6, where, &rep), KS_OK);
    const uint8_t want[6] = {KS_AT_L3, KS_AT_L3, KS_AT_L2, KS_AT_L2, KS_AT_L1, KS_AT_L1};
    assert_memory_equal(where, want, 6);
    assert_int_equal(rep.found[KS_L1], 2);
    assert_int_equal(rep.found[KS_L2], 2);
    assert_int_equal(rep.found[KS_L3], 2);
    assert_int_equal(rep.inflight, 0);
    assert_int_equal(rep.misses, 4);
    const struct ks_cache_stats *st = ks_cache_stats(c);
    assert_int_equal(st->accesses, 6);
    assert_int_equal(st->found[KS_L1], 2);
    assert_int_equal(st->found[KS_L2], 2);
    assert_int_equal(st->found[KS_L3], 2);
    // NULL outputs are fine; statistics add up
    assert_int_equal(ks_cache_access(c, r, 0, acc, 2, NULL, NULL), KS_OK);
    assert_int_equal(st->accesses, 8);
    assert_int_equal(st->found[KS_L3], 4);
    // refused: a block past the end, an unknown group or request; nothing counted
    acc[0].block = 6;
    assert_int_equal(ks_cache_access(c, r, 0, acc, 1, NULL, NULL), KS_EINVAL);
    assert_int_equal(ks_cache_access(c, r, 1, acc + 1, 1, NULL, NULL), KS_EINVAL);
    assert_int_equal(ks_cache_access(c, r + 1, 0, acc + 1, 1, NULL, NULL), KS_EINVAL);
    assert_int_equal(st->accesses, 8);
    // steps never go back; the same step again is fine
    assert_int_equal(ks_cache_step(c, 2), KS_EINVAL);
    assert_int_equal(ks_cache_step(c, 3), KS_OK);
    assert_int_equal(ks_cache_step(c, 4), KS_OK);
    ks_test_check(c);
    ks_cache_free(c);
}

static void invalid_params(void **state)
{
    (void)state;
    struct ks_cache_params ok = ks_test_params(4, 4, 4);
    struct ks_cache *c = ks_test_new(&ok);
    assert_true(ks_cache_bytes(c) >= 4096 * 16); // at least the block table
    ks_cache_free(c);
    ks_cache_free(NULL);
    struct ks_cache_params bad[10];
    for (int i = 0; i < 10; i++)
        bad[i] = ok;
    bad[0].n_blocks = 0;
    bad[1].tier_blocks[KS_L1] = 0;
    bad[2].block_bytes[KS_L2] = 0;
    bad[3].groups = 0;
    bad[4].heat_half_life = 0;
    bad[5].migration_batch = 0;
    bad[6].evict = KS_EVICT_CALLBACK; // without a function
    bad[7].prefetch_window = 1025;
    bad[8].tier_blocks[KS_L3] = KS_PAGE_MAX + 1;
    bad[9].evict = (enum ks_evict_policy)17;
    for (int i = 0; i < 10; i++) {
        char err[256] = "";
        assert_null(ks_cache_new(&bad[i], err, sizeof err));
        if (err[0] == '\0')
            fail_msg("params %d refused without a message", i);
        assert_null(ks_cache_new(&bad[i], NULL, 0));
    }
    // an absent tier needs no block size
    struct ks_cache_params p = ks_test_params(4, 0, 0);
    p.block_bytes[KS_L2] = 0;
    p.block_bytes[KS_L3] = 0;
    c = ks_test_new(&p);
    ks_cache_free(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(grow_fills_tiers_in_order),
        cmocka_unit_test(grow_from_lower_tier),
        cmocka_unit_test(grow_skips_absent_tier),
        cmocka_unit_test(groups),
        cmocka_unit_test(ids_run_out),
        cmocka_unit_test(groups_all_or_nothing),
        cmocka_unit_test(pages_run_out_at_chunk_start),
        cmocka_unit_test(access_reports),
        cmocka_unit_test(invalid_params),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
