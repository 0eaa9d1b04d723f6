// test_bigmem.c - reserved arrays (bigmem.h): zeroed, committed only as far
// as they are written, huge pages asked for only past KS_BIGMEM_DENSE.
#define _DEFAULT_SOURCE // mincore

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cmocka.h>

#include "bigmem.h"

#define HUGE ((size_t)2 << 20)

// Pages of [p + from, p + to) resident in memory.
static size_t resident(const char *p, size_t from, size_t to)
{
    size_t pg = (size_t)sysconf(_SC_PAGESIZE);
    from = from / pg * pg;
    if (to <= from)
        return 0;
    size_t n = (to - from + pg - 1) / pg, got = 0;
    unsigned char v[4096];
    for (size_t i = 0; i < n; i += sizeof v) {
        size_t k = n - i < sizeof v ? n - i : sizeof v;
        assert_int_equal(mincore((void *)(p + from + i * pg), k * pg, v), 0);
        for (size_t j = 0; j < k; j++)
            got += v[j] & 1;
    }
    return got;
}

static void small_is_plain(void **state)
{
    (void)state;
    size_t n = 1000;
    unsigned char *p = ks_bigmem_alloc(n);
    assert_non_null(p);
    for (size_t i = 0; i < n; i++)
        assert_int_equal(p[i], 0);
    assert_int_equal(ks_bigmem_use(p, n, 0, n), n); // never dense: no further call
    memset(p, 7, n);
    ks_bigmem_free(p, n);
    ks_bigmem_free(NULL, 0);
}

// An array of 3.5 dense sizes written from the front, the way the block
// table and the tiers write theirs, telling bigmem before each write past
// its mark: the memory follows the written part (below the dense size,
// exactly its pages; past it, at most up to the mark, the huge page being
// filled), and what was written is read back, the rest zero.
static void grows_across_dense(void **state)
{
    (void)state;
    size_t n = 3 * KS_BIGMEM_DENSE + KS_BIGMEM_DENSE / 2 + 12345;
    uint32_t *p = ks_bigmem_alloc(n);
    assert_non_null(p);
    assert_int_equal((uintptr_t)p % HUGE, 0); // its front is whole huge pages
    size_t words = n / sizeof *p, used = 0, mark = 0, calls = 0;
    assert_int_equal(resident((char *)p, 0, n), 0);
    const size_t stride = 777 * 1024 + 3; // words written per round
    while (used < words) {
        size_t next = used + stride < words ? used + stride : words;
        size_t bytes = next * sizeof *p;
        if (bytes > mark) {
            size_t m = ks_bigmem_use(p, n, mark, bytes);
            assert_true(m >= mark);
            assert_true(m >= bytes || bytes < KS_BIGMEM_DENSE);
            if (bytes < KS_BIGMEM_DENSE)
                assert_int_equal(m, KS_BIGMEM_DENSE - 1);
            else
                assert_true(m == n || m % HUGE == 0);
            mark = m;
            calls++;
        }
        for (size_t i = used; i < next; i++)
            p[i] = (uint32_t)(i * 2654435761u) | 1;
        used = next;
#ifdef MADV_NOHUGEPAGE
        // nothing beyond the written part is committed, but the huge page
        // being filled once the array is dense
        size_t limit = bytes < KS_BIGMEM_DENSE ? bytes : (mark > bytes ? mark : bytes);
        assert_int_equal(resident((char *)p, limit + (size_t)sysconf(_SC_PAGESIZE), n), 0);
#endif
    }
    // one call below the dense size, then at most one a huge page
    assert_true(calls >= 2 && calls <= 2 + (n - KS_BIGMEM_DENSE) / HUGE);
    assert_int_equal(mark, n);
    for (size_t i = 0; i < words; i++)
        if (p[i] != ((uint32_t)(i * 2654435761u) | 1))
            fail_msg("word %zu: %u", i, p[i]);
    ks_bigmem_free(p, n);
}

// Untouched, a reservation costs nothing: many arrays sized for millions
// of entries fit where their written parts do.
static void reserved_is_free(void **state)
{
    (void)state;
    enum { K = 64 };
    size_t n = 4 * KS_BIGMEM_DENSE;
    char *p[K];
    for (int k = 0; k < K; k++) {
        p[k] = ks_bigmem_alloc(n);
        assert_non_null(p[k]);
        p[k][0] = 1;
        assert_int_equal(ks_bigmem_use(p[k], n, 0, 1), KS_BIGMEM_DENSE - 1);
    }
#ifdef MADV_NOHUGEPAGE
    for (int k = 0; k < K; k++)
        assert_int_equal(resident(p[k], 0, n), 1);
#endif
    for (int k = 0; k < K; k++) {
        assert_int_equal(p[k][1], 0);
        assert_int_equal(p[k][n - 1], 0);
        ks_bigmem_free(p[k], n);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(small_is_plain),
        cmocka_unit_test(grows_across_dense),
        cmocka_unit_test(reserved_is_free),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
