// test_fastdiv.c - division by a magic number (sim/base/fastdiv.h) equals the
// hardware's, for divisors small, large, powers of two and not, and
// numerators at the edges (0, the divisor's multiples and their neighbours,
// the largest) and at random over every magnitude.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "fastdiv.h"
#include "rng.h"

static void check(uint32_t d, uint64_t m, uint32_t n)
{
    if (ks_fastdiv(m, n) != n / d)
        fail_msg("%u / %u: %u, not %u", n, d, ks_fastdiv(m, n), n / d);
}

static void against_hardware(void **state)
{
    (void)state;
    const uint32_t divisors[] = {1, 2, 3, 7, 64, 100, 513, 2048, 4095, 4096, 65537, 1000003, UINT32_C(1) << 31,
                                 UINT32_MAX - 1, UINT32_MAX};
    struct ks_rng rng;
    ks_rng_seed(&rng, 7);
    for (size_t k = 0; k < sizeof divisors / sizeof *divisors; k++) {
        uint32_t d = divisors[k];
        uint64_t m = ks_fastdiv_magic(d);
        const uint32_t edge[] = {0, 1, d - 1, d, d + 1, 2 * d - 1, 2 * d, UINT32_MAX - 1, UINT32_MAX,
                                 UINT32_MAX / d * d, UINT32_MAX / d * d - 1};
        for (size_t e = 0; e < sizeof edge / sizeof *edge; e++)
            check(d, m, edge[e]);
        for (int i = 0; i < 200000; i++)
            check(d, m, (uint32_t)ks_rng_next(&rng) >> (i % 32));
    }
    for (int i = 0; i < 200000; i++) { // random divisors too
        uint32_t d = (uint32_t)(ks_rng_next(&rng) >> (32 + i % 32));
        d += d == 0;
        check(d, ks_fastdiv_magic(d), (uint32_t)ks_rng_next(&rng) >> (i % 7));
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(against_hardware)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
