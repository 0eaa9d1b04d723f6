// test_buffer.c - device buffers (cache.h, "Device buffers"): one L1 buffer
// per (request, group), eviction within it, drops that move no bytes.
//
// The core test runs the manager against a reference written here from the
// definition alone: per buffer, a list of at most B blocks; an access hits
// when its block is in the list; a miss enters the list, evicting, when it
// is full, the block with the oldest last use (lru), the oldest arrival
// (fifo) or the farthest next use (belady) among those not used this step.
// Each sequence is accessed once per step and warmed up one block per step,
// so no two candidates ever tie and the reference's choice is the only one.
// Hit by hit and buffer by buffer, both must agree.
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <string.h>

#include "rng.h"
#include "unit_util.h"

enum { R = 3, G = 2, B = 4, N = 12, T = 400, HOT = 5 };

struct ref_buf {
    uint32_t blk[B], last[B], arrive[B];
    uint32_t n;
};

// The step at which sequence (r, g) next reads block j after step t, or KS_NONE.
static uint32_t next_use(const uint8_t seq[T][R][G], uint32_t t, uint32_t r, uint32_t g, uint32_t j)
{
    for (uint32_t u = t + 1; u < T; u++)
        if (seq[u][r][g] == j)
            return u + 1; // steps are numbered from 1
    return KS_NONE;
}

// Reference: block j accessed (or, new, written) at step t in buffer b;
// returns 1 on a hit. A block used at step t is no victim at step t.
static int ref_access(struct ref_buf *b, enum ks_evict_policy pol, uint32_t j, uint32_t t, uint32_t *arrivals,
                      const uint8_t seq[T][R][G], uint32_t r, uint32_t g)
{
    for (uint32_t i = 0; i < b->n; i++)
        if (b->blk[i] == j) {
            b->last[i] = t;
            return 1;
        }
    uint32_t slot = b->n;
    if (b->n == B) {
        slot = B;
        for (uint32_t i = 0; i < B; i++) {
            if (b->last[i] == t)
                continue;
            if (slot == B) {
                slot = i;
                continue;
            }
            int better;
            if (pol == KS_EVICT_LRU)
                better = b->last[i] < b->last[slot];
            else if (pol == KS_EVICT_FIFO)
                better = b->arrive[i] < b->arrive[slot];
            else { // belady: farthest next use; KS_NONE (never) is farthest
                uint32_t ni = next_use(seq, t - 1, r, g, b->blk[i]), ns = next_use(seq, t - 1, r, g, b->blk[slot]);
                better = ni > ns;
            }
            if (better)
                slot = i;
        }
        if (slot == B) // every block used now: the new one goes below
            return 0;
    } else {
        b->n++;
    }
    b->blk[slot] = j;
    b->last[slot] = t;
    b->arrive[slot] = (*arrivals)++;
    return 0;
}

static struct ks_cache_params params(enum ks_evict_policy pol, uint32_t buffers)
{
    struct ks_cache_params p = ks_test_params(buffers * B, 4096, 0);
    p.buffer_blocks = B;
    p.groups = G;
    p.evict = pol;
    p.migration_batch = 64;
    p.debug = 1;
    return p;
}

// The blocks of sequence (r, g) in L1, as a bit set.
static uint32_t l1_set(const struct ks_cache *c, uint32_t req, uint32_t g)
{
    uint32_t set = 0;
    for (uint32_t j = 0; j < ks_cache_req_len(c, req); j++)
        if (ks_test_tier(c, req, g, j) == KS_L1)
            set |= 1u << j;
    return set;
}

static void run_reference(enum ks_evict_policy pol)
{
    static uint8_t seq[T][R][G];
    struct ks_rng rng;
    ks_rng_seed(&rng, 7 + pol);
    for (uint32_t t = 0; t < T; t++)
        for (uint32_t r = 0; r < R; r++)
            for (uint32_t g = 0; g < G; g++) {
                uint32_t j;
                if (t < B) // warm-up: blocks 0..B-1 once each, in order
                    j = t;
                else if (r == 2) // request 2 scans: a miss almost every step
                    j = (t * 5 + g) % N;
                else
                    j = ks_rng_unit(&rng) < 0.7 ? ks_rng_below(&rng, HOT) : ks_rng_below(&rng, N);
                seq[t][r][g] = (uint8_t)j;
            }
    struct ks_cache_params p = params(pol, R * G);
    struct ks_cache *c = ks_test_new(&p);
    uint32_t req[R];
    for (uint32_t r = 0; r < R; r++) {
        req[r] = ks_test_req(c);
        uint32_t placed[KS_TIERS] = {0};
        // the buffer takes blocks 0..B-1; the rest, created in the same step
        // as every block of the full buffer, go to L2
        assert_int_equal(ks_cache_req_grow(c, req[r], N, KS_L1, placed), KS_OK);
        assert_int_equal(placed[KS_L1], B * G);
        assert_int_equal(placed[KS_L2], (N - B) * G);
    }
    assert_int_equal(ks_cache_buffers_free(c), 0);
    struct ref_buf ref[R][G];
    memset(ref, 0, sizeof ref);
    uint32_t arrivals = 0;
    for (uint32_t r = 0; r < R; r++)
        for (uint32_t g = 0; g < G; g++) {
            ref[r][g].n = B;
            for (uint32_t i = 0; i < B; i++) {
                ref[r][g].blk[i] = i;
                ref[r][g].arrive[i] = arrivals++;
                ref[r][g].last[i] = 0;
            }
        }
    uint64_t hits = 0, misses = 0, grown = 0;
    for (uint32_t t = 1; t <= T; t++) {
        assert_int_equal(ks_cache_step(c, t), KS_OK);
        for (uint32_t r = 0; r < R; r++)
            for (uint32_t g = 0; g < G; g++) {
                uint32_t j = seq[t - 1][r][g];
                struct ks_access a = {.block = j, .mass = 1, .next = next_use(seq, t - 1, r, g, j)};
                uint8_t where;
                assert_int_equal(ks_cache_access(c, req[r], g, &a, 1, &where, NULL), KS_OK);
                int hit = ref_access(&ref[r][g], pol, j, t, &arrivals, seq, r, g);
                if (hit != (where == KS_AT_L1))
                    fail_msg("step %u request %u group %u block %u: %s, the reference says %s", t, r, g, j,
                             where == KS_AT_L1 ? "hit" : "miss", hit ? "hit" : "miss");
                hits += hit;
                misses += !hit;
            }
        struct ks_plan plan;
        assert_int_equal(ks_cache_plan(c, UINT64_MAX, &plan), KS_OK);
        ks_test_plan_sane(&p, &plan);
        for (uint32_t i = 0; i < plan.n; i++) { // one group per batch (a gather per layer), from the host
            const struct ks_batch *b = plan.batch[i];
            assert_int_equal(b->src, KS_L2);
            assert_int_equal(b->dst, KS_L1);
            for (uint32_t k = 1; k < b->n; k++)
                assert_int_equal(ks_cache_block_group(c, b->blocks[k]), ks_cache_block_group(c, b->blocks[0]));
        }
        ks_test_confirm_all(c, &plan);
        if (t % 40 == 0) { // request 0 writes a new block in every group: it enters its buffer
            uint32_t j = ks_cache_req_len(c, req[0]);
            ks_test_grow(c, req[0], 1, KS_L1);
            for (uint32_t g = 0; g < G; g++) {
                assert_int_equal(ks_test_tier(c, req[0], g, j), KS_L1);
                ref_access(&ref[0][g], pol, j, t, &arrivals, seq, 0, g);
                grown++;
            }
        }
        if (pol == KS_EVICT_BELADY) // ties among blocks never used again: only hits are determined
            continue;
        for (uint32_t r = 0; r < R; r++)
            for (uint32_t g = 0; g < G; g++) {
                uint32_t want = 0;
                for (uint32_t i = 0; i < ref[r][g].n; i++)
                    want |= 1u << ref[r][g].blk[i];
                if (l1_set(c, req[r], g) != want)
                    fail_msg("step %u request %u group %u: L1 holds %#x, the reference %#x", t, r, g,
                             l1_set(c, req[r], g), want);
            }
    }
    const struct ks_cache_stats *st = ks_cache_stats(c);
    assert_int_equal(st->found[KS_L1], hits);
    assert_true(misses > T); // the scanning request alone misses most steps
    assert_true(hits > T);
    // every miss and new block entered a full buffer: one drop each, and drops move no bytes
    assert_int_equal(st->dropped, misses + grown);
    assert_int_equal(st->evictions[KS_L1], misses + grown);
    assert_int_equal(st->migrations[KS_L1][KS_L2], 0);
    assert_int_equal(st->mig_bytes[KS_L1][KS_L2], 0);
    assert_int_equal(st->migrations[KS_L2][KS_L1], misses);
    assert_int_equal(st->mig_bytes[KS_L2][KS_L1], misses * p.block_bytes[KS_L2]);
    for (uint32_t r = 0; r < R; r++)
        assert_int_equal(ks_cache_req_free(c, req[r]), KS_OK);
    assert_int_equal(ks_cache_buffers_free(c), R * G);
    ks_test_check(c);
    ks_cache_free(c);
}

static void reference_lru(void **state)
{
    (void)state;
    run_reference(KS_EVICT_LRU);
}

static void reference_fifo(void **state)
{
    (void)state;
    run_reference(KS_EVICT_FIFO);
}

static void reference_belady(void **state)
{
    (void)state;
    run_reference(KS_EVICT_BELADY);
}

// A new block in a full buffer evicts one of its own, never one used this
// step, never another request's; the victim drops to L2.
static void grow_evicts_own(void **state)
{
    (void)state;
    struct ks_cache_params p = params(KS_EVICT_LRU, 2);
    p.groups = 1;
    struct ks_cache *c = ks_test_new(&p);
    uint32_t a = ks_test_req(c), b = ks_test_req(c);
    for (uint32_t t = 1; t <= B; t++) { // one block per step: distinct last uses
        assert_int_equal(ks_cache_step(c, t), KS_OK);
        ks_test_grow(c, a, 1, KS_L1);
        ks_test_grow(c, b, 1, KS_L1);
    }
    assert_int_equal(ks_cache_step(c, B + 1), KS_OK);
    ks_test_access1(c, a, 0, 0, 1); // block 0 is the oldest, but used now
    uint32_t placed[KS_TIERS] = {0};
    assert_int_equal(ks_cache_req_grow(c, a, 1, KS_L1, placed), KS_OK);
    assert_int_equal(placed[KS_L1], 1);
    assert_int_equal(ks_test_tier(c, a, 0, B), KS_L1);
    assert_int_equal(ks_test_tier(c, a, 0, 0), KS_L1);
    assert_int_equal(ks_test_tier(c, a, 0, 1), KS_L2); // the least recently used of the rest
    for (uint32_t j = 0; j < B; j++)
        assert_int_equal(ks_test_tier(c, b, 0, j), KS_L1);
    assert_int_equal(ks_cache_stats(c)->dropped, 1);
    ks_test_check(c);
    ks_cache_free(c);
}

// A batch says how many of its blocks its busiest request has (most_per_req:
// a gather kernel copies each request's blocks with its own thread block).
// Requests a and b fill their buffers (blocks 0..B-1 of one group), the rest
// of their N blocks in L2; a misses 1 block, b misses 3: one batch of 4
// blocks, 3 of them b's. The next step only b misses, 2 blocks.
static void batch_most_per_req(void **state)
{
    (void)state;
    struct ks_cache_params p = params(KS_EVICT_LRU, 2);
    p.groups = 1;
    p.count_per_req = 1;
    struct ks_cache *c = ks_test_new(&p);
    uint32_t a = ks_test_req(c), b = ks_test_req(c);
    uint32_t placed[KS_TIERS] = {0};
    assert_int_equal(ks_cache_req_grow(c, a, N, KS_L1, placed), KS_OK);
    assert_int_equal(ks_cache_req_grow(c, b, N, KS_L1, placed), KS_OK);
    assert_int_equal(placed[KS_L1], 2 * B);
    assert_int_equal(ks_cache_step(c, 1), KS_OK);
    ks_test_access1(c, a, 0, B, 1);
    for (uint32_t j = B; j < B + 3; j++)
        ks_test_access1(c, b, 0, j, 1);
    struct ks_plan plan;
    assert_int_equal(ks_cache_plan(c, UINT64_MAX, &plan), KS_OK);
    assert_int_equal(plan.n, 1);
    assert_int_equal(plan.batch[0]->n, 4);
    assert_int_equal(plan.batch[0]->most_per_req, 3);
    ks_test_confirm_all(c, &plan);
    assert_int_equal(ks_cache_step(c, 2), KS_OK);
    ks_test_access1(c, b, 0, B + 3, 1);
    ks_test_access1(c, b, 0, B + 4, 1);
    ks_test_access1(c, a, 0, B, 1); // a hit: nothing to move
    assert_int_equal(ks_cache_plan(c, UINT64_MAX, &plan), KS_OK);
    assert_int_equal(plan.n, 1);
    assert_int_equal(plan.batch[0]->n, 2);
    assert_int_equal(plan.batch[0]->most_per_req, 2);
    ks_test_confirm_all(c, &plan);
    ks_test_check(c);
    ks_cache_free(c);
}

// Buffers run out: a request needs one per group; a request's buffers come
// back when it and its blocks are gone, a block in flight holding its
// buffer until its batch is confirmed.
static void buffers_run_out(void **state)
{
    (void)state;
    struct ks_cache_params p = params(KS_EVICT_LRU, 4);
    struct ks_cache *c = ks_test_new(&p);
    uint32_t a = ks_test_req(c), b = ks_test_req(c), r;
    assert_int_equal(ks_cache_buffers_free(c), 0);
    assert_int_equal(ks_cache_req_new(c, &r), KS_ENOSPC);
    ks_test_grow(c, a, B + 1, KS_L1); // block B waits in L2
    assert_int_equal(ks_cache_step(c, 1), KS_OK);
    ks_test_access1(c, a, 0, B, 1);
    struct ks_plan plan;
    assert_int_equal(ks_cache_plan(c, UINT64_MAX, &plan), KS_OK);
    assert_int_equal(plan.n, 1);
    assert_int_equal(ks_cache_req_free(c, a), KS_OK); // its block B is still on its way in
    ks_test_check(c);
    assert_int_equal(ks_cache_buffers_free(c), 1); // group 1's buffer was empty
    assert_int_equal(ks_cache_req_new(c, &r), KS_ENOSPC);
    assert_int_equal(ks_cache_confirm(c, plan.batch[0]), KS_OK);
    assert_int_equal(ks_cache_buffers_free(c), 2);
    ks_test_check(c);
    assert_int_equal(ks_cache_req_new(c, &r), KS_OK);
    assert_int_equal(ks_cache_req_share(c, r, b, 0), KS_EINVAL); // no shared prefixes
    ks_test_check(c);
    ks_cache_free(c);
}

// Random eviction picks uniformly among the blocks not used this step: with
// block 0 used every step and one block coming in, the victim is one of the
// other B - 1 blocks in L1; ranked by block id, each rank is hit 1/(B - 1) of
// the time (3000 trials: 1000 each, standard deviation about 26).
static void random_uniform(void **state)
{
    (void)state;
    struct ks_cache_params p = params(KS_EVICT_RANDOM, 1);
    p.groups = 1;
    p.debug = 0;
    struct ks_cache *c = ks_test_new(&p);
    uint32_t a = ks_test_req(c);
    ks_test_grow(c, a, 64, KS_L1); // blocks 0..B-1 in L1
    uint32_t count[B - 1] = {0};
    enum { TRIALS = 3000 };
    for (uint32_t t = 1; t <= TRIALS; t++) {
        assert_int_equal(ks_cache_step(c, t), KS_OK);
        uint32_t in[B - 1], n = 0, out = KS_NONE;
        for (uint32_t j = 1; j < 64; j++) {
            if (ks_test_tier(c, a, 0, j) == KS_L1)
                in[n++] = j;
            else if (out == KS_NONE && j % 7 == t % 7)
                out = j;
        }
        assert_int_equal(n, B - 1);
        assert_int_not_equal(out, KS_NONE);
        uint32_t acc[2] = {0, out};
        ks_test_access(c, a, 0, acc, 2, 1);
        assert_int_equal(ks_test_plan_confirm(c, &p, UINT64_MAX), 1);
        assert_int_equal(ks_test_tier(c, a, 0, 0), KS_L1);
        assert_int_equal(ks_test_tier(c, a, 0, out), KS_L1);
        uint32_t gone = 0;
        for (uint32_t i = 0; i < n; i++)
            if (ks_test_tier(c, a, 0, in[i]) != KS_L1) {
                count[i]++;
                gone++;
            }
        assert_int_equal(gone, 1);
    }
    for (uint32_t i = 0; i < B - 1; i++)
        if (count[i] < TRIALS / (B - 1) - 110 || count[i] > TRIALS / (B - 1) + 110)
            fail_msg("rank %u evicted %u times in %u trials, expected about %u", i, count[i], TRIALS, TRIALS / (B - 1));
    ks_test_check(c);
    ks_cache_free(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(reference_lru),   cmocka_unit_test(reference_fifo), cmocka_unit_test(reference_belady),
        cmocka_unit_test(grow_evicts_own), cmocka_unit_test(batch_most_per_req), cmocka_unit_test(buffers_run_out), cmocka_unit_test(random_uniform),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
