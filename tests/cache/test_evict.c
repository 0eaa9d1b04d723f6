// test_evict.c - victim choice of every eviction policy, exact scan
// (evict_samples = 0), on hand-made scenarios whose victim is known: L1 holds
// blocks 0..3 of one request, L2 holds blocks 4..7; a miss on an L2 block
// needs one L1 page, and the victim is demoted to L2.
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>

#include "cache_impl.h" // KS_EVICT_POOL, the tiers' pools
#include "unit_util.h"

struct scen {
    struct ks_cache_params p;
    struct ks_cache *c;
    uint32_t r;
};

static void scen_init(struct scen *s, enum ks_evict_policy pol, ks_evict_score_fn fn, void *ud)
{
    s->p = ks_test_params(4, 16, 0);
    s->p.evict = pol;
    s->p.evict_fn = fn;
    s->p.evict_ud = ud;
    s->c = ks_test_new(&s->p);
    s->r = ks_test_req(s->c);
    uint32_t placed[KS_TIERS] = {0};
    assert_int_equal(ks_cache_req_grow(s->c, s->r, 8, KS_L1, placed), KS_OK);
    assert_int_equal(placed[KS_L1], 4);
    assert_int_equal(placed[KS_L2], 4);
}

static void scen_fini(struct scen *s)
{
    ks_test_check(s->c);
    ks_cache_free(s->c);
}

static void acc(struct scen *s, uint32_t j, float mass, uint32_t next)
{
    struct ks_access a = {.block = j, .mass = mass, .next = next};
    assert_int_equal(ks_cache_access(s->c, s->r, 0, &a, 1, NULL, NULL), KS_OK);
}

static void step(struct scen *s, uint32_t t)
{
    assert_int_equal(ks_cache_step(s->c, t), KS_OK);
}

// Step t: the blocks miss[0..n) are accessed (mass 1, next use `next`), the
// plan is confirmed. They must land in L1 and exactly the blocks in
// victims[0..n) must go to L2; everything else stays.
static void miss_expect(struct scen *s, uint32_t t, const uint32_t *miss, const uint32_t *victims, uint32_t n,
                        uint32_t next)
{
    unsigned before[8];
    for (uint32_t j = 0; j < 8; j++)
        before[j] = ks_test_tier(s->c, s->r, 0, j);
    uint64_t ev = ks_cache_stats(s->c)->evictions[KS_L1];
    step(s, t);
    for (uint32_t i = 0; i < n; i++)
        acc(s, miss[i], 1.0f, next);
    assert_int_equal(ks_test_plan_confirm(s->c, &s->p, UINT64_MAX), 2 * n);
    assert_int_equal(ks_cache_stats(s->c)->evictions[KS_L1], ev + n);
    for (uint32_t j = 0; j < 8; j++) {
        unsigned want = before[j];
        for (uint32_t i = 0; i < n; i++) {
            if (miss[i] == j)
                want = KS_L1;
            if (victims[i] == j)
                want = KS_L2;
        }
        if (ks_test_tier(s->c, s->r, 0, j) != want)
            fail_msg("step %u: block %u is in L%u, expected L%u", t, j, ks_test_tier(s->c, s->r, 0, j) + 1, want + 1);
    }
}

static void lru(void **state)
{
    (void)state;
    struct scen s;
    scen_init(&s, KS_EVICT_LRU, NULL, NULL);
    // last access: block 2 at 1, 0 at 2, 3 at 3, 1 at 4
    const uint32_t order[4] = {2, 0, 3, 1};
    for (uint32_t t = 1; t <= 4; t++) {
        step(&s, t);
        acc(&s, order[t - 1], 1.0f, KS_NONE);
    }
    miss_expect(&s, 10, (uint32_t[]){4}, (uint32_t[]){2}, 1, KS_NONE);
    // step 11: block 0 (the oldest now) is accessed too, so 3 goes
    step(&s, 11);
    acc(&s, 0, 1.0f, KS_NONE);
    acc(&s, 5, 1.0f, KS_NONE);
    assert_int_equal(ks_test_plan_confirm(s.c, &s.p, UINT64_MAX), 2);
    assert_int_equal(ks_test_tier(s.c, s.r, 0, 3), KS_L2);
    assert_int_equal(ks_test_tier(s.c, s.r, 0, 0), KS_L1);
    assert_int_equal(ks_test_tier(s.c, s.r, 0, 5), KS_L1);
    // L1 = {0 at 11, 1 at 4, 4 at 10, 5 at 11}: two misses take 1 and 4
    miss_expect(&s, 12, (uint32_t[]){6, 7}, (uint32_t[]){1, 4}, 2, KS_NONE);
    assert_int_equal(ks_cache_stats(s.c)->evictions[KS_L1], 4);
    assert_int_equal(ks_cache_stats(s.c)->migrations[KS_L1][KS_L2], 4);
    assert_int_equal(ks_cache_stats(s.c)->migrations[KS_L2][KS_L1], 4);
    scen_fini(&s);
}

static void lfu(void **state)
{
    (void)state;
    struct scen s;
    scen_init(&s, KS_EVICT_LFU, NULL, NULL);
    // counts (last): 0: 2 (5), 1: 2 (3), 2: 3 (1), 3: 3 (2). LRU would take 2.
    step(&s, 1);
    for (int k = 0; k < 3; k++)
        acc(&s, 2, 1.0f, KS_NONE);
    step(&s, 2);
    for (int k = 0; k < 3; k++)
        acc(&s, 3, 1.0f, KS_NONE);
    step(&s, 3);
    for (int k = 0; k < 2; k++)
        acc(&s, 1, 1.0f, KS_NONE);
    step(&s, 5);
    for (int k = 0; k < 2; k++)
        acc(&s, 0, 1.0f, KS_NONE);
    // fewest accesses, the tie between 0 and 1 to the least recent
    miss_expect(&s, 10, (uint32_t[]){4}, (uint32_t[]){1}, 1, KS_NONE);
    // block 4 has one access: fewest, though the most recent
    miss_expect(&s, 11, (uint32_t[]){5}, (uint32_t[]){4}, 1, KS_NONE);
    scen_fini(&s);
}

static void heat_decayed_mass(void **state)
{
    (void)state;
    struct scen s;
    scen_init(&s, KS_EVICT_HEAT, NULL, NULL);
    ks_cache_free(s.c);
    s.p.heat_half_life = 8;
    s.c = ks_test_new(&s.p);
    s.r = ks_test_req(s.c);
    ks_test_grow(s.c, s.r, 8, KS_L1);
    // heats at step 20 (H = 8): 0: 100 * 2^(-19/8) = 19.3, 2: 1.5 * 2^(-18/8) = 0.31,
    // 1: 50 * 2^(-17/8) = 11.5, 3: 1 * 2^(-8/8) = 0.5. Block 2 is neither the
    // least recent (0) nor the smallest mass (3).
    step(&s, 1);
    acc(&s, 0, 100.0f, KS_NONE);
    step(&s, 2);
    acc(&s, 2, 1.5f, KS_NONE);
    step(&s, 3);
    acc(&s, 1, 50.0f, KS_NONE);
    step(&s, 12);
    acc(&s, 3, 1.0f, KS_NONE);
    assert_true(fabs(ks_cache_heat(s.c, s.r, 0, 2) - 1.5 * exp2(-10.0 / 8)) < 1e-6);
    miss_expect(&s, 20, (uint32_t[]){4}, (uint32_t[]){2}, 1, KS_NONE);
    scen_fini(&s);
}

// The coldest block (3) was last used at step `last3`; the miss comes at step
// 20 with protect_steps = 4: used at 17 it is protected, at 16 it is not.
static void heat_protect_case(uint32_t last3, uint32_t victim)
{
    struct scen s;
    scen_init(&s, KS_EVICT_HEAT, NULL, NULL);
    assert_int_equal(s.p.protect_steps, 4);
    step(&s, 1);
    acc(&s, 0, 100.0f, KS_NONE);
    acc(&s, 1, 50.0f, KS_NONE);
    acc(&s, 2, 10.0f, KS_NONE);
    step(&s, last3);
    acc(&s, 3, 0.001f, KS_NONE);
    miss_expect(&s, 20, (uint32_t[]){4}, (uint32_t[]){victim}, 1, KS_NONE);
    scen_fini(&s);
}

static void heat_protects_recent(void **state)
{
    (void)state;
    heat_protect_case(16, 3);
    heat_protect_case(17, 2);
}

static void heat_all_protected_and_ties(void **state)
{
    (void)state;
    // every L1 block used in the last 4 steps: the coldest still goes
    struct scen s;
    scen_init(&s, KS_EVICT_HEAT, NULL, NULL);
    step(&s, 17);
    acc(&s, 0, 5.0f, KS_NONE);
    step(&s, 18);
    acc(&s, 1, 3.0f, KS_NONE);
    step(&s, 19);
    acc(&s, 2, 4.0f, KS_NONE);
    acc(&s, 3, 6.0f, KS_NONE);
    miss_expect(&s, 20, (uint32_t[]){4}, (uint32_t[]){1}, 1, KS_NONE);
    scen_fini(&s);
    // equal heats (all zero): the least recently used goes
    scen_init(&s, KS_EVICT_HEAT, NULL, NULL);
    const uint32_t order[4] = {1, 3, 0, 2};
    for (uint32_t t = 5; t <= 8; t++) {
        step(&s, t);
        acc(&s, order[t - 5], 0.0f, KS_NONE);
    }
    miss_expect(&s, 20, (uint32_t[]){4, 5}, (uint32_t[]){1, 3}, 2, KS_NONE);
    scen_fini(&s);
}

static void belady(void **state)
{
    (void)state;
    struct scen s;
    scen_init(&s, KS_EVICT_BELADY, NULL, NULL);
    step(&s, 1);
    acc(&s, 0, 1.0f, 20);
    acc(&s, 1, 1.0f, 50);
    acc(&s, 2, 1.0f, KS_NONE); // never used again: goes first
    acc(&s, 3, 1.0f, 30);
    miss_expect(&s, 10, (uint32_t[]){4}, (uint32_t[]){2}, 1, 11);
    // L1 next uses: 0 at 20, 1 at 50, 3 at 30, 4 at 11: the farthest is 1
    miss_expect(&s, 11, (uint32_t[]){5}, (uint32_t[]){1}, 1, 12);
    // next uses are updated by each access: 0 now at 100
    step(&s, 12);
    acc(&s, 0, 1.0f, 100);
    acc(&s, 4, 1.0f, 13);
    acc(&s, 3, 1.0f, 14);
    acc(&s, 5, 1.0f, 15);
    miss_expect(&s, 13, (uint32_t[]){6}, (uint32_t[]){0}, 1, 16);
    scen_fini(&s);
}

// Next uses given before any access (ks_cache_set_next_use).
static void belady_set_next_use(void **state)
{
    (void)state;
    struct scen s;
    scen_init(&s, KS_EVICT_BELADY, NULL, NULL);
    const uint32_t next[4] = {40, 15, 30, 25};
    for (uint32_t j = 0; j < 4; j++)
        assert_int_equal(ks_cache_set_next_use(s.c, s.r, 0, j, next[j]), KS_OK);
    assert_int_equal(ks_cache_set_next_use(s.c, s.r, 0, 8, 1), KS_EINVAL);
    miss_expect(&s, 10, (uint32_t[]){4}, (uint32_t[]){0}, 1, 11);
    // L1: 1 at 15, 2 at 30, 3 at 25, 4 at 11
    miss_expect(&s, 11, (uint32_t[]){5}, (uint32_t[]){2}, 1, 12);
    scen_fini(&s);
}

// Arrival in L1 counts as a use for recency: a prefetched block that has not
// been accessed is not the oldest.
static void arrival_counts_as_use(void **state)
{
    (void)state;
    struct ks_cache_params p = ks_test_params(4, 16, 0);
    p.evict = KS_EVICT_LRU;
    p.prefetch_window = 1;
    struct ks_cache *c = ks_test_new(&p);
    uint32_t r = ks_test_req(c);
    ks_test_grow(c, r, 3, KS_L1); // 0..2
    ks_test_grow(c, r, 5, KS_L2); // 3..7
    ks_cache_step(c, 2);
    ks_test_access1(c, r, 0, 0, 1.0f); // rising hit: window 1, in L1
    ks_cache_step(c, 3);
    ks_test_access1(c, r, 0, 2, 1.0f); // rising hit: window 3 (HEAT)
    assert_int_equal(ks_test_plan_confirm(c, &p, UINT64_MAX), 1);
    assert_int_equal(ks_test_tier(c, r, 0, 3), KS_L1); // arrived at step 3
    ks_cache_step(c, 4);
    ks_test_access1(c, r, 0, 1, 1.0f);
    ks_cache_step(c, 5);
    ks_test_access1(c, r, 0, 2, 1.0f);
    assert_int_equal(ks_test_plan_confirm(c, &p, UINT64_MAX), 0);
    // L1 by last use: 0 at 2, 3 at 3 (arrival), 1 at 4, 2 at 5; block 3 was
    // created at step 0, so without its arrival it would be the oldest
    ks_cache_step(c, 6);
    ks_test_access1(c, r, 0, 6, 1.0f);
    assert_int_equal(ks_test_plan_confirm(c, &p, 0), 2);
    assert_int_equal(ks_test_tier(c, r, 0, 0), KS_L2);
    assert_int_equal(ks_test_tier(c, r, 0, 3), KS_L1);
    assert_int_equal(ks_test_tier(c, r, 0, 6), KS_L1);
    ks_test_check(c);
    ks_cache_free(c);
}

// The callback's record of what it saw.
struct seen {
    uint32_t calls;
    uint32_t n;
    struct ks_block_view v[16];
    uint32_t score_id[4];
    double score[4];
};

static double score_fn(void *ud, const struct ks_block_view *b)
{
    struct seen *s = ud;
    s->calls++;
    int known = 0;
    for (uint32_t i = 0; i < s->n; i++)
        if (s->v[i].id == b->id) {
            known = 1;
            s->v[i] = *b;
        }
    if (!known && s->n < 16)
        s->v[s->n++] = *b;
    for (int i = 0; i < 4; i++)
        if (s->score_id[i] == b->id)
            return s->score[i];
    return 1e9;
}

static void callback(void **state)
{
    (void)state;
    static struct seen seen;
    memset(&seen, 0, sizeof seen);
    struct ks_cache_params p = ks_test_params(4, 16, 0);
    p.groups = 2;
    p.evict = KS_EVICT_CALLBACK;
    p.evict_fn = score_fn;
    p.evict_ud = &seen;
    struct ks_cache *c = ks_test_new(&p);
    uint32_t a = ks_test_req(c), b = ks_test_req(c);
    ks_test_grow(c, a, 2, KS_L1); // (g0, 0..1), (g1, 0..1) in L1
    ks_test_grow(c, a, 2, KS_L2); // (g0, 2..3), (g1, 2..3) in L2
    assert_int_equal(ks_cache_req_share(c, b, a, 1), KS_OK); // position 0 shared
    for (uint32_t g = 0; g < 2; g++)
        for (uint32_t j = 0; j < 2; j++)
            assert_int_equal(ks_test_tier(c, a, g, j), KS_L1);
    struct ks_access x;
    assert_int_equal(ks_cache_step(c, 3), KS_OK);
    x = (struct ks_access){.block = 0, .mass = 2.0f, .next = KS_NONE};
    assert_int_equal(ks_cache_access(c, a, 0, &x, 1, NULL, NULL), KS_OK);
    assert_int_equal(ks_cache_step(c, 5), KS_OK);
    x = (struct ks_access){.block = 1, .mass = 3.0f, .next = KS_NONE};
    assert_int_equal(ks_cache_access(c, a, 0, &x, 1, NULL, NULL), KS_OK);
    x = (struct ks_access){.block = 0, .mass = 1.0f, .next = KS_NONE};
    assert_int_equal(ks_cache_access(c, b, 1, &x, 1, NULL, NULL), KS_OK); // through the sharer
    assert_int_equal(ks_cache_step(c, 7), KS_OK);
    x = (struct ks_access){.block = 1, .mass = 4.0f, .next = KS_NONE};
    assert_int_equal(ks_cache_access(c, a, 1, &x, 1, NULL, NULL), KS_OK);

    // expected views at step 10, H = 256; the shared (g1, 0) scores lowest
    struct {
        uint32_t g, pos, refs, last;
        double heat, score;
    } want[4] = {
        {0, 0, 2, 3, 2.0 * exp2(-7.0 / 256), 5.0},
        {0, 1, 1, 5, 3.0 * exp2(-5.0 / 256), -1.0},
        {1, 0, 2, 5, 1.0 * exp2(-5.0 / 256), -2.5},
        {1, 1, 1, 7, 4.0 * exp2(-3.0 / 256), 0.5},
    };
    for (int i = 0; i < 4; i++) {
        seen.score_id[i] = ks_test_id(c, a, want[i].g, want[i].pos);
        seen.score[i] = want[i].score;
    }
    assert_int_equal(ks_cache_step(c, 10), KS_OK);
    x = (struct ks_access){.block = 2, .mass = 1.0f, .next = KS_NONE};
    assert_int_equal(ks_cache_access(c, a, 0, &x, 1, NULL, NULL), KS_OK);
    assert_int_equal(seen.calls, 0);
    assert_int_equal(ks_test_plan_confirm(c, &p, UINT64_MAX), 2);
    assert_true(seen.calls >= 4);
    assert_int_equal(seen.n, 4); // only the eligible L1 blocks were scored
    for (int i = 0; i < 4; i++) {
        const struct ks_block_view *v = NULL;
        for (uint32_t k = 0; k < seen.n; k++)
            if (seen.v[k].id == seen.score_id[i])
                v = &seen.v[k];
        if (!v)
            fail_msg("block (g%u, %u) was never scored", want[i].g, want[i].pos);
        assert_int_equal(v->req, a); // the creator, also for the block b shares
        assert_int_equal(v->group, want[i].g);
        assert_int_equal(v->pos, want[i].pos);
        assert_int_equal(v->tier, KS_L1);
        assert_int_equal(v->refs, want[i].refs);
        assert_int_equal(v->last, want[i].last);
        assert_int_equal(v->now, 10);
        if (fabs(v->heat - want[i].heat) > 1e-6 * want[i].heat)
            fail_msg("block (g%u, %u): heat %.9g, expected %.9g", want[i].g, want[i].pos, v->heat, want[i].heat);
    }
    // the lowest score went, to L2, for both requests that map it
    assert_int_equal(ks_test_tier(c, a, 1, 0), KS_L2);
    assert_int_equal(ks_test_tier(c, b, 1, 0), KS_L2);
    assert_int_equal(ks_test_tier(c, a, 0, 2), KS_L1);
    assert_int_equal(ks_test_tier(c, a, 0, 0), KS_L1);
    assert_int_equal(ks_test_tier(c, a, 0, 1), KS_L1);
    assert_int_equal(ks_test_tier(c, a, 1, 1), KS_L1);
    assert_int_equal(ks_cache_stats(c)->demotions_shared, 1);
    ks_test_check(c);
    ks_cache_free(c);
}

static double score_last(void *ud, const struct ks_block_view *b)
{
    (void)ud;
    return b->last;
}

// Under every policy, an L1 whose blocks were all used in this step gives
// no victim: the miss stays unplanned and is counted when the step ends.
static void accessed_this_step_never_evicted(void **state)
{
    (void)state;
    for (int pol = KS_EVICT_HEAT; pol <= KS_EVICT_CALLBACK; pol++) {
        struct scen s;
        scen_init(&s, (enum ks_evict_policy)pol, score_last, NULL);
        step(&s, 5);
        for (uint32_t j = 0; j < 5; j++)
            acc(&s, j, 1.0f, KS_NONE);
        struct ks_plan plan;
        assert_int_equal(ks_cache_plan(s.c, UINT64_MAX, &plan), KS_OK);
        assert_int_equal(plan.n, 0);
        assert_int_equal(plan.bytes, 0);
        assert_int_equal(ks_cache_stats(s.c)->evictions[KS_L1], 0);
        struct ks_loc l = ks_test_loc(s.c, s.r, 0, 4);
        assert_int_equal(l.tier, KS_L2);
        assert_int_equal(l.state, KS_BLK_RESIDENT);
        ks_test_check(s.c);
        assert_int_equal(ks_cache_stats(s.c)->unplanned, 0);
        step(&s, 6);
        assert_int_equal(ks_cache_stats(s.c)->unplanned, 1);
        // one step later they are fair game
        acc(&s, 4, 1.0f, KS_NONE);
        assert_int_equal(ks_test_plan_confirm(s.c, &s.p, UINT64_MAX), 2);
        assert_int_equal(ks_test_tier(s.c, s.r, 0, 4), KS_L1);
        scen_fini(&s);
    }
}

// A victim whose demotion is still in flight is not chosen again.
static void inflight_never_evicted(void **state)
{
    (void)state;
    for (int pol = KS_EVICT_HEAT; pol <= KS_EVICT_CALLBACK; pol++) {
        struct scen s;
        scen_init(&s, (enum ks_evict_policy)pol, score_last, NULL);
        const uint32_t order[4] = {2, 0, 3, 1}; // LRU order 2, 0, 3, 1
        for (uint32_t t = 1; t <= 4; t++) {
            step(&s, t);
            acc(&s, order[t - 1], 1.0f, 100 + t);
        }
        step(&s, 10);
        acc(&s, 4, 1.0f, KS_NONE);
        struct ks_plan plan;
        assert_int_equal(ks_cache_plan(s.c, UINT64_MAX, &plan), KS_OK);
        ks_test_plan_sane(&s.p, &plan);
        struct ks_batch *first[8];
        uint32_t n1 = plan.n;
        assert_true(n1 >= 1 && n1 <= 8);
        for (uint32_t i = 0; i < n1; i++)
            first[i] = plan.batch[i];
        ks_test_check(s.c);
        // which block is being demoted
        uint32_t victim = KS_NONE;
        for (uint32_t j = 0; j < 4; j++)
            if (ks_test_loc(s.c, s.r, 0, j).state == KS_BLK_MIG_DOWN)
                victim = victim == KS_NONE ? j : KS_NONE - 1;
        assert_true(victim < 4);
        if (pol == KS_EVICT_LRU || pol == KS_EVICT_CALLBACK)
            assert_int_equal(victim, 2);
        // next step, before anything lands: another miss takes another victim
        step(&s, 11);
        acc(&s, 5, 1.0f, KS_NONE);
        assert_int_equal(ks_cache_plan(s.c, UINT64_MAX, &plan), KS_OK);
        ks_test_plan_sane(&s.p, &plan);
        uint32_t victim2 = KS_NONE;
        for (uint32_t j = 0; j < 4; j++)
            if (j != victim && ks_test_loc(s.c, s.r, 0, j).state == KS_BLK_MIG_DOWN)
                victim2 = j;
        assert_true(victim2 < 4);
        if (pol == KS_EVICT_LRU || pol == KS_EVICT_CALLBACK)
            assert_int_equal(victim2, 0);
        for (uint32_t i = 0; i < plan.n; i++)
            assert_int_equal(ks_test_in_batch(plan.batch[i], ks_test_id(s.c, s.r, 0, victim)), -1);
        ks_test_check(s.c);
        for (uint32_t i = 0; i < n1; i++)
            assert_int_equal(ks_cache_confirm(s.c, first[i]), KS_OK);
        ks_test_confirm_all(s.c, &plan);
        assert_int_equal(ks_cache_inflight_batches(s.c), 0);
        assert_int_equal(ks_test_tier(s.c, s.r, 0, victim), KS_L2);
        assert_int_equal(ks_test_tier(s.c, s.r, 0, victim2), KS_L2);
        assert_int_equal(ks_test_tier(s.c, s.r, 0, 4), KS_L1);
        assert_int_equal(ks_test_tier(s.c, s.r, 0, 5), KS_L1);
        assert_int_equal(ks_test_used(s.c, KS_L1), 4);
        assert_int_equal(ks_test_used(s.c, KS_L2), 4);
        scen_fini(&s);
    }
}

// README "Sampled eviction": "the manager samples 5n random pages
// (`evict_samples`, default 5) and takes the n lowest keys among them and a
// pool of 16 runners-up kept from earlier rounds". The default and the pool's
// size, and a sampled round that sees more than n + 16 candidates (10 victims:
// 50 samples of an L1 of 1000 pages, every block eligible) keeps exactly 16.
static void sampled_defaults(void **state)
{
    (void)state;
    struct ks_cache_params d;
    ks_cache_params_default(&d);
    assert_int_equal(d.evict_samples, 5);
    assert_int_equal(KS_EVICT_POOL, 16);
    struct ks_cache_params p = ks_test_params(1000, 1000, 0);
    p.evict = KS_EVICT_LRU;
    p.evict_samples = d.evict_samples;
    struct ks_cache *c = ks_test_new(&p);
    uint32_t r = ks_test_req(c);
    uint32_t placed[KS_TIERS] = {0};
    assert_int_equal(ks_cache_req_grow(c, r, 1010, KS_L1, placed), KS_OK);
    assert_int_equal(placed[KS_L1], 1000);
    assert_int_equal(placed[KS_L2], 10);
    assert_int_equal(c->pool[KS_L1].n, 0);
    assert_int_equal(ks_cache_step(c, 1), KS_OK);
    for (uint32_t j = 1000; j < 1010; j++)
        ks_test_access1(c, r, 0, j, 0.1f);
    assert_int_equal(ks_test_plan_confirm(c, &p, UINT64_MAX), 20); // 10 up, 10 victims down
    assert_int_equal(ks_cache_stats(c)->evictions[KS_L1], 10);
    assert_int_equal(c->pool[KS_L1].n, 16);
    ks_test_check(c);
    ks_cache_free(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(lru),
        cmocka_unit_test(lfu),
        cmocka_unit_test(heat_decayed_mass),
        cmocka_unit_test(heat_protects_recent),
        cmocka_unit_test(heat_all_protected_and_ties),
        cmocka_unit_test(belady),
        cmocka_unit_test(belady_set_next_use),
        cmocka_unit_test(arrival_counts_as_use),
        cmocka_unit_test(callback),
        cmocka_unit_test(accessed_this_step_never_evicted),
        cmocka_unit_test(inflight_never_evicted),
        cmocka_unit_test(sampled_defaults),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
