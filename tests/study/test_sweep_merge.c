// test_sweep_merge.c - a point's result counts only when it is complete: its
// /summary matches its JSON report and its writer finished (the root attribute
// `complete` = 1, which ks_run_write writes last).
#define _POSIX_C_SOURCE 200809L // mkdtemp

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "tmpdir.h"

#include "results.h"
#include "status.h"
#include "sweep_merge.h"

static char dir[64];

static int setup(void **state)
{
    (void)state;
    return ks_tmpdir_make(dir, sizeof dir, "ks-merge");
}

static int teardown(void **state)
{
    (void)state;
    return ks_tmpdir_remove(dir);
}

// Writes DIR/NAME.h5 with /summary tokens = 42 and, when complete >= 0, the
// root attribute complete = complete; and DIR/NAME.json, its report.
static void point(const char *name, int complete, char *h5, char *json, size_t len)
{
    char err[256];
    snprintf(h5, len, "%s/%s.h5", dir, name);
    snprintf(json, len, "%s/%s.json", dir, name);
    struct ks_results *r = ks_results_open(h5, err, sizeof err);
    assert_non_null(r);
    assert_int_equal(ks_results_attr_int(r, "/summary", "tokens", 42), KS_OK);
    if (complete >= 0)
        assert_int_equal(ks_results_attr_int(r, "/", "complete", complete), KS_OK);
    assert_int_equal(ks_results_commit(r), KS_OK);
    FILE *f = fopen(json, "w");
    assert_non_null(f);
    fprintf(f, "{\"result\": \"%s.h5\", \"tokens\": 42}\n", name);
    assert_int_equal(fclose(f), 0);
}

static void complete_point_counts(void **state)
{
    (void)state;
    char h5[128], json[128], why[512];
    point("done", 1, h5, json, sizeof h5);
    json_t *figs = NULL;
    assert_int_equal(ks_sweep_merge_check(h5, json, &figs, why, sizeof why), 1);
    assert_non_null(figs);
    assert_true(json_number_value(json_object_get(figs, "tokens")) == 42.0);
    json_decref(figs);
}

// The same summary and report without the attribute: what a writer that
// never finished leaves, or a file from before the check.
static void incomplete_point_refused(void **state)
{
    (void)state;
    char h5[128], json[128], why[512];
    point("unfinished", -1, h5, json, sizeof h5);
    json_t *figs = NULL;
    assert_int_equal(ks_sweep_merge_check(h5, json, &figs, why, sizeof why), 0);
    assert_null(figs);
    assert_non_null(strstr(why, "unfinished.h5: an incomplete result: attribute /complete is missing"));
    point("zero", 0, h5, json, sizeof h5);
    assert_int_equal(ks_sweep_merge_check(h5, json, NULL, why, sizeof why), 0);
    assert_non_null(strstr(why, "zero.h5: an incomplete result: attribute /complete is 0, not 1"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(complete_point_counts),
        cmocka_unit_test(incomplete_point_refused),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
