// test_cmdline.c - a command line as text (sim/base/cmdline.h): head, then
// the words joined by spaces; cut at any buffer size to a prefix of the whole
// line, the way the two recorders it replaced (bench kernels, calib) cut it.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "cmdline.h"

static void joins_head_and_words(void **state)
{
    (void)state;
    char buf[256];
    char *argv[] = {"--backend", "ref", "--blocks", "4,8", NULL};
    ks_cmdline_format(buf, sizeof buf, 4, argv, "kvstrata bench kernels");
    assert_string_equal(buf, "kvstrata bench kernels --backend ref --blocks 4,8");
    ks_cmdline_format(buf, sizeof buf, 2, argv, "kvstrata %s", "calib host");
    assert_string_equal(buf, "kvstrata calib host --backend ref");
    ks_cmdline_format(buf, sizeof buf, 0, argv, "kvstrata %s", "calib gpu");
    assert_string_equal(buf, "kvstrata calib gpu");
}

// The recorder bench_kernels_cmd.c had, for comparison.
static void old_format(char *buf, size_t len, int argc, char **argv)
{
    size_t n = (size_t)snprintf(buf, len, "kvstrata bench kernels");
    for (int i = 0; i < argc && n < len; i++)
        n += (size_t)snprintf(buf + n, len - n, " %s", argv[i]);
}

static void cut_short_as_before(void **state)
{
    (void)state;
    char *argv[] = {"--kernels", "sparse,dense", "--profile", "/some/long/path/kt.lua", "-q", ""};
    char full[512];
    ks_cmdline_format(full, sizeof full, 6, argv, "kvstrata %s", "bench kernels");
    for (size_t len = 1; len <= strlen(full) + 2; len++) {
        char got[512], want[512];
        memset(got, 'x', sizeof got);
        ks_cmdline_format(got, len, 6, argv, "kvstrata %s", "bench kernels");
        old_format(want, len, 6, argv);
        assert_string_equal(got, want);
        assert_true(strlen(got) < len);
        assert_memory_equal(got, full, strlen(got));
        assert_int_equal(got[len], 'x'); // nothing written past the buffer
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(joins_head_and_words),
        cmocka_unit_test(cut_short_as_before),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
