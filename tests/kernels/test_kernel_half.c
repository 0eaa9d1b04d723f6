// test_kernel_half.c - the fp16 conversions every reference kernel reads
// through: exact widening, round-to-nearest-even narrowing, the edges.
#include "kernel_fixture.h"

// Every pattern widens to its closed-form value and narrows back unchanged.
static void every_pattern_round_trips(void **state)
{
    (void)state;
    for (uint32_t h = 0; h < 65536; h++) {
        uint32_t e = (h >> 10) & 31, m = h & 1023;
        double want = e == 0 ? ldexp(m, -24) : ldexp(1024 + m, (int)e - 25);
        if (h & 0x8000)
            want = -want;
        float f = ks_half_to_float((uint16_t)h);
        if (e == 31 && m) {
            assert_true(isnan(f));
            assert_true((ks_half_from_float(f) & 0x7c00) == 0x7c00 && (ks_half_from_float(f) & 0x3ff));
            continue;
        }
        if (e == 31)
            want = (h & 0x8000) ? -INFINITY : INFINITY;
        if ((double)f != want)
            fail_msg("pattern %04x widens to %a, want %a", h, f, want);
        assert_int_equal(ks_half_from_float(f), h);
    }
}

// Between consecutive positive halves: below the midpoint rounds down, above
// rounds up, the midpoint itself to the even pattern.
static void narrowing_rounds_to_nearest_even(void **state)
{
    (void)state;
    for (uint16_t h = 0; h < 0x7bff; h++) {
        float a = ks_half_to_float(h), b = ks_half_to_float((uint16_t)(h + 1));
        float mid = (float)(((double)a + (double)b) / 2); // exact in fp32
        uint16_t even = (h & 1) ? (uint16_t)(h + 1) : h;
        assert_int_equal(ks_half_from_float(mid), even);
        assert_int_equal(ks_half_from_float(nextafterf(mid, 0.0f)), h);
        assert_int_equal(ks_half_from_float(nextafterf(mid, INFINITY)), h + 1);
        assert_int_equal(ks_half_from_float(-mid), even | 0x8000);
    }
    assert_int_equal(ks_half_from_float(65504.0f), 0x7bff);
    assert_int_equal(ks_half_from_float(nextafterf(65520.0f, 0.0f)), 0x7bff);
    assert_int_equal(ks_half_from_float(65520.0f), 0x7c00); // tie to even: the infinity
    assert_int_equal(ks_half_from_float(1e30f), 0x7c00);
    assert_int_equal(ks_half_from_float(-1e30f), 0xfc00);
    assert_int_equal(ks_half_from_float(ldexpf(1.0f, -25)), 0x0000); // tie to even: zero
    assert_int_equal(ks_half_from_float(nextafterf(ldexpf(1.0f, -25), 1.0f)), 0x0001);
    assert_int_equal(ks_half_from_float(1e-30f), 0x0000);
    assert_int_equal(ks_half_from_float(-0.0f), 0x8000);
    assert_int_equal(ks_half_from_float(1.0f), 0x3c00);
    assert_true(isnan(ks_half_to_float(ks_half_from_float(NAN))));
}

static void status_names(void **state)
{
    (void)state;
    assert_string_equal(ks_kernel_status_str(KS_KERNEL_OK), "KS_KERNEL_OK");
    assert_string_equal(ks_kernel_status_str(KS_KERNEL_EINVAL), "KS_KERNEL_EINVAL");
    assert_string_equal(ks_kernel_status_str(KS_KERNEL_ENODEV), "KS_KERNEL_ENODEV");
    assert_string_equal(ks_kernel_status_str(KS_KERNEL_ECUDA), "KS_KERNEL_ECUDA");
    assert_string_equal(ks_kernel_status_str(12345), "unknown");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_pattern_round_trips),
        cmocka_unit_test(narrowing_rounds_to_nearest_even),
        cmocka_unit_test(status_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
