// test_clock.c - the monotonic clock (sim/base/clock.h): CLOCK_MONOTONIC in
// seconds, never going back, and a sleep shows as its length.
#define _POSIX_C_SOURCE 200809L // clock_gettime, nanosleep

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include <cmocka.h>

#include "clock.h"

static double direct(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void reads_clock_monotonic(void **state)
{
    (void)state;
    double a = direct(), b = ks_clock_mono(), c = direct();
    assert_true(a <= b && b <= c); // the same clock, read in between
}

static void never_goes_back(void **state)
{
    (void)state;
    double prev = ks_clock_mono();
    for (int i = 0; i < 100000; i++) {
        double t = ks_clock_mono();
        assert_true(t >= prev);
        prev = t;
    }
}

static void measures_a_sleep(void **state)
{
    (void)state;
    double t0 = ks_clock_mono();
    nanosleep(&(struct timespec){.tv_nsec = 20000000}, NULL); // 20 ms
    double dt = ks_clock_mono() - t0;
    assert_true(dt >= 0.020);
    assert_true(dt < 5.0); // a loaded machine may oversleep, not by seconds
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(reads_clock_monotonic),
        cmocka_unit_test(never_goes_back),
        cmocka_unit_test(measures_a_sleep),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
