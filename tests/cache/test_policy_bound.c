// test_policy_bound.c - Belady is the bound: no policy hits L1 more often.
//
// Each access stream is replayed through one manager per policy, with the
// same capacities and the same starting placement, demand fetching only (no
// prefetch), every batch confirmed before the next step. Belady, given each
// access's next use, must reach an L1 hit count at least that of heat, lru
// and lfu, exact and sampled, on random and on structured streams. Each hit
// rate is also the one README prints ("Sampled eviction against the exact
// scan", 3 decimals), asserted to half a unit of its last digit.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cache.h"
#include "rng.h"

#define BLOCKS 1024
#define STEPS 3000
#define K 16
#define L1 96

struct stream {
    const char *name;
    uint32_t blk[STEPS][K];
    uint32_t n[STEPS];
    float mass[STEPS][K];
    uint32_t next[STEPS][K];   // step of the block's next access
    uint32_t first[BLOCKS];    // step of each block's first access
};

static void add(struct stream *s, uint32_t t, uint32_t b, struct ks_rng *r)
{
    for (uint32_t i = 0; i < s->n[t]; i++)
        if (s->blk[t][i] == b)
            return;
    s->mass[t][s->n[t]] = (float)(0.01 + ks_rng_unit(r));
    s->blk[t][s->n[t]++] = b;
}

static void finish(struct stream *s)
{
    uint32_t seen[BLOCKS];
    memset(seen, 0xff, sizeof seen);
    for (uint32_t t = STEPS; t-- > 0;)
        for (uint32_t i = 0; i < s->n[t]; i++) {
            uint32_t b = s->blk[t][i];
            s->next[t][i] = seen[b];
            seen[b] = t;
        }
    memcpy(s->first, seen, sizeof seen);
}

static void gen_uniform(struct stream *s, uint64_t seed)
{
    struct ks_rng r;
    ks_rng_seed(&r, seed);
    s->name = "uniform over 320 blocks";
    for (uint32_t t = 0; t < STEPS; t++)
        while (s->n[t] < K)
            add(s, t, ks_rng_below(&r, 320), &r);
    finish(s);
}

// Topics the query drifts between, sinks and a recent window, rare jumps.
static void gen_topics(struct stream *s, uint64_t seed)
{
    struct ks_rng r;
    ks_rng_seed(&r, seed);
    s->name = "drifting topics + sinks + recent window";
    uint32_t centre[6];
    for (int i = 0; i < 6; i++)
        centre[i] = ks_rng_below(&r, BLOCKS);
    uint32_t topic = 0;
    for (uint32_t t = 0; t < STEPS; t++) {
        if (ks_rng_below(&r, 50) == 0)
            centre[ks_rng_below(&r, 6)] = ks_rng_below(&r, BLOCKS);
        if (ks_rng_below(&r, 20) == 0)
            topic = ks_rng_below(&r, 6);
        add(s, t, 0, &r); // sink
        uint32_t recent = (BLOCKS / 2 + t / 8) % BLOCKS;
        add(s, t, recent, &r);
        add(s, t, (recent + BLOCKS - 1) % BLOCKS, &r);
        while (s->n[t] < K) {
            uint32_t b;
            if (ks_rng_below(&r, 10) == 0)
                b = ks_rng_below(&r, BLOCKS);
            else
                b = (centre[topic] + ks_rng_below(&r, 40)) % BLOCKS;
            add(s, t, b, &r);
        }
    }
    finish(s);
}

// A cyclic scan a little larger than L1 (the case LRU always misses) mixed
// with a hot set.
static void gen_loop(struct stream *s, uint64_t seed)
{
    struct ks_rng r;
    ks_rng_seed(&r, seed);
    s->name = "cyclic scan over 120 blocks + hot set";
    uint32_t pos = 0;
    for (uint32_t t = 0; t < STEPS; t++) {
        for (int i = 0; i < K / 2; i++)
            add(s, t, 200 + (pos++ % 120), &r);
        while (s->n[t] < K)
            add(s, t, 400 + ks_rng_below(&r, 24), &r);
    }
    finish(s);
}

static uint32_t shift(uint32_t step)
{
    return step == UINT32_MAX ? step : step + 1;
}

static double replay(const struct stream *s, enum ks_evict_policy policy, uint32_t samples)
{
    struct ks_cache_params p;
    ks_cache_params_default(&p);
    p.n_blocks = BLOCKS;
    p.tier_blocks[KS_L1] = L1;
    p.tier_blocks[KS_L2] = BLOCKS;
    p.block_bytes[KS_L1] = p.block_bytes[KS_L2] = 131072;
    p.prefetch_window = 0;
    p.evict = policy;
    p.evict_samples = samples;
    p.seed = 7;
    struct ks_cache *c = ks_cache_new(&p, NULL, 0);
    assert_non_null(c);
    uint32_t req;
    assert_int_equal(ks_cache_req_new(c, &req), KS_OK);
    assert_int_equal(ks_cache_req_grow(c, req, BLOCKS, KS_L1, NULL), KS_OK);
    if (policy == KS_EVICT_BELADY)
        for (uint32_t b = 0; b < BLOCKS; b++)
            assert_int_equal(ks_cache_set_next_use(c, req, 0, b, shift(s->first[b])), KS_OK);
    struct ks_access acc[K];
    for (uint32_t t = 0; t < STEPS; t++) {
        // the blocks were created in step 0 (pinned there); the stream starts at 1
        assert_int_equal(ks_cache_step(c, shift(t)), KS_OK);
        for (uint32_t i = 0; i < s->n[t]; i++)
            acc[i] = (struct ks_access){.block = s->blk[t][i], .mass = s->mass[t][i], .next = shift(s->next[t][i])};
        assert_int_equal(ks_cache_access(c, req, 0, acc, s->n[t], NULL, NULL), KS_OK);
        struct ks_plan plan;
        assert_int_equal(ks_cache_plan(c, UINT64_MAX, &plan), KS_OK);
        for (uint32_t b = 0; b < plan.n; b++)
            assert_int_equal(ks_cache_confirm(c, plan.batch[b]), KS_OK);
    }
    char msg[256];
    if (ks_cache_check(c, msg, sizeof msg) != KS_OK)
        fail_msg("%s", msg);
    const struct ks_cache_stats *st = ks_cache_stats(c);
    assert_int_equal(st->unplanned, 0); // demand fetching always found room
    double hit = (double)st->found[KS_L1] / (double)st->accesses;
    ks_cache_free(c);
    return hit;
}

// The L1 hit rate `got` is README's `want` to its 3 decimals.
static void as_readme(double got, double want)
{
    if (got < want - 0.0005 - 1e-9 || got > want + 0.0005 + 1e-9)
        fail_msg("hit rate %.6f, README prints %.3f", got, want);
}

// want: README's belady, then heat, lru, lfu, each exact then sampled.
static void bound(const struct stream *s, const double want[7])
{
    double opt = replay(s, KS_EVICT_BELADY, 0);
    as_readme(opt, want[0]);
    struct {
        const char *name;
        enum ks_evict_policy p;
    } pol[] = {{"heat", KS_EVICT_HEAT}, {"lru", KS_EVICT_LRU}, {"lfu", KS_EVICT_LFU}};
    print_message("%-42s belady %.6f\n", s->name, opt);
    for (int i = 0; i < 3; i++) {
        double exact = replay(s, pol[i].p, 0);
        double sampled = replay(s, pol[i].p, 5);
        print_message("%-42s %-6s exact %.6f sampled(5) %.6f\n", "", pol[i].name, exact, sampled);
        assert_true(opt >= exact);
        assert_true(opt >= sampled);
        as_readme(exact, want[1 + 2 * i]);
        as_readme(sampled, want[2 + 2 * i]);
    }
}

static void uniform(void **state)
{
    (void)state;
    struct stream *s = calloc(1, sizeof *s);
    gen_uniform(s, 11);
    bound(s, (const double[7]){0.628, 0.301, 0.301, 0.301, 0.301, 0.302, 0.301});
    free(s);
}

static void topics(void **state)
{
    (void)state;
    struct stream *s = calloc(1, sizeof *s);
    gen_topics(s, 12);
    bound(s, (const double[7]){0.874, 0.790, 0.816, 0.825, 0.824, 0.541, 0.679});
    free(s);
}

static void loop(void **state)
{
    (void)state;
    struct stream *s = calloc(1, sizeof *s);
    gen_loop(s, 13);
    bound(s, (const double[7]){0.784, 0.688, 0.632, 0.488, 0.491, 0.500, 0.505});
    free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(uniform),
        cmocka_unit_test(topics),
        cmocka_unit_test(loop),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
