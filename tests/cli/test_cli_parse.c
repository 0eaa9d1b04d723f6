// test_cli_parse.c - the strict option parser: numbers at their edges, both
// value forms, and every kind of usage error.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <string.h>

#include "cli.h"

static uint64_t u64(const char *s, uint64_t min, uint64_t max, int *ok)
{
    char why[256];
    uint64_t v = 0;
    *ok = ks_cli_parse_u64(s, min, max, &v, why, sizeof why) == 0;
    return v;
}

static void integers(void **state)
{
    (void)state;
    int ok;
    assert_int_equal(u64("123", 0, UINT64_MAX, &ok), 123);
    assert_true(ok);
    assert_int_equal(u64("0", 0, 10, &ok), 0);
    assert_true(ok);
    assert_true(u64("18446744073709551615", 0, UINT64_MAX, &ok) == UINT64_MAX);
    assert_true(ok);
    const char *bad[] = {"", "abc", "-5", "+5", " 5", "5 ", "0x10", "1e3", "1.0", "5k",
                         "18446744073709551616", "99999999999999999999999"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        u64(bad[i], 0, UINT64_MAX, &ok);
        assert_false(ok);
    }
    u64("4294967296", 0, UINT32_MAX, &ok); // one past a 32-bit option
    assert_false(ok);
    u64("0", 1, 10, &ok);
    assert_false(ok);
    u64("11", 1, 10, &ok);
    assert_false(ok);

    char why[256];
    uint64_t v;
    assert_int_equal(ks_cli_parse_u64("-5", 1, 10, &v, why, sizeof why), -1);
    assert_non_null(strstr(why, "negative"));
    assert_int_equal(ks_cli_parse_u64("abc", 1, 10, &v, why, sizeof why), -1);
    assert_non_null(strstr(why, "not a whole number"));
}

static void reals(void **state)
{
    (void)state;
    char why[256];
    double v;
    assert_int_equal(ks_cli_parse_real("0.5", 0, 1, &v, why, sizeof why), 0);
    assert_true(v == 0.5);
    assert_int_equal(ks_cli_parse_real(".25", 0, 1, &v, why, sizeof why), 0);
    assert_true(v == 0.25);
    assert_int_equal(ks_cli_parse_real("1e-3", 0, 1, &v, why, sizeof why), 0);
    assert_true(v == 1e-3);
    assert_int_equal(ks_cli_parse_real("-0.5", -1, 1, &v, why, sizeof why), 0);
    assert_true(v == -0.5);
    const char *bad[] = {"", "abc", "nan", "inf", "-inf", "0x1p3", "1e999", "1.2.3", " 0.5", "0.5 ", "e", ".", "-"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        assert_int_equal(ks_cli_parse_real(bad[i], -1e300, 1e300, &v, why, sizeof why), -1);
    assert_int_equal(ks_cli_parse_real("-0.5", 0, 1, &v, why, sizeof why), -1);
    assert_int_equal(ks_cli_parse_real("1.5", 0, 1, &v, why, sizeof why), -1);
}

static int dummy_run(const struct ks_cli_cmd *cmd, int argc, char **argv)
{
    (void)cmd, (void)argc, (void)argv;
    return 0;
}

static const struct ks_cli_cmd cmd = {.name = "test", .summary = "Test", .run = dummy_run};
static const char *const colours[] = {"red", "green", NULL};

struct vals {
    uint32_t n;
    uint64_t big;
    double f;
    int colour, flag;
    const char *s;
};

// Parses the words of line (space-separated) into v; returns 1 to run, or 0
// with *status.
static int parse(const char *line, struct vals *v, int *status)
{
    const struct ks_cli_opt opts[] = {
        {.name = "n", .kind = KS_CLI_U32, .out = &v->n, .arg = "N", .help = "a count", .min = 1},
        {.name = "big", .kind = KS_CLI_U64, .out = &v->big, .arg = "N", .help = "a big count"},
        {.name = "f", .kind = KS_CLI_REAL, .out = &v->f, .arg = "X", .help = "a fraction", .fmax = 1},
        {.name = "colour", .kind = KS_CLI_CHOICE, .out = &v->colour, .help = "a colour", .choices = colours},
        {.name = "flag", .kind = KS_CLI_FLAG, .out = &v->flag, .help = "a flag"},
        {.name = "s", .kind = KS_CLI_STRING, .out = &v->s, .arg = "TEXT", .help = "a string"},
    };
    static char buf[256];
    char *argv[32];
    int argc = 0;
    strncpy(buf, line, sizeof buf - 1);
    for (char *w = strtok(buf, " "); w && argc < 32; w = strtok(NULL, " "))
        argv[argc++] = w;
    *v = (struct vals){.n = 7};
    return ks_cli_parse(&cmd, opts, sizeof opts / sizeof opts[0], argc, argv, status);
}

static void options(void **state)
{
    (void)state;
    struct vals v;
    int status;
    assert_int_equal(parse("", &v, &status), 1);
    assert_int_equal(v.n, 7); // the default stays
    assert_int_equal(parse("--n 5 --big=18446744073709551615 --f=0.25 --colour green --flag --s hi", &v, &status), 1);
    assert_int_equal(status, KS_EXIT_OK);
    assert_int_equal(v.n, 5);
    assert_true(v.big == UINT64_MAX);
    assert_true(v.f == 0.25);
    assert_int_equal(v.colour, 1);
    assert_int_equal(v.flag, 1);
    assert_string_equal(v.s, "hi");
    assert_int_equal(parse("--n=5 --n 9", &v, &status), 1);
    assert_int_equal(v.n, 9); // the last value wins

    const char *usage[] = {"--nope", "--nope=3", "-x", "stray", "--n", "--n=", "--n abc", "--n -5", "--n 0",
                           "--n 4294967296", "--f 2", "--f nan", "--colour blue", "--flag=1", "--s=", "--", "-"};
    for (size_t i = 0; i < sizeof usage / sizeof usage[0]; i++) {
        status = -1;
        assert_int_equal(parse(usage[i], &v, &status), 0);
        assert_int_equal(status, KS_EXIT_USAGE);
    }
    assert_int_equal(parse("--n abc --help", &v, &status), 0); // help wins
    assert_int_equal(status, KS_EXIT_OK);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(integers),
        cmocka_unit_test(reals),
        cmocka_unit_test(options),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
