// test_follow.c - the level of detail detail.gpus (sim/step/follow.h): the
// sampled GPUs' steps kept per number of decoding requests, young requests
// and age; the shape a follower draws; its batches and reads outside L1
// scaled to its own number of requests, rounded with a carry; the sample's
// cache statistics scaled to all GPUs.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "follow.h"

#define GROUPS 4

// A plan of three batches: a miss batch L2 -> L1 needed at layer 2 (early,
// starting with layer 1), a demotion L1 -> L2, and a miss batch L3 -> L1 that
// waits for the demotion (its `after`), needed at layer 3.
static struct ks_batch plan_batch[3];
static struct ks_step_job plan_job[3];

static void make_plan(void)
{
    plan_batch[0] = (struct ks_batch){.id = 40, .after = KS_NONE, .src = KS_L2, .dst = KS_L1,
                                      .klass = KS_CLASS_MISS, .early = 1, .n = 5, .most_per_req = 3, .bytes = 5000};
    plan_batch[1] = (struct ks_batch){.id = 41, .after = KS_NONE, .src = KS_L1, .dst = KS_L2,
                                      .klass = KS_CLASS_EVICT, .n = 2, .bytes = 2000};
    plan_batch[2] = (struct ks_batch){.id = 42, .after = 41, .src = KS_L3, .dst = KS_L1, .klass = KS_CLASS_MISS,
                                      .n = 1, .most_per_req = 1, .bytes = 1000};
    plan_job[0] = (struct ks_step_job){.b = &plan_batch[0], .layer = 2, .start = 1, .needed = 1};
    plan_job[1] = (struct ks_step_job){.b = &plan_batch[1]};
    plan_job[2] = (struct ks_step_job){.b = &plan_batch[2], .layer = 3, .start = 3, .needed = 1};
}

static uint32_t outside[GROUPS][KS_TIERS] = {{0, 0, 0}, {0, 3, 0}, {0, 0, 1}, {0, 0, 0}};

// A step of n_dec requests, y young, of age a, its KV bytes `kv` (the mark
// that tells shapes apart).
static void publish(struct ks_follow *f, uint32_t n_dec, uint32_t y, uint32_t a, double kv, uint32_t n_jobs)
{
    struct ks_follow_shape x = {.n_dec = n_dec, .n_young = y, .age = a, .kv = kv, .hbm = kv / 2, .attn = 1e-3,
                                .flops = 7};
    assert_int_equal(ks_follow_publish(f, &x, plan_job, n_jobs, (const uint32_t (*)[KS_TIERS])outside), KS_OK);
}

// Nothing published: no shape. One published: every draw finds it, whatever
// the follower's number of requests, young ones and age (the nearest).
static void pick_nearest(void **state)
{
    (void)state;
    struct ks_follow f;
    make_plan();
    assert_int_equal(ks_follow_init(&f, GROUPS), KS_OK);
    assert_null(ks_follow_pick(&f, 8, 0, 3, 1));
    publish(&f, 8, 0, 3, 100, 3);
    for (uint64_t draw = 0; draw < 5; draw++) {
        assert_true(ks_follow_pick(&f, 8, 0, 3, draw)->kv == 100);
        assert_true(ks_follow_pick(&f, 1, 2, 0, draw)->kv == 100);
        assert_true(ks_follow_pick(&f, 500, 9, 13, draw)->kv == 100);
    }
    // the same number of requests with a young one: its own ring once published
    publish(&f, 8, 1, 3, 200, 3);
    assert_true(ks_follow_pick(&f, 8, 1, 3, 0)->kv == 200);
    assert_true(ks_follow_pick(&f, 8, 0, 3, 0)->kv == 100);
    // the young count comes before the age, the age before the number of requests
    assert_true(ks_follow_pick(&f, 30, 1, 9, 0)->kv == 200);
    publish(&f, 30, 0, 9, 300, 3);
    assert_true(ks_follow_pick(&f, 9, 0, 3, 0)->kv == 100);  // same age, nearest number (8)
    assert_true(ks_follow_pick(&f, 9, 0, 8, 0)->kv == 300);  // nearest age (9) first
    // fewer requests first between two at the same distance
    publish(&f, 10, 0, 3, 400, 3);
    assert_true(ks_follow_pick(&f, 9, 0, 3, 0)->kv == 100);
    // above KS_FOLLOW_EXACT requests, by powers of two: 100 and 127 share a ring
    publish(&f, 100, 0, 3, 500, 3);
    assert_true(ks_follow_pick(&f, 127, 0, 3, 0)->kv == 500);
    assert_true(ks_follow_pick(&f, 127, 0, 3, 0)->n_dec == 100);
    assert_int_equal(f.published, 5);
    ks_follow_fini(&f);
}

// Followers follow once steps with and without young requests are both
// published: the sampled GPUs' first steps are all young, their cold start,
// which a follower's later steps must not take as theirs.
static void ready_after_both_kinds(void **state)
{
    (void)state;
    struct ks_follow f;
    make_plan();
    assert_int_equal(ks_follow_init(&f, GROUPS), KS_OK);
    assert_false(ks_follow_ready(&f));
    publish(&f, 8, 8, 0, 100, 3); // a first step: every request young
    publish(&f, 9, 3, 0, 100, 3);
    assert_false(ks_follow_ready(&f));
    publish(&f, 8, 0, 1, 50, 3); // a step without young requests
    assert_true(ks_follow_ready(&f));
    assert_int_equal(f.published, 3);
    assert_int_equal(f.published_young, 2);
    ks_follow_fini(&f);
    // the other order
    assert_int_equal(ks_follow_init(&f, GROUPS), KS_OK);
    publish(&f, 8, 0, 1, 50, 3);
    assert_false(ks_follow_ready(&f));
    publish(&f, 8, 1, 1, 50, 3);
    assert_true(ks_follow_ready(&f));
    ks_follow_fini(&f);
}

// Ages one by one below KS_FOLLOW_AGE_EXACT tokens, then by powers of two,
// the last key holding every older step.
static void age_keys(void **state)
{
    (void)state;
    for (uint64_t m = 0; m < KS_FOLLOW_AGE_EXACT; m++)
        assert_int_equal(ks_follow_age(m), m);
    assert_int_equal(ks_follow_age(16), KS_FOLLOW_AGE_EXACT);
    assert_int_equal(ks_follow_age(31), KS_FOLLOW_AGE_EXACT);
    assert_int_equal(ks_follow_age(32), KS_FOLLOW_AGE_EXACT + 1);
    assert_int_equal(ks_follow_age(8191), KS_FOLLOW_AGES - 2);
    assert_int_equal(ks_follow_age(8192), KS_FOLLOW_AGES - 1);
    assert_int_equal(ks_follow_age(UINT64_MAX), KS_FOLLOW_AGES - 1);
}

// A ring keeps the last KS_FOLLOW_RING shapes; draws spread over them.
static void ring_keeps_the_last(void **state)
{
    (void)state;
    struct ks_follow f;
    make_plan();
    assert_int_equal(ks_follow_init(&f, GROUPS), KS_OK);
    for (uint32_t i = 0; i < KS_FOLLOW_RING + 5; i++)
        publish(&f, 4, 0, 2, i, 1 + i % 3);
    int seen[KS_FOLLOW_RING + 5] = {0};
    for (uint64_t draw = 0; draw < 4 * KS_FOLLOW_RING; draw++) {
        const struct ks_follow_shape *sh = ks_follow_pick(&f, 4, 0, 2, draw);
        seen[(int)sh->kv]++;
        assert_int_equal(sh->n_batch, 1 + (uint32_t)sh->kv % 3);
    }
    for (int i = 0; i < 5; i++)
        assert_int_equal(seen[i], 0); // overwritten
    for (int i = 5; i < KS_FOLLOW_RING + 5; i++)
        assert_int_equal(seen[i], 4); // draw % 32: each 4 times
    ks_follow_fini(&f);
}

// The shape's batches become the follower's: same tiers, blocks, bytes,
// layers and order, `after` pointing at the batch of its own round; the
// reads outside L1 too; at scale 1 exactly, at 0.5 every other step, at 2
// two rounds.
static void jobs_scaled(void **state)
{
    (void)state;
    struct ks_follow f;
    struct ks_follow_out o;
    make_plan();
    assert_int_equal(ks_follow_init(&f, GROUPS), KS_OK);
    assert_int_equal(ks_follow_out_init(&o, GROUPS), KS_OK);
    publish(&f, 6, 0, 5, 1e6, 3);
    const struct ks_follow_shape *sh = ks_follow_pick(&f, 6, 0, 5, 0);
    assert_non_null(sh);
    assert_true(sh->kv == 1e6 && sh->hbm == 5e5 && sh->attn == 1e-3 && sh->flops == 7 && sh->promotes == 1);

    assert_int_equal(ks_follow_jobs(&o, sh, 1.0), KS_OK);
    assert_int_equal(o.n, 3);
    for (int i = 0; i < 3; i++) {
        const struct ks_batch *b = o.job[i].b, *p = &plan_batch[i];
        assert_ptr_equal(b, &o.batch[i]);
        assert_int_equal(b->src, p->src);
        assert_int_equal(b->dst, p->dst);
        assert_int_equal(b->klass, p->klass);
        assert_int_equal(b->early, p->early);
        assert_int_equal(b->n, p->n);
        assert_int_equal(b->most_per_req, p->most_per_req);
        assert_int_equal(b->bytes, p->bytes);
        assert_int_equal(o.job[i].layer, plan_job[i].layer);
        assert_int_equal(o.job[i].start, plan_job[i].start);
        assert_int_equal(o.job[i].needed, plan_job[i].needed);
        assert_false(o.job[i].running || o.job[i].landed);
    }
    assert_int_equal(o.batch[0].after, KS_NONE);
    assert_int_equal(o.batch[2].after, o.batch[1].id);
    assert_true(o.batch[0].id != o.batch[1].id && o.batch[1].id != o.batch[2].id);
    uint32_t got[GROUPS][KS_TIERS];
    ks_follow_outside(&o, sh, 1.0, GROUPS, got);
    assert_memory_equal(got, outside, sizeof got);

    // scale 0.5: 1.5 batches -> 1, then 2 (the carry); 3 reads -> 1, then 2
    assert_int_equal(ks_follow_jobs(&o, sh, 0.5), KS_OK);
    assert_int_equal(o.n, 1);
    assert_int_equal(ks_follow_jobs(&o, sh, 0.5), KS_OK);
    assert_int_equal(o.n, 2);
    ks_follow_outside(&o, sh, 0.5, GROUPS, got);
    assert_int_equal(got[1][KS_L2], 1);
    assert_int_equal(got[2][KS_L3], 0);
    ks_follow_outside(&o, sh, 0.5, GROUPS, got);
    assert_int_equal(got[1][KS_L2], 2);
    assert_int_equal(got[2][KS_L3], 1);

    // scale 2: two rounds, each batch 2 after its own round's batch 1
    assert_int_equal(ks_follow_jobs(&o, sh, 2.0), KS_OK);
    assert_int_equal(o.n, 6);
    assert_int_equal(o.batch[2].after, o.batch[1].id);
    assert_int_equal(o.batch[5].after, o.batch[4].id);
    assert_int_equal(o.batch[3].n, plan_batch[0].n);
    ks_follow_out_fini(&o);
    ks_follow_fini(&f);
}

// The sample's cache statistics stand for all GPUs' (sim/engine/engine.c):
// every counter, the first and the last of the struct included, times the
// factor, rounded to the nearest.
static void stats_scaled(void **state)
{
    (void)state;
    struct ks_cache_stats st = {.accesses = 1000, .found = {900, 80, 20}, .mig_bytes = {{0, 0, 0}, {7, 0, 0}, {0, 0, 0}},
                                .pf_issued = 3, .aggregated = 1};
    ks_cache_stats_scale(&st, 2.5);
    assert_int_equal(st.accesses, 2500);
    assert_int_equal(st.found[KS_L1], 2250);
    assert_int_equal(st.found[KS_L2], 200);
    assert_int_equal(st.found[KS_L3], 50);
    assert_int_equal(st.mig_bytes[KS_L2][KS_L1], 18); // 17.5 rounds away from zero
    assert_int_equal(st.pf_issued, 8);                // 7.5
    assert_int_equal(st.aggregated, 3);               // 2.5: the last counter too
    assert_int_equal(st.evictions[KS_L1], 0);
    ks_cache_stats_scale(&st, 1.0);
    assert_int_equal(st.accesses, 2500);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(pick_nearest),
        cmocka_unit_test(ready_after_both_kinds),
        cmocka_unit_test(age_keys),
        cmocka_unit_test(ring_keeps_the_last),
        cmocka_unit_test(jobs_scaled),
        cmocka_unit_test(stats_scaled),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
