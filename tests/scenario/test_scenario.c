// test_scenario.c - scenario loading: the default scenario's values, every
// kind of bad input with its field path and line, --set, and the profiles.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "scenario.h"
#include "status.h"

#ifndef KS_SOURCE_DIR
#error "the build defines KS_SOURCE_DIR"
#endif
#define TS KS_SOURCE_DIR "/tests/fixtures/scenarios/"

static char err[1 << 16];

static struct ks_scenario *load(const char *file, const char *const *sets, size_t n)
{
    struct ks_scenario_params p = {.sets = sets, .n_sets = n};
    struct ks_scenario *s = NULL;
    int st = ks_scenario_load(file, &p, &s, err, sizeof err);
    if (st != KS_OK)
        fail_msg("%s refused (%d):\n%s", file, st, err);
    return s;
}

// Refused, and every expected text is in the errors.
static void refused(const char *file, const char *const *sets, size_t n, const char *const *want)
{
    struct ks_scenario_params p = {.sets = sets, .n_sets = n};
    struct ks_scenario *s = NULL;
    int st = ks_scenario_load(file, &p, &s, err, sizeof err);
    if (st == KS_OK)
        fail_msg("%s accepted", file);
    assert_int_equal(st, KS_EINVAL);
    assert_null(s);
    for (size_t i = 0; want[i]; i++)
        if (!strstr(err, want[i]))
            fail_msg("%s: the errors lack '%s':\n%s", file, want[i], err);
}

static void default_scenario(void **state)
{
    (void)state;
    struct ks_scenario *s = load(KS_SOURCE_DIR "/tests/fixtures/scenarios/seed_default.lua", NULL, 0);
    assert_string_equal(s->name, "default");
    assert_true(s->duration == 600);
    assert_int_equal(s->platform.nodes, 1);
    assert_int_equal(s->platform.gpus_per_node, 8);
    assert_string_equal(s->platform.profile, "h200_sxm_pcie5");
    assert_true(s->platform.hbm_bytes == UINT64_C(150754820096)); // 143771 MiB
    assert_true(s->platform.hbm_bw == 4.296e12); // measured by calib gpu on an H200 (2026-12-04)
    assert_true(s->platform.pcie_bw == 54.2e9);
    assert_true(s->platform.copy_overhead == 8.14e-6);
    assert_true(s->platform.ssd.read_bw == 14e9);
    assert_int_equal(s->platform.network.topology, KS_TOPOLOGY_FAT_TREE);
    assert_false(s->platform.remote.present);
    assert_int_equal(s->model.layers, 32);
    assert_int_equal(s->model.kv_heads, 8);
    assert_int_equal(s->model.head_dim, 128);
    assert_int_equal(s->model.dtype, KS_DTYPE_FP16);
    assert_int_equal(ks_scenario_block_bytes(s), 131072); // 128 KiB per block per layer
    assert_int_equal(ks_scenario_step_blocks(s), (1 + 4 + 2048 / 32) * 32);
    assert_int_equal(s->workload.arrival.kind, KS_ARRIVAL_POISSON);
    assert_true(s->workload.arrival.rate == 2);
    assert_int_equal(s->workload.prompt_tokens.kind, KS_DIST_LOGNORMAL);
    assert_true(s->workload.prompt_tokens.sigma == 0.5);
    assert_int_equal(s->workload.output_tokens.kind, KS_DIST_UNIFORM);
    assert_true(s->workload.output_tokens.max == 1024);
    assert_int_equal(s->sparse.policy, KS_SPARSE_WINDOW);
    assert_int_equal(s->cache.block_size, 32);
    assert_true(s->cache.l1.is_share && s->cache.l1.value == 0.85);
    assert_int_equal(s->cache.l3, KS_L3_SSD);
    assert_int_equal(s->cache.evict, KS_EVICT_HEAT);
    assert_int_equal(s->cache.heat_half_life, 256);
    assert_int_equal(s->cache.prefetch_window, 4);
    assert_int_equal(s->cache.migration_batch, 32);
    assert_int_equal(s->cache.compression, KS_COMPRESSION_NONE);
    assert_true(s->slo.itl_p99 == 50e-3);
    assert_true(s->slo.ttft_p99 == 0);
    ks_scenario_free(s);
}

static void defaults(void **state)
{
    (void)state;
    struct ks_scenario *s = load(TS "base.lua", NULL, 0);
    assert_string_equal(s->name, "base"); // the file's name
    assert_int_equal(s->seed, 1);
    assert_int_equal(s->cache.block_size, 32);
    assert_true(s->cache.l1.is_share && s->cache.l1.value == 0.85);
    assert_true(s->cache.l2.is_share && s->cache.l2.value == 0.9);
    assert_int_equal(s->cache.heat_half_life, 256);
    assert_int_equal(s->cache.prefetch_window, 4);
    assert_int_equal(s->cache.migration_batch, 32);
    assert_int_equal(s->cache.evict, KS_EVICT_HEAT);
    assert_int_equal(s->cache.compression, KS_COMPRESSION_NONE);
    assert_int_equal(s->workload.prompt_tokens.kind, KS_DIST_CONSTANT);
    assert_true(s->workload.prompt_tokens.value == 8192);
    ks_scenario_free(s);
}

static void sets(void **state)
{
    (void)state;
    const char *const ok[] = {"cache.block_size=16", "cache.evict=lru", "platform.ssd.read_bw=7GBps",
                              "workload.arrival.rate=2.5", "cache.l1=40GiB", "workload.output_tokens.max=128",
                              "platform.profile=h100_sxm_pcie5"};
    struct ks_scenario *s = load(TS "base.lua", ok, sizeof ok / sizeof ok[0]);
    assert_int_equal(s->cache.block_size, 16);
    assert_int_equal(s->cache.evict, KS_EVICT_LRU);
    assert_true(s->platform.ssd.read_bw == 7e9);
    assert_true(s->workload.arrival.rate == 2.5);
    assert_true(!s->cache.l1.is_share && s->cache.l1.value == 40.0 * (1 << 30));
    assert_true(s->workload.output_tokens.max == 128);
    assert_true(s->platform.hbm_bytes == UINT64_C(85520809984)); // the other profile: 81559 MiB
    assert_string_equal(s->origin[0].from, "default (the file's name)");
    ks_scenario_free(s);

    const char *const bad_path[] = {"cache.blok_size=16", NULL};
    refused(TS "base.lua", bad_path, 1,
            (const char *const[]){"--set: cache.blok_size: unknown field; did you mean 'block_size'?", NULL});
    const char *const bad_value[] = {"cache.block_size=abc", "cache.evict=mru", "platform.pcie_lat=2GBps"};
    refused(TS "base.lua", bad_value, 3,
            (const char *const[]){"--set: cache.block_size: 'abc' is not a number",
                                  "--set: cache.evict: 'mru' is not one of heat, lru, lfu, belady, fifo, random or a Lua function",
                                  "--set: platform.pcie_lat: '2GBps' is a bandwidth; expected a time", NULL});
    // a tier's size is bytes or a share: a bad one is told both forms
    const char *const bad_amount[] = {"cache.l1=abc", "cache.l2=5GBps"};
    refused(TS "base.lua", bad_amount, 2,
            (const char *const[]){"--set: cache.l1: 'abc' is not a number; expected \"80GiB\", \"141GB\" or bytes, "
                                  "or a share such as \"85%\"",
                                  "--set: cache.l2: '5GBps' is a bandwidth; expected a size (\"80GiB\", \"141GB\" or "
                                  "bytes), or a share such as \"85%\"",
                                  NULL});
    const char *const no_eq[] = {"cache.block_size"};
    refused(TS "base.lua", no_eq, 1, (const char *const[]){"expected path=value", NULL});
    const char *const into_number[] = {"workload.prompt_tokens.sigma=1"};
    refused(TS "base.lua", into_number, 1, (const char *const[]){"workload.prompt_tokens is a number", NULL});
}

static void bad_inputs(void **state)
{
    (void)state;
    refused(TS "bad_unknown.lua", NULL, 0,
            (const char *const[]){"bad_unknown.lua:4: cache.blok_size: unknown field; did you mean 'block_size'?",
                                  "bad_unknown.lua:6: worklaod: unknown field; did you mean 'workload'?", NULL});
    refused(TS "bad_unit.lua", NULL, 0,
            (const char *const[]){"bad_unit.lua:4: platform.pcie_lat: '25GBps' is a bandwidth; expected a time",
                                  "bad_unit.lua:5: platform.ssd.read_bw: unknown unit 'GBq'", NULL});
    refused(TS "bad_negative.lua", NULL, 0,
            (const char *const[]){"bad_negative.lua:4: model.weight_bytes: -5 is negative",
                                  "bad_negative.lua:5: model.layers: 'many' is not a number",
                                  "bad_negative.lua:7: cache.l2: '-10GB' is negative", NULL});
    refused(TS "bad_l1_small.lua", NULL, 0,
            (const char *const[]){"bad_l1_small.lua:4: cache.l1: 1MiB is too small for one step of one request: "
                                  "2208 blocks",
                                  NULL});
    refused(TS "bad_l1_hbm.lua", NULL, 0,
            (const char *const[]){"bad_l1_hbm.lua:5: cache.l1: 70GB is more than the 69.52080998GB of HBM left", NULL});
    refused(TS "bad_dist.lua", NULL, 0,
            (const char *const[]){"bad_dist.lua:5: workload.prompt_tokens.sigma: missing",
                                  "bad_dist.lua:6: workload.output_tokens: min (500) is more than max (100)", NULL});
    refused(TS "bad_syntax.lua", NULL, 0, (const char *const[]){"bad_syntax.lua:3:", NULL});
    refused(TS "bad_runtime.lua", NULL, 0,
            (const char *const[]){"bad_runtime.lua:1: boom", "stack traceback", NULL});
    refused(TS "bad_return.lua", NULL, 0, (const char *const[]){"returns number; expected a table", NULL});
    refused(TS "bad_profile.lua", NULL, 0,
            (const char *const[]){"bad_profile.lua:2: platform.profile: no profile 'no_such_part'", NULL});
    refused(TS "bad_inline.lua", NULL, 0,
            (const char *const[]){"bad_inline.lua:6: platform.profile.hbm_bww: unknown field; did you mean 'hbm_bw'?",
                                  "platform.flops: missing", NULL});
    refused(TS "no_such_file.lua", NULL, 0, (const char *const[]){"cannot read", NULL});
    // inconsistent values given through --set
    const char *const arrival[] = {"workload.arrival.kind=closed", "workload.arrival.rate=3"};
    refused(TS "base.lua", arrival, 2,
            (const char *const[]){"--set: workload.arrival.rate: applies to poisson arrivals only", NULL});
    const char *const remote[] = {"cache.l3=remote"};
    refused(TS "base.lua", remote, 1, (const char *const[]){"cache.l3: L3 in remote memory needs", NULL});
    const char *const weights[] = {"model.weight_bytes=200GB"};
    refused(TS "base.lua", weights, 1, (const char *const[]){"model.weight_bytes: 200GB of weights leave no room",
                                                             NULL});
    const char *const zero[] = {"cache.block_size=0", "sparse.stride=-1"};
    refused(TS "base.lua", zero, 2,
            (const char *const[]){"cache.block_size: must be more than 0", "sparse.stride: -1 is negative", NULL});
    const char *const many[] = {"cache.block_size=x", "cache.heat_half_life=x", "cache.migration_batch=x"};
    struct ks_scenario_params p = {.sets = many, .n_sets = 3, .max_errors = 2};
    struct ks_scenario *s;
    assert_int_equal(ks_scenario_load(TS "base.lua", &p, &s, err, sizeof err), KS_EINVAL);
    assert_non_null(strstr(err, "1 more errors not shown"));
}

static void inline_profile(void **state)
{
    (void)state;
    struct ks_scenario *s = load(TS "inline.lua", NULL, 0);
    assert_string_equal(s->platform.profile, "inline");
    assert_true(s->platform.remote.present);
    assert_true(s->platform.remote.bytes == UINT64_C(8) << 40);
    assert_true(s->platform.flops == 312e12);
    assert_int_equal(s->cache.l3, KS_L3_REMOTE);
    ks_scenario_free(s);
}

// Every profile shipped in calib/profiles/ (the datasheet ones and those
// measured on the project's machines) loads, and each of its figures names
// its source and kind.
static void profiles(void **state)
{
    (void)state;
    char dir[512];
    snprintf(dir, sizeof dir, "%s/calib/profiles", KS_SOURCE_DIR);
    DIR *d = opendir(dir);
    assert_non_null(d);
    char names[32][64];
    size_t n = 0;
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        size_t len = strlen(e->d_name);
        if (len > 4 && len - 4 < sizeof names[0] && strcmp(e->d_name + len - 4, ".lua") == 0) {
            assert_true(n < sizeof names / sizeof names[0]);
            snprintf(names[n++], sizeof names[0], "%.*s", (int)(len - 4), e->d_name);
        }
    }
    closedir(d);
    assert_true(n >= 9); // the five datasheet profiles, two measured hosts, two CPU runtimes
    for (size_t i = 0; i < n; i++) {
        char file[512], set[128];
        snprintf(file, sizeof file, "%s/calib/profiles/%s.lua", KS_SOURCE_DIR, names[i]);
        if (ks_scenario_check_profile(file, NULL, err, sizeof err) != KS_OK)
            fail_msg("%s:\n%s", file, err);
        snprintf(set, sizeof set, "platform.profile=%s", names[i]);
        const char *const sets[] = {set, "platform.gpus_per_node=1"};
        // a profile with a kernel table was measured for one head shape: the
        // validation scenarios have it (a scenario of another shape is refused)
        char text[1 << 16];
        FILE *f = fopen(file, "r");
        assert_non_null(f);
        text[fread(text, 1, sizeof text - 1, f)] = 0;
        fclose(f);
        int kernels = strstr(text, "kernel_time = {") != NULL;
        struct ks_scenario *s = kernels ? load(KS_SOURCE_DIR "/scenarios/validation/resident.lua", sets, 2)
                                        : load(TS "base.lua", sets, 2);
        assert_string_equal(s->platform.profile, names[i]);
        // every figure names its source and kind, or is an unset option
        // (the validation scenario sets a few figures itself: they have none)
        int from_profile = 0;
        for (int k = 6; k < 26; k++) {
            int profile = strncmp(s->origin[k].from, "profile ", 8) == 0;
            from_profile += profile;
            if (profile || (!kernels && strcmp(s->origin[k].from, "not set") != 0)) {
                assert_non_null(s->origin[k].source);
                assert_non_null(s->origin[k].kind);
            }
        }
        if (from_profile < 12)
            fail_msg("%s: %d platform figures from the profile", names[i], from_profile);
        ks_scenario_free(s);
    }
    // a profile figure without its source is refused
    assert_int_equal(ks_scenario_check_profile(TS "bad_unit.lua", NULL, err, sizeof err), KS_EINVAL);
}

// host_wake: read from the scenario (or the profile), interpolated linearly
// in log(idle) between its points and clamped at its ends; a bad table is
// refused with its file and field.
static void host_wake(void **state)
{
    (void)state;
    struct ks_scenario *s = load(TS "closed_form_wake.lua", NULL, 0);
    const struct ks_host_wake *w = &s->platform.host_wake;
    assert_int_equal(w->n, 1);
    assert_string_equal(w->source, "a test figure");
    assert_true(ks_host_wake_time(w, 1e-9) == 10e-6);
    assert_true(ks_host_wake_time(w, 1e3) == 10e-6);
    ks_scenario_free(s);
    s = load(TS "closed_form_miss.lua", NULL, 0);
    assert_int_equal(s->platform.host_wake.n, 0);
    assert_true(ks_host_wake_time(&s->platform.host_wake, 1) == 0);
    ks_scenario_free(s);
    double idle[] = {1e-4, 1e-3, 1e-2}, sec[] = {10e-6, 40e-6, 100e-6};
    struct ks_host_wake t = {.n = 3, .idle = idle, .seconds = sec};
    assert_float_equal(ks_host_wake_time(&t, 1e-5), 10e-6, 1e-15);     // below the first point
    assert_float_equal(ks_host_wake_time(&t, 1e-3), 40e-6, 1e-15);     // at a point
    assert_float_equal(ks_host_wake_time(&t, 1e-3 * sqrt(10)), 70e-6, 1e-12); // halfway in log
    assert_float_equal(ks_host_wake_time(&t, 1), 100e-6, 1e-15);       // above the last
    refused(TS "bad_host_wake.lua", NULL, 0,
            (const char *const[]){"bad_host_wake.lua: platform.host_wake.idle: entry [2]: idle times are "
                                  "strictly increasing",
                                  "bad_host_wake.lua: platform.host_wake.samples: unknown field", NULL});
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(default_scenario), cmocka_unit_test(defaults),       cmocka_unit_test(sets),
        cmocka_unit_test(bad_inputs),       cmocka_unit_test(inline_profile), cmocka_unit_test(profiles),
        cmocka_unit_test(host_wake),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
