// test_simssd.c - the simulated SSD experiment (sim/engine/simssd.h) against its
// closed form: qd equal flows on the SSD read link of the generated platform
// finish together after lat + qd * (size + op * bw) / bw, every round. Also:
// SimGrid runs once per process, and bad figures are refused before it runs.
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "simssd.h"
#include "status.h"

static void closed_form(void **state)
{
    (void)state;
    char err[512];
    const double lat = 60e-6, bw = 700e6, op = 9e-6, dram = 20e9;
    struct ks_simssd_point p[] = {
        {.qd = 1, .bytes = 4096, .rounds = 8},   {.qd = 8, .bytes = 4096, .rounds = 8},
        {.qd = 64, .bytes = 4096, .rounds = 4},  {.qd = 1, .bytes = 1 << 20, .rounds = 3},
        {.qd = 16, .bytes = 1 << 22, .rounds = 2},
    };
    size_t n = sizeof p / sizeof p[0];
    // refused before SimGrid starts: the one run below still happens
    assert_int_equal(ks_simssd_run(lat, 0, op, dram, p, n, err, sizeof err), KS_EINVAL);
    assert_int_equal(ks_simssd_run(lat, bw, op, 0, p, n, err, sizeof err), KS_EINVAL);
    assert_int_equal(ks_simssd_run(lat, bw, op, dram, p, n, err, sizeof err), KS_OK);
    for (size_t i = 0; i < n; i++) {
        double want = lat + p[i].qd * op + p[i].qd * p[i].bytes / bw;
        double rel = fabs(p[i].t - want) / want;
        if (!(rel < 1e-9))
            fail_msg("point %zu (qd %u, %.0f bytes): simulated %.9g s, closed form %.9g s", i, p[i].qd, p[i].bytes,
                     p[i].t, want);
    }
    assert_int_equal(ks_simssd_run(lat, bw, op, dram, p, n, err, sizeof err), KS_ESTATE);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(closed_form)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
