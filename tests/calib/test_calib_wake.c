// test_calib_wake.c - the wake-up benchmark (calib/wake.h): its order
// statistics are ordered and positive, a call lasts at least its idle spins,
// and the inputs it refuses. It times real wake-ups, so it checks bounds
// that hold on any machine, never figures. Then the figures' way into a
// profile: host_wake written by the profile writer (calib/profile.h) loads
// through the scenario loader with exactly the numbers written, a base
// profile's own host_wake is replaced, not repeated, and a value that is not
// a number is refused.
#define _POSIX_C_SOURCE 200809L // mkdtemp

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "clock.h"
#include "profile.h"
#include "scenario.h"
#include "status.h"
#include "wake.h"

#define DEFAULT_SCENARIO KS_TEST_SOURCE_DIR "/tests/fixtures/scenarios/seed_default.lua"

static void check_order(const struct ks_wake_result *r, unsigned samples)
{
    assert_int_equal(r->samples, samples);
    assert_true(r->min > 0); // a wake-up follows its signal: the clock moved
    assert_true(r->min <= r->p10 && r->p10 <= r->median && r->median <= r->p90 && r->p90 <= r->max);
    assert_true(r->max < 10); // seconds: a wake-up that slow is a broken benchmark, not a slow machine
}

// Idle times as calib host uses them, shortened: each call lasts at least
// samples * idle (the caller spins that long before every signal), and a
// longer idle never makes the call shorter than that.
static void idle_times(void **state)
{
    (void)state;
    const struct ks_wake_params pts[] = {{1e-4, 50}, {1e-3, 20}, {1e-2, 5}};
    for (size_t i = 0; i < sizeof pts / sizeof pts[0]; i++) {
        struct ks_wake_result r;
        double t0 = ks_clock_mono();
        assert_int_equal(ks_wake_run(&pts[i], &r), KS_OK);
        double wall = ks_clock_mono() - t0;
        check_order(&r, pts[i].samples);
        assert_true(wall >= pts[i].idle * pts[i].samples);
    }
}

// One sample: every statistic is that sample.
static void one_sample(void **state)
{
    (void)state;
    struct ks_wake_params p = {.idle = 1e-4, .samples = 1};
    struct ks_wake_result r;
    assert_int_equal(ks_wake_run(&p, &r), KS_OK);
    check_order(&r, 1);
    assert_true(r.min == r.max && r.p10 == r.min && r.median == r.min && r.p90 == r.min);
}

static void bad_input(void **state)
{
    (void)state;
    const struct ks_wake_params bad[] = {
        {.idle = 0, .samples = 10},                        // no idle time
        {.idle = -1e-3, .samples = 10},
        {.idle = KS_WAKE_MAX_IDLE * 2, .samples = 10},     // above the bound
        {.idle = 1e-3, .samples = 0},                      // nothing to time
        {.idle = 1e-3, .samples = KS_WAKE_MAX_SAMPLES + 1},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        struct ks_wake_result r = {.samples = 1, .median = 1, .p10 = 1, .p90 = 1, .min = 1, .max = 1};
        assert_int_equal(ks_wake_run(&bad[i], &r), KS_EINVAL);
        assert_true(r.samples == 0 && r.median == 0 && r.p10 == 0 && r.p90 == 0 && r.min == 0 && r.max == 0);
    }
    struct ks_wake_params nan_idle = {.idle = 0.0 / 0.0, .samples = 1};
    struct ks_wake_result r;
    assert_int_equal(ks_wake_run(&nan_idle, &r), KS_EINVAL);
    assert_int_equal(ks_wake_run(NULL, &r), KS_EINVAL);
}

static struct ks_scenario *load_profile(const char *name, const char *dir)
{
    char set[256], err[8192];
    snprintf(set, sizeof set, "platform.profile=%s", name);
    const char *sets[] = {set};
    struct ks_scenario_params p = {.sets = sets, .n_sets = 1, .profile_dirs = dir};
    struct ks_scenario *s = NULL;
    if (ks_scenario_load(DEFAULT_SCENARIO, &p, &s, err, sizeof err) != KS_OK)
        fail_msg("%s", err);
    return s;
}

// Times of `key =` in a file.
static int occurrences(const char *file, const char *key)
{
    FILE *f = fopen(file, "r");
    assert_non_null(f);
    char line[8192];
    int n = 0;
    while (fgets(line, sizeof line, f))
        for (const char *c = line; (c = strstr(c, key)); c += strlen(key))
            n++;
    fclose(f);
    return n;
}

// Measured figures into a profile as calib host writes them, and back.
static void profile_round_trip(void **state)
{
    (void)state;
    char dir[512], out[1024], again[1024], base[1024], err[4096];
    snprintf(dir, sizeof dir, "%s/calib_wake_XXXXXX", KS_TEST_BINARY_DIR);
    assert_non_null(mkdtemp(dir));
    snprintf(out, sizeof out, "%s/wake_a.lua", dir);
    snprintf(again, sizeof again, "%s/wake_b.lua", dir);
    snprintf(base, sizeof base, "%s/calib/profiles/h200_sxm_pcie5.lua", KS_TEST_SOURCE_DIR);

    double idle[] = {1e-4, 1e-3}, sec[2];
    for (int i = 0; i < 2; i++) {
        struct ks_wake_params p = {.idle = idle[i], .samples = 5};
        struct ks_wake_result r;
        assert_int_equal(ks_wake_run(&p, &r), KS_OK);
        sec[i] = r.median; // a full double: the writer must keep every bit
    }
    const struct ks_calib_list lists[] = {{"idle", idle}, {"seconds", sec}};
    const struct ks_calib_table tab = {.key = "host_wake", .lists = lists, .n_lists = 2, .n = 2,
                                       .source = "test: measured \"here\"", .kind = "measured"};
    struct ks_calib_profile p = {.base_file = base, .name = "wake_a", .part = "test", .notes = "test",
                                 .tables = &tab, .n_tables = 1};
    assert_int_equal(ks_calib_profile_write(&p, out, err, sizeof err), KS_OK);
    struct ks_scenario *s = load_profile("wake_a", dir);
    const struct ks_host_wake *w = &s->platform.host_wake;
    assert_int_equal(w->n, 2);
    for (int i = 0; i < 2; i++) {
        assert_true(w->idle[i] == idle[i]);
        assert_true(w->seconds[i] == sec[i]);
    }
    assert_string_equal(w->source, "test: measured \"here\"");
    ks_scenario_free(s);

    // the written profile as a base: its host_wake is replaced, by fewer points
    double idle1[] = {1e-2}, sec1[] = {1.25e-4};
    const struct ks_calib_list lists1[] = {{"idle", idle1}, {"seconds", sec1}};
    const struct ks_calib_table tab1 = {.key = "host_wake", .lists = lists1, .n_lists = 2, .n = 1,
                                        .source = "test: again", .kind = "measured"};
    p.base_file = out;
    p.name = "wake_b";
    p.tables = &tab1;
    assert_int_equal(ks_calib_profile_write(&p, again, err, sizeof err), KS_OK);
    assert_int_equal(occurrences(again, "host_wake ="), 1);
    s = load_profile("wake_b", dir);
    w = &s->platform.host_wake;
    assert_int_equal(w->n, 1);
    assert_true(w->idle[0] == 1e-2 && w->seconds[0] == 1.25e-4);
    assert_string_equal(w->source, "test: again");
    ks_scenario_free(s);

    // and without a table the base's host_wake is kept as it was
    p.base_file = again;
    p.name = "wake_c";
    p.tables = NULL;
    p.n_tables = 0;
    snprintf(out, sizeof out, "%s/wake_c.lua", dir);
    assert_int_equal(ks_calib_profile_write(&p, out, err, sizeof err), KS_OK);
    s = load_profile("wake_c", dir);
    w = &s->platform.host_wake;
    assert_int_equal(w->n, 1);
    assert_true(w->idle[0] == 1e-2 && w->seconds[0] == 1.25e-4);
    ks_scenario_free(s);

    // a value that is not a number: refused, and no file left behind
    double bad_sec[] = {0.0 / 0.0};
    const struct ks_calib_list bad_lists[] = {{"idle", idle1}, {"seconds", bad_sec}};
    const struct ks_calib_table bad = {.key = "host_wake", .lists = bad_lists, .n_lists = 2, .n = 1,
                                       .source = "test", .kind = "measured"};
    p.tables = &bad;
    p.n_tables = 1;
    p.name = "wake_d";
    snprintf(out, sizeof out, "%s/wake_d.lua", dir);
    assert_int_equal(ks_calib_profile_write(&p, out, err, sizeof err), KS_EINVAL);
    assert_non_null(strstr(err, "host_wake.seconds[1]"));
    assert_int_equal(access(out, F_OK), -1);

    const char *files[] = {"wake_a.lua", "wake_b.lua", "wake_c.lua"};
    for (size_t i = 0; i < 3; i++) {
        snprintf(out, sizeof out, "%s/%s", dir, files[i]);
        assert_int_equal(unlink(out), 0);
    }
    assert_int_equal(rmdir(dir), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(idle_times),
        cmocka_unit_test(one_sample),
        cmocka_unit_test(bad_input),
        cmocka_unit_test(profile_round_trip),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
