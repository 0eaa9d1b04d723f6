// test_calib_profile.c - the profile writer (calib/profile.h): a profile made
// from a base with measured figures loads through the scenario loader with
// exactly those figures and the base's others; older profiles without the
// new SSD figures still load (defaults 0); a bad figure or an unwritable
// place leaves no file behind; the file gets an ordinary file's mode (0666
// less the umask), not mkstemp's 0600; a table with fields besides its lists
// (calib gpu's kernel_time: batch, shape, backend) loads as the simulator's
// kernel_time, and a field that is not a finite number is refused.
#define _POSIX_C_SOURCE 200809L // mkdtemp

#include <dirent.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "profile.h"
#include "scenario.h"
#include "status.h"

#define DEFAULT_SCENARIO KS_TEST_SOURCE_DIR "/tests/fixtures/scenarios/seed_default.lua"

static char dir[512];

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "%s/calib_profile_XXXXXX", KS_TEST_BINARY_DIR);
    return mkdtemp(dir) ? 0 : -1;
}

// Removes the test's directory and what is in it.
static int teardown(void **state)
{
    (void)state;
    DIR *d = opendir(dir);
    struct dirent *e;
    char p[1024];
    while (d && (e = readdir(d)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
            snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
            unlink(p);
        }
    if (d)
        closedir(d);
    return rmdir(dir);
}

static int files_in_dir(void)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    int n = 0;
    while (d && (e = readdir(d)))
        n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
    if (d)
        closedir(d);
    return n;
}

static const struct ks_calib_figure figs[] = {
    {"dram_bw", "12.5GBps", "test: measured here", "measured"},
    {"ssd.count", "1", "test: one drive", "measured"},
    {"ssd.read_bw", "700MBps", "test: fit", "measured"},
    {"ssd.lat", "62us", "test: fit", "measured"},
    {"ssd.read_op_time", "8us", "test: fit", "measured"},
    {"ssd.write_op_time", "9us", "test: fit", "measured"},
};

static struct ks_scenario *load_with(const char *profile, const char *dirs)
{
    char set[256], err[8192];
    snprintf(set, sizeof set, "platform.profile=%s", profile);
    const char *sets[] = {set};
    struct ks_scenario_params p = {.sets = sets, .n_sets = 1, .profile_dirs = dirs};
    struct ks_scenario *s = NULL;
    int st = ks_scenario_load(DEFAULT_SCENARIO, &p, &s, err, sizeof err);
    if (st != KS_OK)
        fail_msg("%s", err);
    return s;
}

static void round_trip(void **state)
{
    (void)state;
    char out[1024], base[1024], err[4096];
    snprintf(out, sizeof out, "%s/rt_test.lua", dir);
    snprintf(base, sizeof base, "%s/calib/profiles/h200_sxm_pcie5.lua", KS_TEST_SOURCE_DIR);
    struct ks_calib_profile p = {.base_file = base, .name = "rt_test", .part = "test part", .notes = "test",
                                 .comment = "line one\nline two", .figs = figs, .n_figs = 6};
    assert_int_equal(ks_calib_profile_write(&p, out, err, sizeof err), KS_OK);
    assert_int_equal(files_in_dir(), 1); // no temporary left
    struct ks_scenario *s = load_with("rt_test", dir);
    assert_true(s->platform.dram_bw == 12.5e9);
    assert_true(s->platform.ssd.read_bw == 700e6);
    assert_true(s->platform.ssd.lat == 62e-6);
    assert_true(s->platform.ssd.read_op_time == 8e-6);
    assert_true(s->platform.ssd.write_op_time == 9e-6);
    assert_int_equal(s->platform.ssd.count, 1);
    assert_true(s->platform.hbm_bw == 4.296e12); // the base's, kept
    assert_true(s->platform.ssd.write_bw == 7e9); // the base's, not replaced
    ks_scenario_free(s);
    // the base itself has no op times: they default to 0
    s = load_with("h200_sxm_pcie5", NULL);
    assert_true(s->platform.ssd.read_op_time == 0 && s->platform.ssd.write_op_time == 0);
    ks_scenario_free(s);
}

// The written profile's permission bits under umask `mask`.
static mode_t mode_under(mode_t mask)
{
    char out[1024], base[1024], err[4096];
    snprintf(out, sizeof out, "%s/mode_test.lua", dir);
    snprintf(base, sizeof base, "%s/calib/profiles/h200_sxm_pcie5.lua", KS_TEST_SOURCE_DIR);
    struct ks_calib_profile p = {.base_file = base, .name = "mode_test", .figs = figs, .n_figs = 6};
    mode_t old = umask(mask);
    int st = ks_calib_profile_write(&p, out, err, sizeof err);
    umask(old);
    if (st != KS_OK)
        fail_msg("%s", err);
    struct stat sb;
    assert_int_equal(stat(out, &sb), 0);
    assert_int_equal(unlink(out), 0);
    return sb.st_mode & 07777;
}

static void ordinary_mode(void **state)
{
    (void)state;
    assert_int_equal(mode_under(022), 0644);
    assert_int_equal(mode_under(027), 0640);
    assert_int_equal(mode_under(002), 0664);
}

static void kernel_table(void **state)
{
    (void)state;
    char out[1024], base[1024], err[4096];
    snprintf(out, sizeof out, "%s/kt_test.lua", dir);
    snprintf(base, sizeof base, "%s/calib/profiles/h200_sxm_pcie5.lua", KS_TEST_SOURCE_DIR);
    const double blocks[] = {8, 16, 64}, sec[] = {1.5e-5, 2.25e-5, 6.125e-5};
    const struct ks_calib_list lists[] = {{"blocks", blocks}, {"seconds", sec}};
    struct ks_calib_field fields[] = {
        {"batch", NULL, 32},      {"kv_heads", NULL, 8},     {"q_heads", NULL, 32}, {"head_dim", NULL, 128},
        {"block_size", NULL, 32}, {"backend", "cuda", 0}, {"dtype", "fp16", 0},
    };
    const struct ks_calib_table tab = {.key = "kernel_time", .lists = lists, .n_lists = 2, .n = 3, .fields = fields,
                                       .n_fields = 7, .source = "test: kernel table", .kind = "measured"};
    struct ks_calib_profile p = {.base_file = base, .name = "kt_test", .figs = figs, .n_figs = 6, .tables = &tab,
                                 .n_tables = 1};
    assert_int_equal(ks_calib_profile_write(&p, out, err, sizeof err), KS_OK);
    struct ks_scenario *s = load_with("kt_test", dir);
    const struct ks_kernel_time *kt = &s->platform.kernel_time;
    assert_int_equal(kt->n, 3);
    assert_int_equal(kt->batch, 32);
    for (int i = 0; i < 3; i++) {
        assert_int_equal(kt->blocks[i], (uint32_t)blocks[i]);
        assert_true(kt->seconds[i] == sec[i]);
    }
    ks_scenario_free(s);
    // a shape the scenario does not have: the loader refuses it, so the
    // fields were written where it reads them
    fields[1].v = 4;
    assert_int_equal(ks_calib_profile_write(&p, out, err, sizeof err), KS_OK);
    char set[256], lerr[8192];
    snprintf(set, sizeof set, "platform.profile=kt_test");
    const char *sets[] = {set};
    struct ks_scenario_params sp = {.sets = sets, .n_sets = 1, .profile_dirs = dir};
    s = NULL;
    assert_int_not_equal(ks_scenario_load(DEFAULT_SCENARIO, &sp, &s, lerr, sizeof lerr), KS_OK);
    assert_non_null(strstr(lerr, "kv_heads = 4"));
    ks_scenario_free(s);
    fields[0].v = NAN;
    assert_int_equal(ks_calib_profile_write(&p, out, err, sizeof err), KS_EINVAL);
    assert_non_null(strstr(err, "kernel_time.batch"));
}

static void refused_leaves_nothing(void **state)
{
    (void)state;
    char out[1024], base[1024], err[4096];
    snprintf(out, sizeof out, "%s/bad.lua", dir);
    snprintf(base, sizeof base, "%s/calib/profiles/h200_sxm_pcie5.lua", KS_TEST_SOURCE_DIR);
    const struct ks_calib_figure bad[] = {{"dram_bw", "12 parsecs", "test", "measured"}};
    struct ks_calib_profile p = {.base_file = base, .name = "bad", .figs = bad, .n_figs = 1};
    assert_int_equal(ks_calib_profile_write(&p, out, err, sizeof err), KS_EINVAL);
    assert_non_null(strstr(err, "dram_bw"));
    assert_int_equal(files_in_dir(), 0);
    const struct ks_calib_figure badkind[] = {{"dram_bw", "1GBps", "test", "guessed"}};
    p.figs = badkind;
    assert_int_equal(ks_calib_profile_write(&p, out, err, sizeof err), KS_EINVAL);
    assert_int_equal(files_in_dir(), 0);
    p.figs = figs;
    assert_int_equal(ks_calib_profile_write(&p, "/nonexistent-ks/x.lua", err, sizeof err), KS_EIO);
    p.base_file = "/nonexistent-ks/base.lua";
    assert_int_equal(ks_calib_profile_write(&p, out, err, sizeof err), KS_EINVAL);
    assert_int_equal(files_in_dir(), 0);
}

static void find(void **state)
{
    (void)state;
    char *f = ks_calib_profile_find("h200_sxm_pcie5");
    assert_non_null(f);
    assert_non_null(strstr(f, "calib/profiles/h200_sxm_pcie5.lua"));
    free(f);
    assert_null(ks_calib_profile_find("nosuch_profile"));
    assert_null(ks_calib_profile_find("/nonexistent-ks/x.lua"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(round_trip, setup, teardown),
        cmocka_unit_test_setup_teardown(refused_leaves_nothing, setup, teardown),
        cmocka_unit_test_setup_teardown(ordinary_mode, setup, teardown),
        cmocka_unit_test_setup_teardown(kernel_table, setup, teardown),
        cmocka_unit_test(find),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
