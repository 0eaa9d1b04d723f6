// test_scored.c - the score-driven policies' rules (README "Scenarios",
// sparse). retrieval keeps the top-k alone: budget_tokens / block_size
// blocks a step by score (and the partial block the query sits in, which has
// no summary to score), where topk adds the sink and the recent window
// (which holds the partial block) to them.
// mixed: a
// request starts with the window rule and, at each new step, switches
// between it and the scored top-k with probability sparse.switch_prob. The
// mode of each step is read from the selection itself: the window rule's
// blocks (sink and recent window, then the budget's most recent) or not.
// Closed forms at 0 (the window throughout) and 1 (window, top-k, window,
// ... alternating from the first step); at 0.25 the switches over 4000 steps
// are within 5 standard deviations of 0.25 x 3999.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rng.h"
#include "scenario.h"
#include "selection.h"
#include "status.h"

#ifndef KS_SOURCE_DIR
#error "the build defines KS_SOURCE_DIR"
#endif
#define SCENARIO KS_SOURCE_DIR "/tests/fixtures/scenarios/policies.lua"
#define PROMPT 4096 // policies.lua's prompts
#define STEPS 4000

static char err[512];

static struct ks_scenario *load(const char *policy, const char *prob)
{
    char a[64], b[64];
    snprintf(a, sizeof a, "sparse.policy=%s", policy);
    snprintf(b, sizeof b, "sparse.switch_prob=%s", prob);
    const char *sets[] = {a, b};
    struct ks_scenario_params p = {.sets = sets, .n_sets = 2};
    struct ks_scenario *s = NULL;
    if (ks_scenario_load(SCENARIO, &p, &s, err, sizeof err) != KS_OK)
        fail_msg("ks_scenario_load: %s", err);
    return s;
}

// Whether blocks a[0..na) and b[0..nb) are the same set.
static int same_set(uint32_t *a, uint32_t na, uint32_t *b, uint32_t nb)
{
    if (na != nb)
        return 0;
    for (uint32_t i = 0; i < na; i++) {
        uint32_t j = 0;
        while (j < nb && b[j] != a[i])
            j++;
        if (j == nb)
            return 0;
    }
    return 1;
}

// Runs a mixed request over STEPS steps at switch_prob `prob`; mode[t] is 1
// where step t's selection is not the window rule's. Returns the switches.
static uint32_t modes(const char *prob, uint8_t *mode)
{
    struct ks_scenario *sm = load("mixed", prob), *sw = load("window", prob);
    struct ks_selection *mixed = ks_selection_new(sm, err, sizeof err), *window = ks_selection_new(sw, err, sizeof err);
    if (!mixed || !window)
        fail_msg("ks_selection_new: %s", err);
    struct ks_selection_req *rm = ks_selection_open(mixed, 1, PROMPT), *rw = ks_selection_open(window, 1, PROMPT);
    assert_non_null(rm);
    assert_non_null(rw);
    uint32_t bs = sm->cache.block_size, cap = (PROMPT + STEPS + bs) / bs;
    uint32_t *a = malloc(cap * sizeof *a), *b = malloc(cap * sizeof *b);
    float *ma = malloc(cap * sizeof *ma), *mb = malloc(cap * sizeof *mb);
    assert_true(a && b && ma && mb);
    struct ks_rng rng, rng_w;
    ks_rng_seed(&rng, 3);
    ks_rng_seed(&rng_w, 3);
    uint32_t switches = 0;
    for (uint32_t t = 0; t < STEPS; t++) {
        uint32_t nb = (PROMPT + t + 1 + bs - 1) / bs, ka = 0, kb = 0;
        assert_int_equal(ks_selection_get(rm, t, 0, nb, &rng, a, ma, &ka, err, sizeof err), KS_OK);
        assert_int_equal(ks_selection_get(rw, t, 0, nb, &rng_w, b, mb, &kb, err, sizeof err), KS_OK);
        mode[t] = !same_set(a, ka, b, kb);
        switches += t > 0 && mode[t] != mode[t - 1];
    }
    free(a);
    free(b);
    free(ma);
    free(mb);
    ks_selection_close(rm);
    ks_selection_close(rw);
    ks_selection_free(mixed);
    ks_selection_free(window);
    ks_scenario_free(sm);
    ks_scenario_free(sw);
    return switches;
}

static void never(void **state)
{
    (void)state;
    static uint8_t mode[STEPS];
    assert_int_equal(modes("0", mode), 0);
    for (uint32_t t = 0; t < STEPS; t++)
        assert_int_equal(mode[t], 0);
}

static void always(void **state)
{
    (void)state;
    static uint8_t mode[STEPS];
    assert_int_equal(modes("1", mode), STEPS - 1);
    for (uint32_t t = 0; t < STEPS; t++)
        assert_int_equal(mode[t], t % 2);
}

static void quarter(void **state)
{
    (void)state;
    static uint8_t mode[STEPS];
    double n = STEPS - 1, want = 0.25 * n, sd = sqrt(n * 0.25 * 0.75);
    uint32_t got = modes("0.25", mode);
    print_message("mixed at 0.25: %u switches in %u steps (%.1f +- %.1f)\n", got, STEPS - 1, want, sd);
    assert_true(fabs(got - want) <= 5 * sd);
    assert_int_equal(mode[0], 0); // it starts with the window
}

// Over 200 steps: topk's selection holds the sink block, the last
// window_blocks blocks and the top budget_tokens / block_size others;
// retrieval's, top blocks alone, with the partial block when there is one.
static void retrieval_alone(void **state)
{
    (void)state;
    struct ks_scenario *st = load("topk", "0"), *sr = load("retrieval", "0");
    struct ks_selection *topk = ks_selection_new(st, err, sizeof err), *retr = ks_selection_new(sr, err, sizeof err);
    if (!topk || !retr)
        fail_msg("ks_selection_new: %s", err);
    struct ks_selection_req *rt = ks_selection_open(topk, 1, PROMPT), *rr = ks_selection_open(retr, 1, PROMPT);
    uint32_t bs = st->cache.block_size, cap = (PROMPT + 200 + bs) / bs, top = st->sparse.budget_tokens / bs;
    uint32_t sink = st->sparse.sink_blocks, win = st->sparse.window_blocks;
    uint32_t *a = malloc(cap * sizeof *a), *b = malloc(cap * sizeof *b);
    float *ma = malloc(cap * sizeof *ma), *mb = malloc(cap * sizeof *mb);
    assert_true(rt && rr && a && b && ma && mb);
    uint32_t sink_in_retrieval = 0;
    for (uint32_t t = 0; t < 200; t++) {
        uint32_t nb = (PROMPT + t + 1 + bs - 1) / bs, ka = 0, kb = 0;
        assert_int_equal(ks_selection_get(rt, t, 0, nb, NULL, a, ma, &ka, err, sizeof err), KS_OK);
        assert_int_equal(ks_selection_get(rr, t, 0, nb, NULL, b, mb, &kb, err, sizeof err), KS_OK);
        assert_int_equal(ka, sink + win + top);
        assert_int_equal(kb, top + ((PROMPT + t + 1) % bs != 0));
        uint32_t forced = 0;
        for (uint32_t i = 0; i < ka; i++)
            forced += a[i] < sink || a[i] >= nb - win;
        assert_int_equal(forced, sink + win);
        for (uint32_t i = 0; i < kb; i++)
            sink_in_retrieval += b[i] < sink;
    }
    print_message("retrieval chose the sink block by score in %u of 200 steps\n", sink_in_retrieval);
    free(a);
    free(b);
    free(ma);
    free(mb);
    ks_selection_close(rt);
    ks_selection_close(rr);
    ks_selection_free(topk);
    ks_selection_free(retr);
    ks_scenario_free(st);
    ks_scenario_free(sr);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(retrieval_alone),
        cmocka_unit_test(never),
        cmocka_unit_test(always),
        cmocka_unit_test(quarter),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
