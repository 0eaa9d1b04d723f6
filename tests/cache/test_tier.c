// test_tier.c - the page allocator of one tier (tier.h): fill, failure
// counting, last-freed-first reuse, peak, absent tiers.
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "blocktab.h"
#include "status.h"
#include "tier.h"

static void fill_free_reuse(void **state)
{
    (void)state;
    struct ks_tier t;
    assert_int_equal(ks_tier_init(&t, 5, 131072), KS_OK);
    assert_int_equal(t.cap, 5);
    assert_int_equal(t.block_bytes, 131072);
    assert_int_equal(ks_tier_free_pages(&t), 5);
    assert_int_equal(ks_tier_bytes(&t), 5 * sizeof(uint32_t));
    for (uint32_t i = 0; i < 5; i++) {
        uint32_t p = ks_tier_alloc(&t, 100 + i);
        assert_int_equal(p, i); // a fresh tier hands pages out in order
        assert_int_equal(t.owner[p], 100 + i);
        assert_true(ks_tier_page_used(&t, p));
        assert_int_equal(t.used, i + 1);
        assert_int_equal(t.st.peak_used, i + 1);
    }
    assert_int_equal(ks_tier_free_pages(&t), 0);
    assert_int_equal(t.st.alloc_fails, 0);
    // full: refused and counted, nothing changes
    assert_int_equal(ks_tier_alloc(&t, 7), KS_NONE);
    assert_int_equal(ks_tier_alloc(&t, 8), KS_NONE);
    assert_int_equal(t.st.alloc_fails, 2);
    assert_int_equal(t.st.allocs, 5);
    assert_int_equal(t.used, 5);

    // last freed, first reused
    ks_tier_free(&t, 2);
    ks_tier_free(&t, 4);
    ks_tier_free(&t, 0);
    assert_false(ks_tier_page_used(&t, 2));
    assert_int_equal(t.used, 2);
    assert_int_equal(t.st.frees, 3);
    assert_int_equal(ks_tier_free_pages(&t), 3);
    assert_int_equal(ks_tier_alloc(&t, 200), 0);
    assert_int_equal(ks_tier_alloc(&t, 201), 4);
    assert_int_equal(ks_tier_alloc(&t, 202), 2);
    assert_int_equal(t.owner[4], 201);
    assert_int_equal(ks_tier_alloc(&t, 203), KS_NONE);
    assert_int_equal(t.st.alloc_fails, 3);
    assert_int_equal(t.st.peak_used, 5);

    // empty it; the peak stays
    for (uint32_t p = 0; p < 5; p++)
        ks_tier_free(&t, p);
    assert_int_equal(t.used, 0);
    assert_int_equal(t.st.peak_used, 5);
    assert_int_equal(t.st.frees, 8);
    assert_int_equal(t.st.allocs, 8);
    assert_int_equal(ks_tier_alloc(&t, 300), 4); // the last page freed
    assert_int_equal(ks_tier_alloc(&t, 301), 3);
    assert_int_equal(t.used, 2);
    assert_int_equal(t.st.peak_used, 5);
    ks_tier_fini(&t);
    assert_null(t.owner);
}

static void peak_tracks_maximum(void **state)
{
    (void)state;
    struct ks_tier t;
    assert_int_equal(ks_tier_init(&t, 64, 1), KS_OK);
    uint32_t pages[64];
    for (uint32_t i = 0; i < 10; i++)
        pages[i] = ks_tier_alloc(&t, i);
    for (uint32_t i = 0; i < 6; i++)
        ks_tier_free(&t, pages[i]);
    assert_int_equal(t.st.peak_used, 10);
    for (uint32_t i = 0; i < 9; i++)
        assert_int_not_equal(ks_tier_alloc(&t, 50 + i), KS_NONE);
    assert_int_equal(t.used, 13);
    assert_int_equal(t.st.peak_used, 13);
    ks_tier_fini(&t);
}

static void absent_and_invalid(void **state)
{
    (void)state;
    struct ks_tier t;
    assert_int_equal(ks_tier_init(&t, 0, 0), KS_OK);
    assert_int_equal(ks_tier_free_pages(&t), 0);
    assert_int_equal(ks_tier_alloc(&t, 1), KS_NONE);
    assert_int_equal(t.st.alloc_fails, 1);
    assert_int_equal(ks_tier_bytes(&t), 0);
    ks_tier_fini(&t);
    assert_int_equal(ks_tier_init(&t, KS_PAGE_MAX + 1, 4096), KS_EINVAL);
    ks_tier_fini(&t);
    assert_int_equal(ks_tier_init(&t, 1, 4096), KS_OK);
    assert_int_equal(ks_tier_alloc(&t, 9), 0);
    assert_int_equal(ks_tier_alloc(&t, 9), KS_NONE);
    ks_tier_free(&t, 0);
    assert_int_equal(ks_tier_alloc(&t, 9), 0);
    ks_tier_fini(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(fill_free_reuse),
        cmocka_unit_test(peak_tracks_maximum),
        cmocka_unit_test(absent_and_invalid),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
