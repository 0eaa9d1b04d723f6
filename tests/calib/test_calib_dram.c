// test_calib_dram.c - the DRAM copy benchmark (calib/dram.h) on small
// regions: one window per call on regions prepared once, the result's
// arithmetic, windows of different sizes and thread counts on the same
// regions, and the inputs it refuses.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "dram.h"
#include "status.h"

#define KIB ((size_t)1 << 10)
#define MIB ((size_t)1 << 20)

// A window's figures follow from one another: t > 0, at least two copies a
// thread, bytes_per_s = threads * bytes / t.
static void check_window(const struct ks_dram_result *r, size_t bytes, unsigned threads)
{
    assert_true(r->t > 0);
    assert_true(r->copies >= 2ull * threads);
    double want = (double)threads * (double)bytes / r->t;
    assert_true(r->bytes_per_s == want);
}

// The calls calib runs in rounds: sizes and thread counts interleaved on
// one ks_dram, each window timed on its own.
static void rounds(void **state)
{
    (void)state;
    struct ks_dram_params p = {.threads = 2, .max_bytes = MIB, .pool = 4 * MIB};
    struct ks_dram *d = ks_dram_new(&p);
    assert_non_null(d);
    const size_t sizes[] = {64 * KIB, 256 * KIB, MIB};
    for (int round = 0; round < 2; round++)
        for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
            for (unsigned thr = 1; thr <= 2; thr++) {
                struct ks_dram_point pt = {.bytes = sizes[i], .threads = thr, .seconds = 0.002};
                struct ks_dram_result r;
                assert_int_equal(ks_dram_run(d, &pt, &r), KS_OK);
                check_window(&r, sizes[i], thr);
            }
    // a size that does not divide the pool, and one below a page
    struct ks_dram_point odd = {.bytes = 3 * 100 * KIB + 7, .threads = 2, .seconds = 0.002};
    struct ks_dram_result r;
    assert_int_equal(ks_dram_run(d, &odd, &r), KS_OK);
    check_window(&r, odd.bytes, 2);
    struct ks_dram_point tiny = {.bytes = 100, .threads = 1, .seconds = 0.002};
    assert_int_equal(ks_dram_run(d, &tiny, &r), KS_OK);
    check_window(&r, tiny.bytes, 1);
    ks_dram_free(d);
    ks_dram_free(NULL);
}

// The largest copy sets the regions when the pool is smaller than two of it.
static void pool_raised(void **state)
{
    (void)state;
    struct ks_dram_params p = {.threads = 1, .max_bytes = 2 * MIB, .pool = 0};
    struct ks_dram *d = ks_dram_new(&p);
    assert_non_null(d);
    struct ks_dram_point pt = {.bytes = 2 * MIB, .threads = 1, .seconds = 0.002};
    struct ks_dram_result r;
    assert_int_equal(ks_dram_run(d, &pt, &r), KS_OK);
    check_window(&r, pt.bytes, 1);
    ks_dram_free(d);
}

static void bad_input(void **state)
{
    (void)state;
    struct ks_dram_params none = {.threads = 0, .max_bytes = MIB, .pool = MIB};
    assert_null(ks_dram_new(&none));
    struct ks_dram_params many = {.threads = KS_DRAM_MAX_THREADS + 1, .max_bytes = MIB, .pool = MIB};
    assert_null(ks_dram_new(&many));
    struct ks_dram_params empty = {.threads = 1, .max_bytes = 0, .pool = MIB};
    assert_null(ks_dram_new(&empty));
    assert_null(ks_dram_new(NULL));

    struct ks_dram_params p = {.threads = 2, .max_bytes = 256 * KIB, .pool = MIB};
    struct ks_dram *d = ks_dram_new(&p);
    assert_non_null(d);
    const struct ks_dram_point bad[] = {
        {.bytes = 0, .threads = 1, .seconds = 0.001},          // no bytes
        {.bytes = 512 * KIB, .threads = 1, .seconds = 0.001},  // above max_bytes
        {.bytes = 64 * KIB, .threads = 0, .seconds = 0.001},   // no thread
        {.bytes = 64 * KIB, .threads = 3, .seconds = 0.001},   // more than prepared
        {.bytes = 64 * KIB, .threads = 1, .seconds = 0},       // no time
        {.bytes = 64 * KIB, .threads = 1, .seconds = -1},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        struct ks_dram_result r = {.t = 1, .bytes_per_s = 1, .copies = 1};
        assert_int_equal(ks_dram_run(d, &bad[i], &r), KS_EINVAL);
        assert_true(r.t == 0 && r.bytes_per_s == 0 && r.copies == 0);
    }
    // a refused point leaves d as it was
    struct ks_dram_point ok = {.bytes = 256 * KIB, .threads = 2, .seconds = 0.002};
    struct ks_dram_result r;
    assert_int_equal(ks_dram_run(d, &ok, &r), KS_OK);
    check_window(&r, ok.bytes, 2);
    ks_dram_free(d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(rounds),
        cmocka_unit_test(pool_raised),
        cmocka_unit_test(bad_input),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
