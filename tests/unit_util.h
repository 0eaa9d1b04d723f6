// unit_util.h - helpers shared by the cache manager's unit tests (tests/test_*.c).
//
// Every helper fails the running cmocka test on the first thing that is not
// as expected, so a test reads as a scenario and its expected values. Include
// it after cmocka.h.
#ifndef KS_UNIT_UTIL_H
#define KS_UNIT_UTIL_H

#include <stdint.h>
#include <string.h>

#include "cache.h"

// Parameters for a small manager: defaults, the given tier sizes, exact
// victim search, no prefetch (tests that want prefetch set the window).
static inline struct ks_cache_params ks_test_params(uint32_t l1, uint32_t l2, uint32_t l3)
{
    struct ks_cache_params p;
    ks_cache_params_default(&p);
    p.n_blocks = 4096;
    p.tier_blocks[KS_L1] = l1;
    p.tier_blocks[KS_L2] = l2;
    p.tier_blocks[KS_L3] = l3;
    p.block_bytes[KS_L1] = 4096;
    p.block_bytes[KS_L2] = 4096;
    p.block_bytes[KS_L3] = 4096;
    p.prefetch_window = 0;
    p.evict_samples = 0;
    return p;
}

static inline struct ks_cache *ks_test_new(const struct ks_cache_params *p)
{
    char err[256] = "";
    struct ks_cache *c = ks_cache_new(p, err, sizeof err);
    if (!c)
        fail_msg("ks_cache_new: %s", err);
    return c;
}

// ks_cache_check must pass; its message is the failure's.
static inline void ks_test_check(const struct ks_cache *c)
{
    char msg[512] = "";
    int st = ks_cache_check(c, msg, sizeof msg);
    if (st != KS_OK)
        fail_msg("ks_cache_check: %d: %s", st, msg);
}

static inline uint32_t ks_test_req(struct ks_cache *c)
{
    uint32_t r = KS_NONE;
    assert_int_equal(ks_cache_req_new(c, &r), KS_OK);
    return r;
}

// Grows req by n blocks starting at `tier`; all of them must find a page.
static inline void ks_test_grow(struct ks_cache *c, uint32_t req, uint32_t n, unsigned tier)
{
    assert_int_equal(ks_cache_req_grow(c, req, n, tier, NULL), KS_OK);
}

static inline struct ks_loc ks_test_loc(const struct ks_cache *c, uint32_t req, uint32_t g, uint32_t j)
{
    struct ks_loc l;
    memset(&l, 0xa5, sizeof l);
    assert_int_equal(ks_cache_locate(c, req, g, j, &l), KS_OK);
    return l;
}

static inline uint32_t ks_test_id(const struct ks_cache *c, uint32_t req, uint32_t g, uint32_t j)
{
    return ks_test_loc(c, req, g, j).id;
}

static inline unsigned ks_test_tier(const struct ks_cache *c, uint32_t req, uint32_t g, uint32_t j)
{
    return ks_test_loc(c, req, g, j).tier;
}

static inline uint32_t ks_test_used(const struct ks_cache *c, unsigned tier)
{
    struct ks_tier_view v;
    ks_cache_tier_view(c, tier, &v);
    return v.used;
}

// Reports one access of block j with `mass` (no next use).
static inline void ks_test_access1(struct ks_cache *c, uint32_t req, uint32_t g, uint32_t j, float mass)
{
    struct ks_access a = {.block = j, .mass = mass, .next = KS_NONE};
    assert_int_equal(ks_cache_access(c, req, g, &a, 1, NULL, NULL), KS_OK);
}

// Reports accesses of blocks[0..n), each with `mass`, in one call.
static inline void ks_test_access(struct ks_cache *c, uint32_t req, uint32_t g, const uint32_t *blocks, uint32_t n,
                                  float mass)
{
    struct ks_access a[256];
    assert_true(n <= 256);
    for (uint32_t i = 0; i < n; i++)
        a[i] = (struct ks_access){.block = blocks[i], .mass = mass, .next = KS_NONE};
    assert_int_equal(ks_cache_access(c, req, g, a, n, NULL, NULL), KS_OK);
}

// The documented shape of a plan: batches of 1..migration_batch blocks, one
// source and one destination tier each, bytes = n * the smaller block size of
// the two tiers, totals adding up, and every `after` an earlier batch.
static inline void ks_test_plan_sane(const struct ks_cache_params *p, const struct ks_plan *plan)
{
    uint64_t bytes = 0;
    for (uint32_t i = 0; i < plan->n; i++) {
        const struct ks_batch *b = plan->batch[i];
        assert_true(b->n >= 1 && b->n <= p->migration_batch);
        assert_true(b->src < KS_TIERS && b->dst < KS_TIERS && b->src != b->dst);
        assert_true(b->klass < KS_CLASSES);
        uint32_t s = p->block_bytes[b->src], d = p->block_bytes[b->dst];
        assert_int_equal(b->bytes, (uint64_t)b->n * (s < d ? s : d));
        bytes += b->bytes;
        if (b->after != KS_NONE) {
            int earlier = 0;
            for (uint32_t k = 0; k < i; k++)
                earlier |= plan->batch[k]->id == b->after;
            if (!earlier)
                fail_msg("batch %u (index %u) comes after %u, which is not earlier in the plan", b->id, i, b->after);
        }
        for (uint32_t k = 0; k < i; k++)
            assert_int_not_equal(plan->batch[k]->id, b->id);
    }
    assert_int_equal(plan->bytes, bytes);
}

static inline void ks_test_confirm_all(struct ks_cache *c, struct ks_plan *plan)
{
    for (uint32_t i = 0; i < plan->n; i++)
        assert_int_equal(ks_cache_confirm(c, plan->batch[i]), KS_OK);
}

// Plans with `budget`, checks the plan's shape, confirms every batch in
// order and the invariants; returns the number of blocks moved.
static inline uint32_t ks_test_plan_confirm(struct ks_cache *c, const struct ks_cache_params *p, uint64_t budget)
{
    struct ks_plan plan;
    assert_int_equal(ks_cache_plan(c, budget, &plan), KS_OK);
    ks_test_plan_sane(p, &plan);
    uint32_t n = 0;
    for (uint32_t i = 0; i < plan.n; i++)
        n += plan.batch[i]->n;
    ks_test_confirm_all(c, &plan);
    assert_int_equal(ks_cache_inflight_batches(c), 0);
    ks_test_check(c);
    return n;
}

// Index of id in b->blocks, or -1.
static inline int ks_test_in_batch(const struct ks_batch *b, uint32_t id)
{
    for (uint32_t i = 0; i < b->n; i++)
        if (b->blocks[i] == id)
            return (int)i;
    return -1;
}

#endif
