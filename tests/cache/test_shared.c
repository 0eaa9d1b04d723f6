// test_shared.c - shared blocks (ks_cache_req_share): they outlive all but
// the last request that maps them, are demoted and never freed under
// pressure; and blocks whose last request goes while they are in flight are
// freed when their batch finishes.
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "cache_impl.h" // a block's reference count
#include "unit_util.h"

// Records the views the eviction callback is shown; scores by last use.
struct views {
    uint32_t n;
    struct ks_block_view v[32];
};

static double record(void *ud, const struct ks_block_view *b)
{
    struct views *s = ud;
    if (s->n < 32)
        s->v[s->n++] = *b;
    return (double)b->last;
}

static void survives_free_of_one(void **state)
{
    (void)state;
    static struct views seen;
    memset(&seen, 0, sizeof seen);
    struct ks_cache_params p = ks_test_params(4, 16, 0);
    p.evict = KS_EVICT_CALLBACK;
    p.evict_fn = record;
    p.evict_ud = &seen;
    struct ks_cache *c = ks_test_new(&p);
    uint32_t a = ks_test_req(c), b = ks_test_req(c);
    ks_test_grow(c, a, 8, KS_L1); // 0..3 L1, 4..7 L2
    assert_int_equal(ks_cache_req_share(c, b, a, 4), KS_OK);
    ks_test_grow(c, b, 2, KS_L2); // b's own 4, 5
    assert_int_equal(ks_test_used(c, KS_L2), 6);
    struct ks_loc la[4];
    for (uint32_t j = 0; j < 4; j++) {
        la[j] = ks_test_loc(c, a, 0, j);
        assert_int_equal(ks_test_id(c, b, 0, j), la[j].id);
    }
    assert_int_equal(ks_cache_req_free(c, a), KS_OK);
    ks_test_check(c);
    // a's own blocks are gone, the shared ones stay where they were
    assert_int_equal(ks_test_used(c, KS_L1), 4);
    assert_int_equal(ks_test_used(c, KS_L2), 2);
    assert_int_equal(ks_cache_req_len(c, b), 6);
    for (uint32_t j = 0; j < 4; j++) {
        struct ks_loc l = ks_test_loc(c, b, 0, j);
        assert_int_equal(l.id, la[j].id);
        assert_int_equal(l.tier, KS_L1);
        assert_int_equal(l.page, la[j].page);
        assert_int_equal(l.state, KS_BLK_RESIDENT);
        assert_int_equal(ks_cache_validate(c, &la[j]), KS_OK); // a reader of a's may still read
    }
    // their reference count is 1 now: seen by the eviction callback
    ks_cache_step(c, 5);
    ks_test_access1(c, b, 0, 4, 1.0f);
    assert_int_equal(ks_test_plan_confirm(c, &p, UINT64_MAX), 2);
    assert_true(seen.n >= 4);
    for (uint32_t i = 0; i < seen.n; i++) {
        assert_int_equal(seen.v[i].refs, 1);
        assert_int_equal(seen.v[i].req, a); // the creator, though gone
        assert_int_equal(seen.v[i].tier, KS_L1);
    }
    assert_int_equal(ks_cache_stats(c)->demotions_shared, 0);
    assert_int_equal(ks_test_tier(c, b, 0, 4), KS_L1);
    ks_test_check(c);
    assert_int_equal(ks_cache_req_free(c, b), KS_OK);
    assert_int_equal(ks_test_used(c, KS_L1), 0);
    assert_int_equal(ks_test_used(c, KS_L2), 0);
    ks_test_check(c);
    ks_cache_free(c);
}

static void demoted_not_freed(void **state)
{
    (void)state;
    struct ks_cache_params p = ks_test_params(4, 16, 0);
    struct ks_cache *c = ks_test_new(&p);
    const struct ks_cache_stats *st = ks_cache_stats(c);
    uint32_t a = ks_test_req(c), b = ks_test_req(c);
    ks_test_grow(c, a, 8, KS_L1); // 0..3 L1 (to be shared), 4..7 L2
    assert_int_equal(ks_cache_req_share(c, b, a, 4), KS_OK);
    // pressure: two misses of a's need two L1 pages, all L1 blocks are shared
    ks_cache_step(c, 5);
    ks_test_access(c, a, 0, (uint32_t[]){4, 5}, 2, 1.0f);
    assert_int_equal(ks_test_plan_confirm(c, &p, UINT64_MAX), 4);
    assert_int_equal(st->evictions[KS_L1], 2);
    assert_int_equal(st->demotions_shared, 2);
    uint32_t demoted = 0;
    for (uint32_t j = 0; j < 4; j++) {
        struct ks_loc la = ks_test_loc(c, a, 0, j), lb = ks_test_loc(c, b, 0, j);
        assert_int_equal(la.id, lb.id); // still shared
        assert_int_equal(la.tier, lb.tier);
        assert_int_equal(la.page, lb.page);
        assert_int_equal(la.state, KS_BLK_RESIDENT);
        demoted += la.tier == KS_L2;
    }
    assert_int_equal(demoted, 2);
    assert_int_equal(ks_test_used(c, KS_L1), 4);
    assert_int_equal(ks_test_used(c, KS_L2), 4 - 2 + 2);
    ks_test_check(c);
    // b goes: everything of a stays
    assert_int_equal(ks_cache_req_free(c, b), KS_OK);
    assert_int_equal(ks_test_used(c, KS_L1), 4);
    assert_int_equal(ks_test_used(c, KS_L2), 4);
    ks_test_check(c);
    assert_int_equal(ks_cache_req_free(c, a), KS_OK);
    assert_int_equal(ks_test_used(c, KS_L1), 0);
    assert_int_equal(ks_test_used(c, KS_L2), 0);
    ks_test_check(c);
    ks_cache_free(c);
}

// A chain a <- b <- c: the prefix lives until the last of them goes.
static void freed_with_last_request(void **state)
{
    (void)state;
    struct ks_cache_params p = ks_test_params(64, 64, 0);
    p.groups = 2;
    struct ks_cache *c = ks_test_new(&p);
    uint32_t a = ks_test_req(c), b = ks_test_req(c), d = ks_test_req(c);
    ks_test_grow(c, a, 10, KS_L1);
    assert_int_equal(ks_cache_req_share(c, b, a, 7), KS_OK);
    ks_test_grow(c, b, 3, KS_L2);
    assert_int_equal(ks_cache_req_share(c, d, b, 9), KS_OK);
    assert_int_equal(ks_test_used(c, KS_L1), 20);
    assert_int_equal(ks_test_used(c, KS_L2), 6);
    assert_int_equal(ks_cache_req_free(c, a), KS_OK); // a's 7..9 go
    assert_int_equal(ks_test_used(c, KS_L1), 14);
    ks_test_check(c);
    assert_int_equal(ks_cache_req_free(c, b), KS_OK); // b's 9 goes (d maps 7, 8)
    assert_int_equal(ks_test_used(c, KS_L1), 14);
    assert_int_equal(ks_test_used(c, KS_L2), 4);
    for (uint32_t g = 0; g < 2; g++)
        for (uint32_t j = 0; j < 9; j++)
            assert_int_equal(ks_test_loc(c, d, g, j).state, KS_BLK_RESIDENT);
    ks_test_check(c);
    assert_int_equal(ks_cache_req_free(c, d), KS_OK);
    assert_int_equal(ks_test_used(c, KS_L1), 0);
    assert_int_equal(ks_test_used(c, KS_L2), 0);
    ks_test_check(c);
    ks_cache_free(c);
}

// The request goes while its blocks move up: they are freed at confirm.
static void free_in_flight_confirm(void **state)
{
    (void)state;
    struct ks_cache_params p = ks_test_params(4, 16, 0);
    struct ks_cache *c = ks_test_new(&p);
    uint32_t r = ks_test_req(c);
    ks_test_grow(c, r, 4, KS_L2);
    ks_cache_step(c, 1);
    ks_test_access(c, r, 0, (uint32_t[]){0, 1}, 2, 1.0f);
    struct ks_plan plan;
    assert_int_equal(ks_cache_plan(c, UINT64_MAX, &plan), KS_OK);
    assert_int_equal(plan.n, 1);
    assert_int_equal(ks_cache_req_free(c, r), KS_OK);
    // 2, 3 freed now; 0, 1 wait for their batch (source and destination pages)
    assert_int_equal(ks_test_used(c, KS_L2), 2);
    assert_int_equal(ks_test_used(c, KS_L1), 2);
    ks_test_check(c);
    assert_int_equal(ks_cache_confirm(c, plan.batch[0]), KS_OK);
    assert_int_equal(ks_test_used(c, KS_L1), 0);
    assert_int_equal(ks_test_used(c, KS_L2), 0);
    assert_int_equal(ks_cache_stats(c)->migrations[KS_L2][KS_L1], 2);
    ks_test_check(c);
    // the ids are free again: a new request can use every page
    uint32_t q = ks_test_req(c);
    ks_test_grow(c, q, 20, KS_L1);
    ks_test_check(c);
    ks_cache_free(c);
}

static void free_in_flight_abort(void **state)
{
    (void)state;
    struct ks_cache_params p = ks_test_params(4, 16, 0);
    struct ks_cache *c = ks_test_new(&p);
    uint32_t r = ks_test_req(c);
    ks_test_grow(c, r, 4, KS_L2);
    ks_cache_step(c, 1);
    ks_test_access(c, r, 0, (uint32_t[]){0, 1}, 2, 1.0f);
    struct ks_plan plan;
    assert_int_equal(ks_cache_plan(c, UINT64_MAX, &plan), KS_OK);
    assert_int_equal(plan.n, 1);
    assert_int_equal(ks_cache_req_free(c, r), KS_OK);
    ks_test_check(c);
    assert_int_equal(ks_cache_abort(c, plan.batch[0]), KS_OK);
    assert_int_equal(ks_test_used(c, KS_L1), 0);
    assert_int_equal(ks_test_used(c, KS_L2), 0);
    ks_test_check(c);
    ks_cache_free(c);
}

// Victims and incoming blocks of a request that goes mid-flight.
static void free_in_flight_with_victims(void **state)
{
    (void)state;
    struct ks_cache_params p = ks_test_params(4, 16, 0);
    struct ks_cache *c = ks_test_new(&p);
    uint32_t r = ks_test_req(c), keep = ks_test_req(c);
    ks_test_grow(c, r, 8, KS_L1); // 0..3 L1, 4..7 L2
    ks_test_grow(c, keep, 1, KS_L2);
    ks_cache_step(c, 10);
    ks_test_access(c, r, 0, (uint32_t[]){4, 5}, 2, 1.0f);
    struct ks_plan plan;
    assert_int_equal(ks_cache_plan(c, UINT64_MAX, &plan), KS_OK);
    ks_test_plan_sane(&p, &plan);
    assert_int_equal(plan.n, 2);
    assert_int_equal(ks_cache_req_free(c, r), KS_OK);
    ks_test_check(c);
    assert_int_equal(ks_cache_confirm(c, plan.batch[0]), KS_OK);
    ks_test_check(c);
    assert_int_equal(ks_cache_confirm(c, plan.batch[1]), KS_OK);
    ks_test_check(c);
    assert_int_equal(ks_test_used(c, KS_L1), 0);
    assert_int_equal(ks_test_used(c, KS_L2), 1);
    assert_int_equal(ks_test_tier(c, keep, 0, 0), KS_L2);
    ks_cache_free(c);
}

// A shared block in flight when one of its requests goes lives on.
static void shared_in_flight(void **state)
{
    (void)state;
    struct ks_cache_params p = ks_test_params(4, 16, 0);
    struct ks_cache *c = ks_test_new(&p);
    uint32_t a = ks_test_req(c), b = ks_test_req(c);
    ks_test_grow(c, a, 3, KS_L2);
    assert_int_equal(ks_cache_req_share(c, b, a, 2), KS_OK);
    ks_cache_step(c, 1);
    ks_test_access1(c, a, 0, 1, 1.0f);
    struct ks_plan plan;
    assert_int_equal(ks_cache_plan(c, UINT64_MAX, &plan), KS_OK);
    assert_int_equal(plan.n, 1);
    assert_int_equal(ks_cache_req_free(c, a), KS_OK);
    assert_int_equal(ks_test_used(c, KS_L2), 2); // a's 2 went; 0 and 1 (in flight) stay
    assert_int_equal(ks_cache_confirm(c, plan.batch[0]), KS_OK);
    struct ks_loc l = ks_test_loc(c, b, 0, 1);
    assert_int_equal(l.tier, KS_L1);
    assert_int_equal(l.state, KS_BLK_RESIDENT);
    assert_int_equal(ks_cache_validate(c, &l), KS_OK);
    assert_int_equal(ks_test_used(c, KS_L1), 1);
    assert_int_equal(ks_test_used(c, KS_L2), 1);
    ks_test_check(c);
    assert_int_equal(ks_cache_req_free(c, b), KS_OK);
    assert_int_equal(ks_test_used(c, KS_L1), 0);
    assert_int_equal(ks_test_used(c, KS_L2), 0);
    ks_test_check(c);
    ks_cache_free(c);
}

// A request goes while its miss is pending; a new request reuses the freed
// id in the same step and misses on it: that miss must be planned (with or
// without a plan in between).
static void pending_miss_case(int plan_between)
{
    struct ks_cache_params p = ks_test_params(2, 8, 0);
    p.n_blocks = 2 * KS_CHUNK; // one chunk for k, one for a (then b)
    struct ks_cache *c = ks_test_new(&p);
    uint32_t k = ks_test_req(c), a = ks_test_req(c);
    ks_test_grow(c, k, 2, KS_L1); // fills L1
    ks_test_grow(c, a, 1, KS_L2);
    uint32_t id = ks_test_id(c, a, 0, 0);
    ks_cache_step(c, 5);
    ks_test_access(c, k, 0, (uint32_t[]){0, 1}, 2, 1.0f); // no victim this step
    ks_test_access1(c, a, 0, 0, 1.0f);
    struct ks_plan plan;
    assert_int_equal(ks_cache_plan(c, UINT64_MAX, &plan), KS_OK);
    assert_int_equal(plan.n, 0); // pending
    assert_int_equal(ks_cache_req_free(c, a), KS_OK);
    ks_test_check(c);
    if (plan_between) {
        assert_int_equal(ks_cache_plan(c, UINT64_MAX, &plan), KS_OK);
        assert_int_equal(plan.n, 0); // the freed block's miss is gone
    }
    uint32_t b = ks_test_req(c);
    ks_test_grow(c, b, 1, KS_L2);
    assert_int_equal(ks_test_id(c, b, 0, 0), id); // the only free chunk is a's
    ks_test_access1(c, b, 0, 0, 1.0f);
    assert_int_equal(ks_cache_req_free(c, k), KS_OK); // L1 pages free up
    assert_int_equal(ks_cache_plan(c, UINT64_MAX, &plan), KS_OK);
    ks_test_plan_sane(&p, &plan);
    assert_int_equal(plan.n, 1);
    assert_int_equal(plan.batch[0]->n, 1);
    assert_int_equal(plan.batch[0]->blocks[0], ks_test_id(c, b, 0, 0));
    ks_test_confirm_all(c, &plan);
    assert_int_equal(ks_test_tier(c, b, 0, 0), KS_L1);
    ks_test_check(c);
    ks_cache_free(c);
}

static void pending_miss_of_freed_request(void **state)
{
    (void)state;
    pending_miss_case(1);
    pending_miss_case(0);
}

// README "Block table entry (16 bytes)": "a block at most 8191 sharers" (its
// 13-bit reference count): 8191 requests map one block, the 8192nd is refused
// and leaves the block as it was; once one goes, another may map it.
static void at_most_8191_sharers(void **state)
{
    (void)state;
    struct ks_cache_params p = ks_test_params(4, 16, 0);
    struct ks_cache *c = ks_test_new(&p);
    static uint32_t req[8192];
    req[0] = ks_test_req(c);
    ks_test_grow(c, req[0], 1, KS_L1);
    uint32_t id = ks_test_id(c, req[0], 0, 0);
    for (uint32_t i = 1; i < 8191; i++) {
        req[i] = ks_test_req(c);
        assert_int_equal(ks_cache_req_share(c, req[i], req[0], 1), KS_OK);
    }
    assert_int_equal(ks_blk_refs(ks_blocktab_get(&c->tab, id)), 8191);
    req[8191] = ks_test_req(c);
    assert_int_equal(ks_cache_req_share(c, req[8191], req[0], 1), KS_EINVAL);
    assert_int_equal(ks_cache_req_len(c, req[8191]), 0);
    assert_int_equal(ks_blk_refs(ks_blocktab_get(&c->tab, id)), 8191);
    ks_test_check(c);
    assert_int_equal(ks_cache_req_free(c, req[1]), KS_OK);
    assert_int_equal(ks_cache_req_share(c, req[8191], req[0], 1), KS_OK);
    assert_int_equal(ks_test_id(c, req[8191], 0, 0), id);
    ks_test_check(c);
    for (uint32_t i = 0; i < 8192; i++)
        if (i != 1)
            assert_int_equal(ks_cache_req_free(c, req[i]), KS_OK);
    assert_int_equal(ks_test_used(c, KS_L1), 0);
    ks_test_check(c);
    ks_cache_free(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(survives_free_of_one),
        cmocka_unit_test(demoted_not_freed),
        cmocka_unit_test(freed_with_last_request),
        cmocka_unit_test(free_in_flight_confirm),
        cmocka_unit_test(free_in_flight_abort),
        cmocka_unit_test(free_in_flight_with_victims),
        cmocka_unit_test(shared_in_flight),
        cmocka_unit_test(pending_miss_of_freed_request),
        cmocka_unit_test(at_most_8191_sharers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
