// test_plan.c - migration planning: batch sizes and tiers, batches layer by layer, bytes with
// compressed tiers, `after` ordering and its enforcement, fairness between
// requests, abort, the L1 -> L2 -> L3 demotion cascade, pending misses.
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "unit_util.h"

// Ten misses into free L1 pages, batches of at most 4.
static void batches_bounded(void **state)
{
    (void)state;
    struct ks_cache_params p = ks_test_params(32, 64, 0);
    p.migration_batch = 4;
    struct ks_cache *c = ks_test_new(&p);
    uint32_t r = ks_test_req(c);
    ks_test_grow(c, r, 20, KS_L2);
    ks_cache_step(c, 1);
    ks_test_access(c, r, 0, (uint32_t[]){0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, 10, 1.0f);
    struct ks_plan plan;
    assert_int_equal(ks_cache_plan(c, UINT64_MAX, &plan), KS_OK);
    ks_test_plan_sane(&p, &plan);
    assert_int_equal(plan.n, 3); // 4 + 4 + 2
    assert_int_equal(plan.bytes, 10 * 4096);
    uint32_t seen = 0;
    for (uint32_t i = 0; i < plan.n; i++) {
        const struct ks_batch *b = plan.batch[i];
        assert_int_equal(b->src, KS_L2);
        assert_int_equal(b->dst, KS_L1);
        assert_int_equal(b->after, KS_NONE);
        assert_int_equal(b->klass, KS_CLASS_MISS);
        for (uint32_t k = 0; k < b->n; k++) {
            // each planned block is one of the misses, read where it lives
            uint32_t j = 0;
            while (j < 10 && ks_test_id(c, r, 0, j) != b->blocks[k])
                j++;
            assert_true(j < 10);
            assert_false(seen & (1u << j));
            seen |= 1u << j;
            struct ks_loc l = ks_test_loc(c, r, 0, j);
            assert_int_equal(l.tier, KS_L2);
            assert_int_equal(l.state, KS_BLK_MIG_UP);
            assert_int_equal(l.page, b->src_pages[k]);
        }
    }
    assert_int_equal(seen, (1u << 10) - 1);
    assert_int_equal(ks_cache_inflight_batches(c), 3);
    ks_test_check(c);
    for (uint32_t i = 0; i < plan.n; i++) {
        const struct ks_batch *b = plan.batch[i];
        uint32_t dst[4], ids[4], n = b->n;
        for (uint32_t k = 0; k < n; k++)
            dst[k] = b->dst_pages[k], ids[k] = b->blocks[k];
        assert_int_equal(ks_cache_confirm(c, plan.batch[i]), KS_OK);
        for (uint32_t k = 0; k < n; k++)
            for (uint32_t j = 0; j < 10; j++)
                if (ks_test_id(c, r, 0, j) == ids[k]) {
                    struct ks_loc l = ks_test_loc(c, r, 0, j);
                    assert_int_equal(l.tier, KS_L1);
                    assert_int_equal(l.page, dst[k]);
                    assert_int_equal(l.state, KS_BLK_RESIDENT);
                }
        ks_test_check(c);
    }
    const struct ks_cache_stats *st = ks_cache_stats(c);
    assert_int_equal(st->batches, 3);
    assert_int_equal(st->migrations[KS_L2][KS_L1], 10);
    assert_int_equal(st->mig_bytes[KS_L2][KS_L1], 10 * 4096);
    assert_int_equal(ks_test_used(c, KS_L1), 10);
    assert_int_equal(ks_test_used(c, KS_L2), 10);
    ks_test_check(c);
    ks_cache_free(c);
}

// Batches carry one layer group's blocks, in group order, whatever the order
// of the accesses; each demotion batch vacates exactly the pages of the
// promotion batch of its group that waits for it (batch to batch).
static void batches_layer_by_layer(void **state)
{
    (void)state;
    struct ks_cache_params p = ks_test_params(8, 64, 0);
    p.groups = 2;
    p.migration_batch = 4;
    p.prefetch_window = 0;
    struct ks_cache *c = ks_test_new(&p);
    uint32_t r = ks_test_req(c);
    ks_test_grow(c, r, 4, KS_L1);  // blocks 0..3 of both groups: L1 full
    ks_test_grow(c, r, 16, KS_L2); // 4..19
    ks_cache_step(c, 1);
    // group 1 first, its misses interleaved with group 0's by turn
    ks_test_access(c, r, 1, (uint32_t[]){4, 5, 6, 7, 8}, 5, 1.0f);
    ks_test_access(c, r, 0, (uint32_t[]){4, 5, 6}, 3, 1.0f);
    struct ks_plan plan;
    assert_int_equal(ks_cache_plan(c, UINT64_MAX, &plan), KS_OK);
    ks_test_plan_sane(&p, &plan);
    // demotions 3 | 4 + 1, then promotions 3 | 4 + 1
    assert_int_equal(plan.n, 6);
    uint32_t last_group = 0, promotions = 0;
    for (uint32_t i = 0; i < plan.n; i++) {
        const struct ks_batch *b = plan.batch[i];
        int up = b->dst == KS_L1;
        assert_true(up == (i >= 3)); // every demotion first
        uint32_t g = KS_NONE;
        for (uint32_t k = 0; k < b->n; k++) {
            // a demotion's group is the group of the promotion that takes its page
            uint32_t gk = up ? ks_cache_block_group(c, b->blocks[k]) : KS_NONE;
            if (!up)
                for (uint32_t j = 3; j < plan.n; j++)
                    for (uint32_t q = 0; q < plan.batch[j]->n; q++)
                        if (plan.batch[j]->dst_pages[q] == b->src_pages[k])
                            gk = ks_cache_block_group(c, plan.batch[j]->blocks[q]);
            assert_int_not_equal(gk, KS_NONE);
            if (k == 0)
                g = gk;
            assert_int_equal(gk, g);
        }
        if (up) {
            assert_true(g >= last_group); // group 0's copies before group 1's
            last_group = g;
            promotions += b->n;
            // its `after` vacates exactly its pages
            assert_int_not_equal(b->after, KS_NONE);
            const struct ks_batch *a = NULL;
            for (uint32_t j = 0; j < 3; j++)
                if (plan.batch[j]->id == b->after)
                    a = plan.batch[j];
            assert_non_null(a);
            assert_int_equal(a->n, b->n);
            for (uint32_t k = 0; k < b->n; k++) {
                uint32_t q = 0;
                while (q < a->n && a->src_pages[q] != b->dst_pages[k])
                    q++;
                assert_true(q < a->n);
            }
        }
    }
    assert_int_equal(promotions, 8);
    assert_int_equal(ks_cache_block_group(c, plan.batch[3]->blocks[0]), 0);
    assert_int_equal(plan.batch[3]->n, 3);
    ks_test_confirm_all(c, &plan);
    ks_test_check(c);
    ks_cache_free(c);
}

// L1 and L2 full, two misses from L3: two L1 victims go to L2, which makes
// room by sending two of its own to L3. Compressed lower tiers: 4096, 2048,
// 1024 bytes per block.
static void cascade_and_compressed_bytes(void **state)
{
    (void)state;
    struct ks_cache_params p = ks_test_params(4, 4, 64);
    p.block_bytes[KS_L2] = 2048;
    p.block_bytes[KS_L3] = 1024;
    struct ks_cache *c = ks_test_new(&p);
    uint32_t r = ks_test_req(c);
    uint32_t placed[KS_TIERS] = {0};
    assert_int_equal(ks_cache_req_grow(c, r, 16, KS_L1, placed), KS_OK); // 0..3 L1, 4..7 L2, 8..15 L3
    assert_int_equal(placed[KS_L3], 8);
    ks_cache_step(c, 5);
    ks_test_access(c, r, 0, (uint32_t[]){8, 9}, 2, 1.0f);
    struct ks_plan plan;
    assert_int_equal(ks_cache_plan(c, UINT64_MAX, &plan), KS_OK);
    ks_test_plan_sane(&p, &plan);
    assert_int_equal(plan.n, 3);
    struct ks_batch *b0 = plan.batch[0], *b1 = plan.batch[1], *b2 = plan.batch[2];
    assert_int_equal(b0->src, KS_L2);
    assert_int_equal(b0->dst, KS_L3);
    assert_int_equal(b0->n, 2);
    assert_int_equal(b0->bytes, 2 * 1024);
    assert_int_equal(b0->klass, KS_CLASS_EVICT);
    assert_int_equal(b1->src, KS_L1);
    assert_int_equal(b1->dst, KS_L2);
    assert_int_equal(b1->n, 2);
    assert_int_equal(b1->bytes, 2 * 2048);
    assert_int_equal(b1->after, b0->id);
    assert_int_equal(b1->klass, KS_CLASS_EVICT);
    assert_int_equal(b2->src, KS_L3);
    assert_int_equal(b2->dst, KS_L1);
    assert_int_equal(b2->n, 2);
    assert_int_equal(b2->bytes, 2 * 1024);
    assert_int_equal(b2->after, b1->id);
    assert_int_equal(b2->klass, KS_CLASS_MISS);
    assert_int_equal(plan.bytes, 2048 + 4096 + 2048);
    assert_true(ks_test_in_batch(b2, ks_test_id(c, r, 0, 8)) >= 0);
    assert_true(ks_test_in_batch(b2, ks_test_id(c, r, 0, 9)) >= 0);
    // the victims come from the full tiers
    for (uint32_t i = 0; i < 2; i++) {
        uint32_t j = 0;
        while (j < 16 && ks_test_id(c, r, 0, j) != b1->blocks[i])
            j++;
        assert_true(j < 4);
        j = 0;
        while (j < 16 && ks_test_id(c, r, 0, j) != b0->blocks[i])
            j++;
        assert_true(j >= 4 && j < 8);
    }
    ks_test_check(c);
    // out of order: refused, nothing changes
    assert_int_equal(ks_cache_confirm(c, b2), KS_ESTATE);
    assert_int_equal(ks_cache_confirm(c, b1), KS_ESTATE);
    assert_int_equal(ks_cache_inflight_batches(c), 3);
    ks_test_check(c);
    assert_int_equal(ks_cache_confirm(c, b0), KS_OK);
    ks_test_check(c);
    assert_int_equal(ks_cache_confirm(c, b2), KS_ESTATE);
    assert_int_equal(ks_cache_confirm(c, b1), KS_OK);
    ks_test_check(c);
    assert_int_equal(ks_cache_confirm(c, b2), KS_OK);
    ks_test_check(c);
    const struct ks_cache_stats *st = ks_cache_stats(c);
    assert_int_equal(st->evictions[KS_L1], 2);
    assert_int_equal(st->evictions[KS_L2], 2);
    assert_int_equal(st->migrations[KS_L2][KS_L3], 2);
    assert_int_equal(st->migrations[KS_L1][KS_L2], 2);
    assert_int_equal(st->migrations[KS_L3][KS_L1], 2);
    assert_int_equal(st->mig_bytes[KS_L2][KS_L3], 2 * 1024);
    assert_int_equal(st->mig_bytes[KS_L1][KS_L2], 2 * 2048);
    assert_int_equal(st->mig_bytes[KS_L3][KS_L1], 2 * 1024);
    assert_int_equal(st->batches, 3);
    assert_int_equal(ks_test_tier(c, r, 0, 8), KS_L1);
    assert_int_equal(ks_test_tier(c, r, 0, 9), KS_L1);
    uint32_t in[KS_TIERS] = {0};
    for (uint32_t j = 0; j < 16; j++)
        in[ks_test_tier(c, r, 0, j)]++;
    assert_int_equal(in[KS_L1], 4);
    assert_int_equal(in[KS_L2], 4);
    assert_int_equal(in[KS_L3], 8);
    assert_int_equal(ks_test_used(c, KS_L1), 4);
    assert_int_equal(ks_test_used(c, KS_L2), 4);
    assert_int_equal(ks_test_used(c, KS_L3), 8);
    struct ks_tier_view v;
    ks_cache_tier_view(c, KS_L2, &v);
    assert_int_equal(v.mig_in, 2);
    assert_int_equal(v.mig_out, 2);
    ks_test_check(c);
    ks_cache_free(c);
}

// Prefetch bytes are counted at the compressed size too.
static void budget_in_compressed_bytes(void **state)
{
    (void)state;
    struct ks_cache_params p = ks_test_params(32, 0, 64);
    p.block_bytes[KS_L3] = 1024;
    p.prefetch_window = 4;
    struct ks_cache *c = ks_test_new(&p);
    uint32_t r = ks_test_req(c);
    ks_test_grow(c, r, 1, KS_L1);
    ks_test_grow(c, r, 8, KS_L3);
    ks_cache_step(c, 1);
    ks_test_access1(c, r, 0, 0, 1.0f); // NEIGHBOR 1..4 from L3
    struct ks_plan plan;
    assert_int_equal(ks_cache_plan(c, 3 * 1024, &plan), KS_OK); // less than one 4096-byte block
    ks_test_plan_sane(&p, &plan);
    assert_int_equal(plan.n, 1);
    assert_int_equal(plan.batch[0]->n, 3);
    assert_int_equal(plan.batch[0]->bytes, 3 * 1024);
    assert_int_equal(plan.batch[0]->src, KS_L3);
    ks_test_confirm_all(c, &plan);
    assert_int_equal(ks_cache_stats(c)->mig_bytes[KS_L3][KS_L1], 3 * 1024);
    ks_test_check(c);
    ks_cache_free(c);
}

// A needs 200 blocks cold, B 4, in the same step. Requests take turns within
// a class: the k-th miss of each before anyone's (k+1)-th, so the first 8
// blocks planned are A's and B's first 4, pairwise, and B is served entirely
// by the first batch instead of waiting behind A's burst.
static void fairness(void **state)
{
    (void)state;
    struct ks_cache_params p = ks_test_params(256, 512, 0);
    assert_int_equal(p.migration_batch, 32);
    struct ks_cache *c = ks_test_new(&p);
    uint32_t a = ks_test_req(c), b = ks_test_req(c);
    ks_test_grow(c, a, 200, KS_L2);
    ks_test_grow(c, b, 4, KS_L2);
    ks_cache_step(c, 1);
    struct ks_access acc[200];
    for (uint32_t j = 0; j < 200; j++)
        acc[j] = (struct ks_access){.block = j, .mass = 1.0f, .next = KS_NONE};
    assert_int_equal(ks_cache_access(c, a, 0, acc, 200, NULL, NULL), KS_OK);
    assert_int_equal(ks_cache_access(c, b, 0, acc, 4, NULL, NULL), KS_OK);
    struct ks_plan plan;
    assert_int_equal(ks_cache_plan(c, UINT64_MAX, &plan), KS_OK);
    ks_test_plan_sane(&p, &plan);
    assert_int_equal(plan.n, 7); // 6 * 32 + 12
    uint32_t total = 0;
    for (uint32_t i = 0; i < plan.n; i++)
        total += plan.batch[i]->n;
    assert_int_equal(total, 204);
    const struct ks_batch *first = plan.batch[0];
    assert_int_equal(first->n, 32);
    for (uint32_t k = 0; k < 4; k++) {
        uint32_t ak = ks_test_id(c, a, 0, k), bk = ks_test_id(c, b, 0, k);
        uint32_t x = first->blocks[2 * k], y = first->blocks[2 * k + 1];
        if (!((x == ak && y == bk) || (x == bk && y == ak)))
            fail_msg("turn %u: planned %u, %u; expected a's %u and b's %u", k, x, y, ak, bk);
    }
    for (uint32_t i = 1; i < plan.n; i++)
        for (uint32_t k = 0; k < 4; k++)
            assert_int_equal(ks_test_in_batch(plan.batch[i], ks_test_id(c, b, 0, k)), -1);
    ks_test_confirm_all(c, &plan);
    for (uint32_t k = 0; k < 4; k++)
        assert_int_equal(ks_test_tier(c, b, 0, k), KS_L1);
    ks_test_check(c);
    ks_cache_free(c);
}

// The same rule with few candidates and small batches: A misses 20, B 3;
// the first six blocks planned are A0 B0, A1 B1, A2 B2 (pairwise in either
// order), which puts all of B in the first two batches of 4.
static void fairness_small(void **state)
{
    (void)state;
    struct ks_cache_params p = ks_test_params(64, 64, 0);
    p.migration_batch = 4;
    struct ks_cache *c = ks_test_new(&p);
    uint32_t a = ks_test_req(c), b = ks_test_req(c);
    ks_test_grow(c, a, 20, KS_L2);
    ks_test_grow(c, b, 3, KS_L2);
    ks_cache_step(c, 1);
    uint32_t blocks[20];
    for (uint32_t j = 0; j < 20; j++)
        blocks[j] = j;
    ks_test_access(c, a, 0, blocks, 20, 1.0f);
    ks_test_access(c, b, 0, blocks, 3, 1.0f);
    struct ks_plan plan;
    assert_int_equal(ks_cache_plan(c, UINT64_MAX, &plan), KS_OK);
    ks_test_plan_sane(&p, &plan);
    assert_int_equal(plan.n, 6); // 23 blocks in batches of 4
    uint32_t order[8];
    for (uint32_t i = 0; i < 8; i++)
        order[i] = plan.batch[i / 4]->blocks[i % 4];
    for (uint32_t k = 0; k < 3; k++) {
        uint32_t ak = ks_test_id(c, a, 0, k), bk = ks_test_id(c, b, 0, k);
        uint32_t x = order[2 * k], y = order[2 * k + 1];
        if (!((x == ak && y == bk) || (x == bk && y == ak)))
            fail_msg("turn %u: planned %u, %u; expected a's %u and b's %u", k, x, y, ak, bk);
    }
    ks_test_confirm_all(c, &plan);
    ks_test_check(c);
    ks_cache_free(c);
}

static void snapshot(const struct ks_cache *c, uint32_t r, uint32_t n, struct ks_loc *out)
{
    for (uint32_t j = 0; j < n; j++)
        out[j] = ks_test_loc(c, r, 0, j);
}

static void expect_same(const struct ks_cache *c, uint32_t r, uint32_t n, const struct ks_loc *before)
{
    for (uint32_t j = 0; j < n; j++) {
        struct ks_loc l = ks_test_loc(c, r, 0, j);
        assert_int_equal(l.id, before[j].id);
        assert_int_equal(l.tier, before[j].tier);
        assert_int_equal(l.page, before[j].page);
        assert_int_equal(l.gen, before[j].gen);
        assert_int_equal(l.state, KS_BLK_RESIDENT);
    }
}

// A miss that needs a victim; both batches aborted, dependent first.
static void abort_restores(void **state)
{
    (void)state;
    struct ks_cache_params p = ks_test_params(4, 16, 0);
    struct ks_cache *c = ks_test_new(&p);
    uint32_t r = ks_test_req(c);
    ks_test_grow(c, r, 8, KS_L1); // 0..3 L1, 4..7 L2
    struct ks_loc before[8];
    snapshot(c, r, 8, before);
    ks_cache_step(c, 10);
    ks_test_access1(c, r, 0, 4, 1.0f);
    struct ks_plan plan;
    assert_int_equal(ks_cache_plan(c, UINT64_MAX, &plan), KS_OK);
    ks_test_plan_sane(&p, &plan);
    assert_int_equal(plan.n, 2);
    struct ks_batch *d = plan.batch[0], *up = plan.batch[1];
    assert_int_equal(d->src, KS_L1);
    assert_int_equal(d->dst, KS_L2);
    assert_int_equal(up->after, d->id);
    assert_int_equal(ks_test_used(c, KS_L2), 5); // the victim's page there is taken
    ks_test_check(c);
    assert_int_equal(ks_cache_abort(c, d), KS_ESTATE); // `up` depends on it
    assert_int_equal(ks_cache_abort(c, up), KS_OK);
    ks_test_check(c);
    assert_int_equal(ks_cache_abort(c, d), KS_OK);
    ks_test_check(c);
    expect_same(c, r, 8, before);
    assert_int_equal(ks_test_used(c, KS_L1), 4);
    assert_int_equal(ks_test_used(c, KS_L2), 4);
    assert_int_equal(ks_cache_inflight_batches(c), 0);
    const struct ks_cache_stats *st = ks_cache_stats(c);
    assert_int_equal(st->aborted, 2);
    assert_int_equal(st->batches, 0);
    assert_int_equal(st->migrations[KS_L1][KS_L2] + st->migrations[KS_L2][KS_L1], 0);
    // the miss can be planned again
    ks_cache_step(c, 11);
    ks_test_access1(c, r, 0, 4, 1.0f);
    assert_int_equal(ks_test_plan_confirm(c, &p, UINT64_MAX), 2);
    assert_int_equal(ks_test_tier(c, r, 0, 4), KS_L1);
    ks_test_check(c);
    ks_cache_free(c);
}

// The incoming batch fails, the victim's lands: the victim's L1 page is
// simply freed.
static void abort_incoming_confirm_victim(void **state)
{
    (void)state;
    struct ks_cache_params p = ks_test_params(4, 16, 0);
    struct ks_cache *c = ks_test_new(&p);
    uint32_t r = ks_test_req(c);
    ks_test_grow(c, r, 8, KS_L1);
    struct ks_loc before[8];
    snapshot(c, r, 8, before);
    ks_cache_step(c, 10);
    ks_test_access1(c, r, 0, 4, 1.0f);
    struct ks_plan plan;
    assert_int_equal(ks_cache_plan(c, UINT64_MAX, &plan), KS_OK);
    assert_int_equal(plan.n, 2);
    struct ks_batch *d = plan.batch[0], *up = plan.batch[1];
    uint32_t victim = d->blocks[0];
    assert_int_equal(ks_cache_abort(c, up), KS_OK);
    ks_test_check(c);
    assert_int_equal(ks_cache_confirm(c, d), KS_OK);
    ks_test_check(c);
    assert_int_equal(ks_test_used(c, KS_L1), 3);
    assert_int_equal(ks_test_used(c, KS_L2), 5);
    for (uint32_t j = 0; j < 8; j++) {
        struct ks_loc l = ks_test_loc(c, r, 0, j);
        if (l.id == victim) {
            assert_int_equal(l.tier, KS_L2);
            assert_int_equal(l.gen, before[j].gen + 1);
        } else {
            assert_int_equal(l.tier, before[j].tier);
            assert_int_equal(l.page, before[j].page);
            assert_int_equal(l.state, KS_BLK_RESIDENT);
        }
    }
    ks_cache_free(c);
}

// Without victims: an aborted batch frees its destination pages.
static void abort_plain(void **state)
{
    (void)state;
    struct ks_cache_params p = ks_test_params(8, 16, 0);
    struct ks_cache *c = ks_test_new(&p);
    uint32_t r = ks_test_req(c);
    ks_test_grow(c, r, 2, KS_L1);
    ks_test_grow(c, r, 6, KS_L2);
    struct ks_loc before[8];
    snapshot(c, r, 8, before);
    ks_cache_step(c, 1);
    ks_test_access(c, r, 0, (uint32_t[]){2, 3, 4}, 3, 1.0f);
    struct ks_plan plan;
    assert_int_equal(ks_cache_plan(c, UINT64_MAX, &plan), KS_OK);
    assert_int_equal(plan.n, 1);
    assert_int_equal(ks_test_used(c, KS_L1), 5);
    assert_int_equal(ks_test_loc(c, r, 0, 3).state, KS_BLK_MIG_UP);
    assert_int_equal(ks_cache_abort(c, plan.batch[0]), KS_OK);
    assert_int_equal(ks_test_used(c, KS_L1), 2);
    assert_int_equal(ks_test_used(c, KS_L2), 6);
    expect_same(c, r, 8, before);
    ks_test_check(c);
    ks_cache_free(c);
}

// Deeper cascade with small batches: every `after` is earlier in the plan and
// is enforced; misses that find no victim stay pending and count as
// unplanned when the step ends.
static void after_order_many_batches(void **state)
{
    (void)state;
    struct ks_cache_params p = ks_test_params(8, 8, 64);
    p.migration_batch = 3;
    struct ks_cache *c = ks_test_new(&p);
    uint32_t r = ks_test_req(c);
    ks_test_grow(c, r, 36, KS_L1); // 0..7 L1, 8..15 L2, 16..35 L3
    ks_cache_step(c, 5);
    ks_test_access(c, r, 0, (uint32_t[]){16, 17, 18, 19, 20, 21, 22, 23, 24, 25}, 10, 1.0f);
    struct ks_plan plan;
    assert_int_equal(ks_cache_plan(c, UINT64_MAX, &plan), KS_OK);
    ks_test_plan_sane(&p, &plan);
    // 8 moves for each of L2->L3, L1->L2, L3->L1, at most 3 per batch
    uint32_t moved[KS_TIERS][KS_TIERS] = {{0}};
    for (uint32_t i = 0; i < plan.n; i++)
        moved[plan.batch[i]->src][plan.batch[i]->dst] += plan.batch[i]->n;
    assert_int_equal(moved[KS_L2][KS_L3], 8);
    assert_int_equal(moved[KS_L1][KS_L2], 8);
    assert_int_equal(moved[KS_L3][KS_L1], 8);
    assert_true(plan.n >= 9);
    // every dependent batch is refused while its `after` is pending
    uint32_t refused = 0;
    for (uint32_t i = 0; i < plan.n; i++)
        if (plan.batch[i]->after != KS_NONE) {
            assert_int_equal(ks_cache_confirm(c, plan.batch[i]), KS_ESTATE);
            refused++;
        }
    assert_true(refused >= 6);
    ks_test_check(c);
    ks_test_confirm_all(c, &plan);
    ks_test_check(c);
    uint32_t in_l1 = 0;
    for (uint32_t j = 16; j < 26; j++)
        in_l1 += ks_test_tier(c, r, 0, j) == KS_L1;
    assert_int_equal(in_l1, 8);
    // the two left have no victim this step: every L1 block arrived in it
    assert_int_equal(ks_cache_plan(c, UINT64_MAX, &plan), KS_OK);
    assert_int_equal(plan.n, 0);
    ks_cache_step(c, 6);
    assert_int_equal(ks_cache_stats(c)->unplanned, 2);
    ks_test_check(c);
    ks_cache_free(c);
}

// A miss with no page stays pending and a later plan in the same step
// places it once a page is free.
static void pending_same_step(void **state)
{
    (void)state;
    struct ks_cache_params p = ks_test_params(4, 16, 0);
    struct ks_cache *c = ks_test_new(&p);
    uint32_t a = ks_test_req(c), b = ks_test_req(c);
    ks_test_grow(c, a, 3, KS_L1);
    ks_test_grow(c, b, 1, KS_L1);
    ks_test_grow(c, a, 2, KS_L2); // a: 0..2 L1, 3..4 L2
    ks_cache_step(c, 5);
    ks_test_access(c, a, 0, (uint32_t[]){0, 1, 2, 3}, 4, 1.0f);
    ks_test_access1(c, b, 0, 0, 1.0f);
    struct ks_plan plan;
    assert_int_equal(ks_cache_plan(c, UINT64_MAX, &plan), KS_OK);
    assert_int_equal(plan.n, 0); // no free page, every L1 block used this step
    ks_test_check(c);
    assert_int_equal(ks_cache_req_free(c, b), KS_OK);
    assert_int_equal(ks_cache_plan(c, UINT64_MAX, &plan), KS_OK);
    ks_test_plan_sane(&p, &plan);
    assert_int_equal(plan.n, 1);
    assert_int_equal(plan.batch[0]->n, 1);
    assert_int_equal(plan.batch[0]->after, KS_NONE);
    assert_int_equal(plan.batch[0]->blocks[0], ks_test_id(c, a, 0, 3));
    ks_test_confirm_all(c, &plan);
    ks_cache_step(c, 6);
    assert_int_equal(ks_cache_stats(c)->unplanned, 0);
    assert_int_equal(ks_test_tier(c, a, 0, 3), KS_L1);
    ks_test_check(c);
    ks_cache_free(c);
}

// Every tier full: a victim that cannot be placed below stays, and so does
// the miss waiting for its page.
static void no_room_anywhere(void **state)
{
    (void)state;
    struct ks_cache_params p = ks_test_params(2, 2, 2);
    struct ks_cache *c = ks_test_new(&p);
    uint32_t r = ks_test_req(c);
    ks_test_grow(c, r, 6, KS_L1);
    struct ks_loc before[6];
    snapshot(c, r, 6, before);
    ks_cache_step(c, 5);
    ks_test_access1(c, r, 0, 5, 1.0f);
    struct ks_plan plan;
    assert_int_equal(ks_cache_plan(c, UINT64_MAX, &plan), KS_OK);
    assert_int_equal(plan.n, 0);
    expect_same(c, r, 6, before);
    assert_int_equal(ks_cache_inflight_batches(c), 0);
    ks_test_check(c);
    ks_cache_free(c);
}

// Misses accessed `ahead` (an earlier selection of the step chose them) go in
// batches of their own, marked early; a block also missed without `ahead`
// in the same step is not early. Five misses into free L1 pages: blocks 0-2
// ahead, 3-4 not; then block 0 again, not ahead.
static void early_misses_apart(void **state)
{
    (void)state;
    struct ks_cache_params p = ks_test_params(32, 64, 0);
    struct ks_cache *c = ks_test_new(&p);
    uint32_t r = ks_test_req(c);
    ks_test_grow(c, r, 8, KS_L2);
    ks_cache_step(c, 1);
    struct ks_access a[5];
    for (uint32_t i = 0; i < 5; i++)
        a[i] = (struct ks_access){.block = i, .mass = 0.2f, .next = KS_NONE, .ahead = i < 3};
    assert_int_equal(ks_cache_access(c, r, 0, a, 5, NULL, NULL), KS_OK);
    a[0].ahead = 0;
    assert_int_equal(ks_cache_access(c, r, 0, a, 1, NULL, NULL), KS_OK);
    struct ks_plan plan;
    assert_int_equal(ks_cache_plan(c, UINT64_MAX, &plan), KS_OK);
    ks_test_plan_sane(&p, &plan);
    assert_int_equal(plan.n, 2);
    uint32_t early = 0, late = 0; // bit j: block j in a batch of that kind
    for (uint32_t i = 0; i < plan.n; i++)
        for (uint32_t k = 0; k < plan.batch[i]->n; k++)
            for (uint32_t j = 0; j < 5; j++)
                if (ks_test_id(c, r, 0, j) == plan.batch[i]->blocks[k])
                    *(plan.batch[i]->early ? &early : &late) |= 1u << j;
    assert_int_equal(early, 0x6); // blocks 1 and 2
    assert_int_equal(late, 0x19); // blocks 0, 3 and 4
    for (uint32_t i = 0; i < plan.n; i++)
        assert_int_equal(ks_cache_confirm(c, plan.batch[i]), KS_OK);
    ks_test_check(c);
    ks_cache_free(c);
}

// A batch handed back is looked for among the cache's own: with hundreds in
// flight, confirmed in an order unlike the plan's (every seventh, wrapping),
// each is found; one confirmed already, a copy of one that lives elsewhere
// and NULL are refused (KS_EINVAL) without changing anything.
static void confirm_finds_its_own(void **state)
{
    (void)state;
    struct ks_cache_params p = ks_test_params(1024, 2048, 0);
    p.migration_batch = 1;
    struct ks_cache *c = ks_test_new(&p);
    uint32_t r = ks_test_req(c);
    enum { N = 250 }; // ks_test_access takes at most 256
    ks_test_grow(c, r, N, KS_L2);
    ks_cache_step(c, 1);
    uint32_t idx[N];
    for (uint32_t j = 0; j < N; j++)
        idx[j] = j;
    ks_test_access(c, r, 0, idx, N, 1.0f);
    struct ks_plan plan;
    assert_int_equal(ks_cache_plan(c, UINT64_MAX, &plan), KS_OK);
    assert_int_equal(plan.n, N);
    struct ks_batch *order[N];
    for (uint32_t i = 0; i < N; i++)
        order[i] = plan.batch[(7u * i) % N]; // 7 and 250 are coprime: each once
    struct ks_batch copy = *order[0];
    assert_int_equal(ks_cache_confirm(c, &copy), KS_EINVAL);
    assert_int_equal(ks_cache_abort(c, &copy), KS_EINVAL);
    assert_int_equal(ks_cache_confirm(c, NULL), KS_EINVAL);
    assert_int_equal(ks_cache_inflight_batches(c), N);
    for (uint32_t i = 0; i < N; i++) {
        assert_int_equal(ks_cache_confirm(c, order[i]), KS_OK);
        assert_int_equal(ks_cache_confirm(c, order[i]), KS_EINVAL); // confirmed: no longer live
        if (i % 50 == 0)
            ks_test_check(c);
    }
    assert_int_equal(ks_cache_inflight_batches(c), 0);
    assert_int_equal(ks_cache_stats(c)->batches, N);
    assert_int_equal(ks_test_used(c, KS_L1), N);
    ks_test_check(c);
    ks_cache_free(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(batches_bounded),
        cmocka_unit_test(batches_layer_by_layer),
        cmocka_unit_test(confirm_finds_its_own),
        cmocka_unit_test(early_misses_apart),
        cmocka_unit_test(cascade_and_compressed_bytes),
        cmocka_unit_test(budget_in_compressed_bytes),
        cmocka_unit_test(fairness),
        cmocka_unit_test(fairness_small),
        cmocka_unit_test(abort_restores),
        cmocka_unit_test(abort_incoming_confirm_victim),
        cmocka_unit_test(abort_plain),
        cmocka_unit_test(after_order_many_batches),
        cmocka_unit_test(pending_same_step),
        cmocka_unit_test(no_room_anywhere),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
