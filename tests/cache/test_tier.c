// test_tier.c - the page allocator of one tier (tier.h): fill, failure
// counting, last-freed-first reuse, peak, absent tiers; an addressed tier's
// next free page against a page-by-page search.
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
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

// The free list's first pages kept in `recent` (tier.h): what the list
// says, however it grows (past KS_TIER_RECENT it keeps its newer half) and
// whether allocations or frees come in bursts. A reference stack says which
// page each allocation must return (last freed, first reused).
static void mirrors(const struct ks_tier *t)
{
    uint32_t p = t->free_head;
    for (uint32_t i = 0; i < t->n_recent; i++) {
        assert_int_not_equal(p, KS_PAGE_FREE);
        assert_int_equal(t->recent[t->n_recent - 1 - i], p);
        uint32_t next = t->owner[p] & ~KS_PAGE_FREE;
        p = next == KS_PAGE_MAX ? KS_PAGE_FREE : next;
    }
}

static void recent_follows_the_list(void **state)
{
    (void)state;
    enum { N = KS_TIER_RECENT + KS_TIER_RECENT / 2 };
    struct ks_tier t;
    assert_int_equal(ks_tier_init(&t, N, 4096), KS_OK);
    uint32_t *stack = malloc(N * sizeof *stack), n = 0; // the free pages below hwm, the next to reuse last
    assert_non_null(stack);
    for (uint32_t i = 0; i < N; i++)
        assert_int_equal(ks_tier_alloc(&t, i), i);
    uint64_t x = 88172645463325252ull; // xorshift: the order of frees
    uint32_t used = N, *live = malloc(N * sizeof *live);
    assert_non_null(live);
    for (uint32_t i = 0; i < N; i++)
        live[i] = i;
    for (int round = 0; round < 6; round++) {
        // a burst of frees (the first rounds past KS_TIER_RECENT), then a burst of allocations
        uint32_t frees = round < 2 ? used - 10 : used / 3, allocs = round % 2 ? frees : frees / 2;
        for (uint32_t k = 0; k < frees; k++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            uint32_t j = (uint32_t)(x % used), p = live[j];
            live[j] = live[--used];
            ks_tier_free(&t, p);
            stack[n++] = p;
        }
        assert_true(t.n_recent <= KS_TIER_RECENT);
        mirrors(&t);
        for (uint32_t k = 0; k < allocs; k++) {
            uint32_t p = ks_tier_alloc(&t, 7);
            assert_int_equal(p, stack[--n]);
            live[used++] = p;
            if (k % 997 == 0)
                mirrors(&t);
        }
        mirrors(&t);
    }
    assert_int_equal(t.used, used);
    assert_true(ks_tier_bytes(&t) <= (uint64_t)N * sizeof(uint32_t) + KS_TIER_RECENT * sizeof(uint32_t));
    free(live);
    free(stack);
    ks_tier_fini(&t);
}

// The first free page of [from, end), page by page (tier.h's meaning).
static uint32_t next_free_slow(const struct ks_tier *t, uint32_t from, uint32_t end)
{
    for (uint32_t p = from; p < end; p++)
        if (!ks_tier_page_used(t, p))
            return p;
    return end;
}

// Pages taken and freed at random over 300 pages (word edges at 64, 128,
// ..., and a last word partly past cap): after each change, every range's
// next free page is the page-by-page search's, and pages never reached
// (from hwm on) count as free.
static void next_free_matches_search(void **state)
{
    (void)state;
    enum { N = 300 };
    struct ks_tier t;
    assert_int_equal(ks_tier_init(&t, N, 64), KS_OK);
    assert_int_equal(ks_tier_addressed(&t), KS_OK);
    assert_int_equal(ks_tier_next_free(&t, 0, N), 0);
    assert_int_equal(ks_tier_next_free(&t, 7, 7), 7); // an empty range: its end
    uint64_t x = 0x9e3779b97f4a7c15u;
    for (int round = 0; round < 3000; round++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        uint32_t p = (uint32_t)(x % (round < 1500 ? 200 : N)); // hwm climbs in two stages
        if (ks_tier_page_used(&t, p))
            ks_tier_free(&t, p);
        else
            ks_tier_take(&t, p, (uint32_t)round);
        uint32_t from = (uint32_t)((x >> 20) % N), end = from + (uint32_t)((x >> 40) % (N - from + 1));
        if (ks_tier_next_free(&t, from, end) != next_free_slow(&t, from, end))
            fail_msg("round %d: [%u, %u): %u, the search's %u", round, from, end, ks_tier_next_free(&t, from, end),
                     next_free_slow(&t, from, end));
    }
    for (uint32_t from = 0; from < N; from += 13)
        assert_int_equal(ks_tier_next_free(&t, from, N), next_free_slow(&t, from, N));
    for (uint32_t p = 0; p < N; p++) // fill every page: nothing free anywhere
        if (!ks_tier_page_used(&t, p))
            ks_tier_take(&t, p, p);
    assert_int_equal(ks_tier_next_free(&t, 0, N), N);
    assert_int_equal(ks_tier_next_free(&t, 65, 130), 130);
    ks_tier_free(&t, 299);
    assert_int_equal(ks_tier_next_free(&t, 0, N), 299);
    assert_int_equal(ks_tier_next_free(&t, 0, 299), 299);
    ks_tier_fini(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(fill_free_reuse),
        cmocka_unit_test(peak_tracks_maximum),
        cmocka_unit_test(absent_and_invalid),
        cmocka_unit_test(recent_follows_the_list),
        cmocka_unit_test(next_free_matches_search),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
