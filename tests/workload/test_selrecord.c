// test_selrecord.c - a dsa trace holds, record for record, what the selection
// module returns to a run (sim/workload/selrecord.h), so trace stats' figures
// on it are the dsa model's; replayed through the selection module it gives
// the same selections again. On tests/fixtures/scenarios/dsa_small.lua with
// 1- and 16-token blocks.
#define _POSIX_C_SOURCE 200809L // mkstemp

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rng.h"
#include "scenario.h"
#include "selection.h"
#include "selrecord.h"
#include "status.h"
#include "trace.h"
#include "workload.h"

#ifndef KS_SOURCE_DIR
#error "the build defines KS_SOURCE_DIR"
#endif
#define SCENARIO KS_SOURCE_DIR "/tests/fixtures/scenarios/dsa_small.lua"

enum { REQUESTS = 3, STEPS = 20 };

static char err[4096];

static struct ks_scenario *load(const char *block_size)
{
    char set[64];
    snprintf(set, sizeof set, "cache.block_size=%s", block_size);
    const char *sets[] = {set};
    struct ks_scenario_params p = {.sets = sets, .n_sets = 1};
    struct ks_scenario *s = NULL;
    if (ks_scenario_load(SCENARIO, &p, &s, err, sizeof err) != KS_OK)
        fail_msg("ks_scenario_load: %s", err);
    return s;
}

static struct ks_trace *record(const struct ks_scenario *s, const char *path)
{
    struct ks_selrecord_params p = {.sc = s, .path = path, .requests = REQUESTS, .steps = STEPS};
    struct ks_recorder_stats rs;
    if (ks_selrecord_run(&p, &rs, err, sizeof err) != KS_OK)
        fail_msg("ks_selrecord_run: %s", err);
    assert_int_equal(rs.records, (uint64_t)REQUESTS * STEPS * s->model.layers);
    assert_true(strstr(rs.source, "dsa") != NULL);
    struct ks_trace *t = ks_trace_load(path, err, sizeof err);
    if (!t)
        fail_msg("ks_trace_load: %s", err);
    return t;
}

// Every record of t is what policy `s` (dsa, or trace replaying t) returns
// for request i (the workload's i-th: its id and prompt), step and layer, at
// a context of prompt + step + 1 tokens; kernel_time -1.
static void same_as_selection(const struct ks_scenario *s, const struct ks_trace *t)
{
    struct ks_selection *sel = ks_selection_new(s, err, sizeof err);
    struct ks_workload *wl = ks_workload_new(s, err, sizeof err);
    if (!sel || !wl)
        fail_msg("%s", err);
    uint32_t bs = s->cache.block_size, cap = (s->workload.prompt_tokens.max + STEPS + bs) / bs;
    uint32_t *blocks = malloc(cap * sizeof *blocks);
    float *mass = malloc(cap * sizeof *mass);
    struct ks_rng rng;
    ks_rng_seed(&rng, 7);
    for (uint32_t i = 0; i < REQUESTS; i++) {
        struct ks_request_spec spec;
        assert_int_equal(ks_workload_next(wl, &spec), 1);
        assert_int_equal(spec.id, i); // the run's request id i is the trace's request i
        struct ks_selection_req *sr = ks_selection_open(sel, spec.id, spec.prompt_tokens);
        assert_non_null(sr);
        for (uint32_t st = 0; st < STEPS; st++)
            for (uint32_t l = 0; l < s->model.layers; l++) {
                uint32_t ctx = spec.prompt_tokens + st + 1, nb = (ctx + bs - 1) / bs, k = 0;
                assert_in_range(nb, 1, cap);
                assert_int_equal(ks_selection_get(sr, st, l, nb, &rng, blocks, mass, &k, err, sizeof err), KS_OK);
                const struct ks_trace_step *r = ks_trace_at(t, i, st, l);
                assert_non_null(r);
                assert_int_equal(r->context, ctx);
                assert_true(r->kernel_time < 0);
                assert_int_equal(r->n, k);
                assert_true(k > 0);
                for (uint32_t j = 0; j < k; j++) {
                    assert_int_equal(t->sel[r->first + j].block, blocks[j]);
                    assert_true(t->sel[r->first + j].mass == mass[j]); // bit for bit
                }
            }
        ks_selection_close(sr);
    }
    free(blocks);
    free(mass);
    ks_workload_free(wl);
    ks_selection_free(sel);
}

static void check(const char *block_size)
{
    struct ks_scenario *s = load(block_size);
    char path[] = "/tmp/ks-test-selrecord-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    struct ks_trace *t = record(s, path);
    assert_int_equal(t->meta.block_size, s->cache.block_size);
    assert_int_equal(t->meta.layers, s->model.layers);
    same_as_selection(s, t); // the dsa model's own selections
    // the same trace replayed (sparse.policy = "trace") gives them again
    struct ks_scenario r = *s;
    r.sparse.policy = KS_SPARSE_TRACE;
    r.sparse.file = path;
    same_as_selection(&r, t);
    unlink(path);
    ks_trace_free(t);
    ks_scenario_free(s);
}

static void token_blocks(void **state)
{
    (void)state;
    check("1");
}

static void sixteen_token_blocks(void **state)
{
    (void)state;
    check("16");
}

// Only dsa is recorded this way; nothing is written for another policy.
static void other_policies_refused(void **state)
{
    (void)state;
    struct ks_scenario *s = load("16");
    s->sparse.policy = KS_SPARSE_TOPK;
    assert_int_equal(ks_selrecord_supports(s), 0);
    const char *path = "/tmp/ks-test-selrecord-topk.h5";
    struct ks_selrecord_params p = {.sc = s, .path = path, .requests = 1, .steps = 1};
    struct ks_recorder_stats rs;
    assert_int_equal(ks_selrecord_run(&p, &rs, err, sizeof err), KS_EINVAL);
    assert_true(strstr(err, "dsa") != NULL);
    assert_int_equal(access(path, F_OK), -1);
    ks_scenario_free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(token_blocks),
        cmocka_unit_test(sixteen_token_blocks),
        cmocka_unit_test(other_policies_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
