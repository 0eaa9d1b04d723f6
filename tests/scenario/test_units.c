// test_units.c - quantities with units: exact values, every kind, refusals.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <string.h>

#include "units.h"

static double num(const char *s, enum ks_unit kind)
{
    char why[256];
    double v = -1;
    if (ks_units_parse(s, kind, &v, why, sizeof why) != 0)
        fail_msg("'%s' refused: %s", s, why);
    return v;
}

// Refused, with `reason` in the message.
static void bad(const char *s, enum ks_unit kind, const char *reason)
{
    char why[256] = "";
    double v;
    if (ks_units_parse(s, kind, &v, why, sizeof why) == 0)
        fail_msg("'%s' accepted as %g", s, v);
    if (reason && !strstr(why, reason))
        fail_msg("'%s': '%s' lacks '%s'", s, why, reason);
}

static void exact_values(void **state)
{
    (void)state;
    assert_true(num("25GBps", KS_UNIT_BANDWIDTH) == 25e9);
    assert_true(num("25GB/s", KS_UNIT_BANDWIDTH) == 25e9);
    assert_true(num("200Gbps", KS_UNIT_BANDWIDTH) == 25e9); // bits
    assert_true(num("450GiBps", KS_UNIT_BANDWIDTH) == 450.0 * 1073741824.0);
    assert_true(num("2TiB", KS_UNIT_BYTES) == 0x1p41);
    assert_true(num("141GB", KS_UNIT_BYTES) == 141e9);
    assert_true(num("128KiB", KS_UNIT_BYTES) == 131072);
    assert_true(num("1kB", KS_UNIT_BYTES) == 1000 && num("1KB", KS_UNIT_BYTES) == 1000);
    assert_true(num("2us", KS_UNIT_TIME) == 2e-6);
    assert_true(num("1.5ms", KS_UNIT_TIME) == 1.5e-3);
    assert_true(num("500ns", KS_UNIT_TIME) == 500e-9);
    assert_true(num("120s", KS_UNIT_TIME) == 120);
    assert_true(num("2min", KS_UNIT_TIME) == 120);
    assert_true(num("1h", KS_UNIT_TIME) == 3600);
    assert_true(num("85%", KS_UNIT_FRACTION) == 0.85);
    assert_true(num("0.85", KS_UNIT_FRACTION) == 0.85);
    assert_true(num("990TFLOPS", KS_UNIT_FLOPS) == 990e12);
    assert_true(num("2.5/s", KS_UNIT_RATE) == 2.5);
    assert_true(num("120/min", KS_UNIT_RATE) == 2);
    assert_true(num("4096", KS_UNIT_COUNT) == 4096);
    assert_true(num("1e3", KS_UNIT_BYTES) == 1000);
    assert_true(num("4.8TBps", KS_UNIT_BANDWIDTH) == 4.8e12);
}

static void whole_numbers(void **state)
{
    (void)state;
    char why[256];
    uint64_t u;
    assert_int_equal(ks_units_parse_u64("2TiB", KS_UNIT_BYTES, &u, why, sizeof why), 0);
    assert_true(u == (UINT64_C(1) << 41));
    assert_int_equal(ks_units_parse_u64("1.5GiB", KS_UNIT_BYTES, &u, why, sizeof why), 0);
    assert_true(u == UINT64_C(1610612736));
    assert_int_equal(ks_units_parse_u64("18446744073709551615", KS_UNIT_COUNT, &u, why, sizeof why), 0);
    assert_true(u == UINT64_MAX);
    assert_int_equal(ks_units_parse_u64("18446744073709551616", KS_UNIT_COUNT, &u, why, sizeof why), -1);
    assert_int_equal(ks_units_parse_u64("16PiB", KS_UNIT_BYTES, &u, why, sizeof why), 0);
    assert_true(u == (UINT64_C(16) << 50));
    assert_int_equal(ks_units_parse_u64("100000PiB", KS_UNIT_BYTES, &u, why, sizeof why), -1);
    assert_non_null(strstr(why, "too large"));
    assert_int_equal(ks_units_parse_u64("1.5B", KS_UNIT_BYTES, &u, why, sizeof why), -1);
    assert_non_null(strstr(why, "whole"));
    assert_int_equal(ks_units_parse_u64("2.5", KS_UNIT_COUNT, &u, why, sizeof why), -1);
}

static void refusals(void **state)
{
    (void)state;
    bad("25GBps", KS_UNIT_TIME, "is a bandwidth; expected a time");
    bad("2us", KS_UNIT_BYTES, "is a time; expected a size");
    bad("80GiB", KS_UNIT_BANDWIDTH, "is a size; expected a bandwidth");
    bad("85%", KS_UNIT_BYTES, "is a fraction");
    bad("7GBq", KS_UNIT_BANDWIDTH, "unknown unit 'GBq'");
    bad("2 us", KS_UNIT_TIME, "space");
    bad(" 2us", KS_UNIT_TIME, "space");
    bad("2us ", KS_UNIT_TIME, "space");
    bad("-5GB", KS_UNIT_BYTES, "negative");
    bad("nan", KS_UNIT_TIME, "not a number");
    bad("inf", KS_UNIT_BANDWIDTH, "not a number");
    bad("1e999s", KS_UNIT_TIME, "out of range");
    bad("", KS_UNIT_TIME, "empty");
    bad("GB", KS_UNIT_BYTES, "not a number");
    bad("1.2.3s", KS_UNIT_TIME, "unknown unit");
    bad("0x10", KS_UNIT_COUNT, "unknown unit");
    bad("12abc", KS_UNIT_COUNT, "unknown unit");
    bad("2.5", KS_UNIT_COUNT, "whole");
    char why[256];
    assert_int_equal(ks_units_check(NAN, KS_UNIT_TIME, why, sizeof why), -1);
    assert_int_equal(ks_units_check(INFINITY, KS_UNIT_BYTES, why, sizeof why), -1);
    assert_int_equal(ks_units_check(-1, KS_UNIT_BYTES, why, sizeof why), -1);
    assert_int_equal(ks_units_check(2.5, KS_UNIT_COUNT, why, sizeof why), -1);
    assert_int_equal(ks_units_check(2.5, KS_UNIT_TIME, why, sizeof why), 0);
}

static void formatting(void **state)
{
    (void)state;
    struct {
        double v;
        enum ks_unit kind;
        const char *text;
    } cases[] = {
        {131072, KS_UNIT_BYTES, "128KiB"},     {141e9, KS_UNIT_BYTES, "141GB"},
        {0x1p41, KS_UNIT_BYTES, "2TiB"},       {0, KS_UNIT_BYTES, "0B"},
        {25e9, KS_UNIT_BANDWIDTH, "25GBps"},   {4.8e12, KS_UNIT_BANDWIDTH, "4.8TBps"},
        {2e-6, KS_UNIT_TIME, "2us"},           {1.5e-3, KS_UNIT_TIME, "1.5ms"},
        {120, KS_UNIT_TIME, "120s"},           {500e-9, KS_UNIT_TIME, "500ns"},
        {7200, KS_UNIT_TIME, "2h"},            {0.85, KS_UNIT_FRACTION, "85%"},
        {990e12, KS_UNIT_FLOPS, "990TFLOPS"},  {2.5, KS_UNIT_RATE, "2.5/s"},
        {4096, KS_UNIT_COUNT, "4096"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char buf[64];
        ks_units_format(cases[i].v, cases[i].kind, buf, sizeof buf);
        assert_string_equal(buf, cases[i].text);
        assert_true(num(buf, cases[i].kind) == cases[i].v); // reads back
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(exact_values),
        cmocka_unit_test(whole_numbers),
        cmocka_unit_test(refusals),
        cmocka_unit_test(formatting),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
