// test_random.c - a million mixed cache-manager operations, checked.
//
// Requests come and go (some sharing a prefix of another), grow, are
// accessed with random attention masses; plans are made under random budgets
// and their batches confirmed or aborted in random order. After every 1000
// operations the invariant checker must pass. Alongside, a shadow model
// predicts which readers' locations have gone stale (a block they located
// was moved by a confirmed batch) and every ks_cache_validate answer must
// match it: no stale read slips through, no fresh one is refused.
// Fixed seeds: a failure reproduces exactly.
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

#define MAX_REQ 48
#define MAX_HELD 256
#define CHECK_EVERY 1000

struct held {
    uint32_t req;
    struct ks_loc loc;
    uint32_t version; // shadow[loc.id] when located
};

struct world {
    struct ks_cache *c;
    struct ks_rng rng;
    uint32_t live[MAX_REQ];
    uint32_t n_live;
    uint32_t step;
    struct ks_batch *out[4096]; // batches in flight, in plan order
    uint32_t n_out;
    uint32_t *version; // per block id: confirmed moves and releases seen
    struct held held[MAX_HELD];
    uint32_t n_held;
    uint64_t stale_expected, stale_seen, fresh_ok;
    uint64_t ops[8];
};

static void check(struct world *w)
{
    char msg[256];
    int st = ks_cache_check(w->c, msg, sizeof msg);
    if (st != KS_OK)
        fail_msg("invariant broken after step %u: %s", w->step, msg);
}

static void drop_held_of(struct world *w, uint32_t req)
{
    uint32_t k = 0;
    for (uint32_t i = 0; i < w->n_held; i++)
        if (w->held[i].req != req)
            w->held[k++] = w->held[i];
    w->n_held = k;
}

static void op_new(struct world *w)
{
    if (w->n_live == MAX_REQ)
        return;
    uint32_t r;
    assert_int_equal(ks_cache_req_new(w->c, &r), KS_OK);
    if (w->n_live > 0 && ks_rng_below(&w->rng, 3) == 0) {
        uint32_t src = w->live[ks_rng_below(&w->rng, w->n_live)];
        uint32_t len = ks_cache_req_len(w->c, src);
        uint32_t n = len ? ks_rng_below(&w->rng, len + 1) : 0;
        assert_int_equal(ks_cache_req_share(w->c, r, src, n), KS_OK);
        assert_int_equal(ks_cache_req_len(w->c, r), n);
    }
    w->live[w->n_live++] = r;
}

static void op_free(struct world *w)
{
    if (w->n_live == 0)
        return;
    uint32_t i = ks_rng_below(&w->rng, w->n_live);
    uint32_t r = w->live[i];
    assert_int_equal(ks_cache_req_free(w->c, r), KS_OK);
    drop_held_of(w, r);
    w->live[i] = w->live[--w->n_live];
    assert_int_equal(ks_cache_req_free(w->c, r), KS_EINVAL); // twice is refused
}

static void op_grow(struct world *w)
{
    if (w->n_live == 0)
        return;
    uint32_t r = w->live[ks_rng_below(&w->rng, w->n_live)];
    uint32_t before = ks_cache_req_len(w->c, r);
    uint32_t n = 1 + ks_rng_below(&w->rng, 8);
    unsigned tier = ks_rng_below(&w->rng, 4) == 0 ? KS_L2 : KS_L1;
    uint32_t placed[KS_TIERS] = {0};
    int st = ks_cache_req_grow(w->c, r, n, tier, placed);
    if (st == KS_ENOSPC) // full: free someone, as admission control would
        op_free(w);
    else
        assert_int_equal(st, KS_OK);
    if (st == KS_OK)
        assert_int_equal(ks_cache_req_len(w->c, r), before + n);
}

static void op_access(struct world *w)
{
    if (w->n_live == 0)
        return;
    uint32_t r = w->live[ks_rng_below(&w->rng, w->n_live)];
    uint32_t len = ks_cache_req_len(w->c, r);
    if (len == 0)
        return;
    struct ks_access acc[32];
    uint8_t where[32];
    uint32_t n = 1 + ks_rng_below(&w->rng, 16);
    for (uint32_t i = 0; i < n; i++)
        acc[i] = (struct ks_access){.block = ks_rng_below(&w->rng, len), .mass = (float)ks_rng_unit(&w->rng),
                                    .next = KS_NONE};
    uint32_t group = ks_rng_below(&w->rng, 2);
    struct ks_access_report rep;
    assert_int_equal(ks_cache_access(w->c, r, group, acc, n, where, &rep), KS_OK);
    uint32_t l1 = 0;
    for (uint32_t i = 0; i < n; i++) {
        struct ks_loc loc;
        assert_int_equal(ks_cache_locate(w->c, r, group, acc[i].block, &loc), KS_OK);
        // the report agrees with where the block is (it has not moved since)
        if (where[i] == KS_AT_INFLIGHT)
            assert_int_equal(loc.state, KS_BLK_MIG_UP);
        else
            assert_int_equal(where[i], loc.tier);
        l1 += where[i] == KS_AT_L1;
        if (w->n_held < MAX_HELD && ks_rng_below(&w->rng, 4) == 0)
            w->held[w->n_held++] = (struct held){.req = r, .loc = loc, .version = w->version[loc.id]};
    }
    assert_int_equal(rep.found[KS_L1], l1);
    assert_int_equal(rep.misses, n - l1);
}

static void op_plan(struct world *w)
{
    uint64_t budget = ks_rng_below(&w->rng, 3) == 0 ? UINT64_MAX : (uint64_t)ks_rng_below(&w->rng, 40) * 65536;
    ks_cache_set_reserve(w->c, ks_rng_below(&w->rng, 4) == 0 ? ks_rng_below(&w->rng, 24) : 0);
    struct ks_plan plan;
    assert_int_equal(ks_cache_plan(w->c, budget, &plan), KS_OK);
    for (uint32_t i = 0; i < plan.n; i++) {
        struct ks_batch *b = plan.batch[i];
        assert_true(b->n > 0 && b->n <= 8);
        assert_true(b->src != b->dst);
        assert_true(w->n_out < sizeof w->out / sizeof w->out[0]);
        w->out[w->n_out++] = b;
    }
}

static void op_finish(struct world *w)
{
    if (w->n_out == 0)
        return;
    uint32_t i = ks_rng_below(&w->rng, w->n_out);
    struct ks_batch *b = w->out[i];
    int abort_it = ks_rng_below(&w->rng, 8) == 0;
    uint32_t ids[64];
    uint32_t n = b->n;
    memcpy(ids, b->blocks, n * sizeof *ids);
    int st = abort_it ? ks_cache_abort(w->c, b) : ks_cache_confirm(w->c, b);
    if (st == KS_ESTATE) // ordering: its `after` is pending, or a dependent is
        return;
    assert_int_equal(st, KS_OK);
    if (!abort_it)
        for (uint32_t k = 0; k < n; k++)
            w->version[ids[k]]++;
    w->out[i] = w->out[--w->n_out];
}

static void op_validate(struct world *w)
{
    if (w->n_held == 0)
        return;
    uint32_t i = ks_rng_below(&w->rng, w->n_held);
    struct held h = w->held[i];
    int expect_stale = w->version[h.loc.id] != h.version;
    int st = ks_cache_validate(w->c, &h.loc);
    if (expect_stale) {
        assert_int_equal(st, KS_ESTALE);
        w->stale_expected++;
        w->held[i] = w->held[--w->n_held];
    } else {
        assert_int_equal(st, KS_OK);
        w->fresh_ok++;
    }
}

static void run(uint64_t seed, enum ks_evict_policy policy, uint32_t samples, uint64_t n_ops, int debug)
{
    struct ks_cache_params p;
    ks_cache_params_default(&p);
    p.n_blocks = 8192;
    p.tier_blocks[KS_L1] = 192;
    p.tier_blocks[KS_L2] = 768;
    p.tier_blocks[KS_L3] = 3072;
    p.block_bytes[KS_L1] = 65536;
    p.block_bytes[KS_L2] = 32768; // int8 below L1
    p.block_bytes[KS_L3] = 32768;
    p.groups = 2;
    p.migration_batch = 8;
    p.heat_half_life = 16; // rebases every 1024 steps
    p.evict = policy;
    p.evict_samples = samples;
    p.seed = seed;
    p.debug = debug;
    char err[128];
    struct world *w = calloc(1, sizeof *w);
    assert_non_null(w);
    w->c = ks_cache_new(&p, err, sizeof err);
    assert_non_null(w->c);
    w->version = calloc(8192, sizeof *w->version);
    assert_non_null(w->version);
    ks_rng_seed(&w->rng, seed);
    assert_int_equal(ks_cache_step(w->c, 0), KS_OK);

    for (uint64_t op = 1; op <= n_ops; op++) {
        uint32_t k = ks_rng_below(&w->rng, 100);
        if (k < 3) {
            op_new(w);
            w->ops[0]++;
        } else if (k < 5) {
            op_free(w);
            w->ops[1]++;
        } else if (k < 20) {
            op_grow(w);
            w->ops[2]++;
        } else if (k < 55) {
            op_access(w);
            w->ops[3]++;
        } else if (k < 65) {
            op_plan(w);
            w->ops[4]++;
        } else if (k < 85) {
            op_finish(w);
            w->ops[5]++;
        } else if (k < 95) {
            op_validate(w);
            w->ops[6]++;
        } else {
            w->step += 1 + (k == 99 ? 40 : 0);
            assert_int_equal(ks_cache_step(w->c, w->step), KS_OK);
            w->ops[7]++;
        }
        if (op % CHECK_EVERY == 0)
            check(w);
    }
    // drain: every batch confirmed, then everything freed, nothing left over
    while (w->n_out) {
        uint32_t before = w->n_out;
        for (uint32_t i = 0; i < w->n_out;) {
            if (ks_cache_confirm(w->c, w->out[i]) == KS_OK)
                w->out[i] = w->out[--w->n_out];
            else
                i++;
        }
        assert_true(w->n_out < before);
    }
    assert_int_equal(ks_cache_inflight_batches(w->c), 0);
    check(w);
    while (w->n_live)
        op_free(w);
    check(w);
    for (unsigned t = 0; t < KS_TIERS; t++) {
        struct ks_tier_view v;
        ks_cache_tier_view(w->c, t, &v);
        assert_int_equal(v.used, 0);
    }
    const struct ks_cache_stats *s = ks_cache_stats(w->c);
    print_message("seed %llu policy %d samples %u: %llu accesses, L1 hits %llu, batches %llu, aborted %llu, "
                  "stale refused %llu (expected %llu), fresh %llu, prefetch issued %llu used %llu, rebases %llu\n",
                  (unsigned long long)seed, (int)policy, samples, (unsigned long long)s->accesses,
                  (unsigned long long)s->found[KS_L1], (unsigned long long)s->batches,
                  (unsigned long long)s->aborted, (unsigned long long)s->stale_refused,
                  (unsigned long long)w->stale_expected, (unsigned long long)w->fresh_ok,
                  (unsigned long long)s->pf_issued, (unsigned long long)s->pf_used,
                  (unsigned long long)s->rebases);
    // the run exercised what it claims to
    assert_int_equal(s->stale_refused, w->stale_expected);
    assert_true(w->stale_expected > n_ops / 10000);
    assert_true(s->batches > n_ops / 1000 && s->aborted > n_ops / 10000);
    assert_true(s->migrations[KS_L1][KS_L2] > 0 && s->migrations[KS_L2][KS_L3] > 0);
    assert_true(s->migrations[KS_L3][KS_L1] > 0 && s->pf_issued > 0 && s->rebases > 0);
    ks_cache_free(w->c);
    free(w->version);
    free(w);
}

static void million_heat(void **state)
{
    (void)state;
    run(1, KS_EVICT_HEAT, 5, 1000000, 0);
}

static void mixed_policies(void **state)
{
    (void)state;
    run(2, KS_EVICT_LRU, 0, 200000, 0);
    run(3, KS_EVICT_LFU, 4, 200000, 0);
    run(4, KS_EVICT_HEAT, 0, 200000, 0);
}

// Debug mode checks after every plan, confirm and abort (an abort on failure).
static void debug_mode(void **state)
{
    (void)state;
    run(5, KS_EVICT_HEAT, 5, 20000, 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(million_heat),
        cmocka_unit_test(mixed_policies),
        cmocka_unit_test(debug_mode),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
