// test_grow.c - growing arrays (sim/base/grow.h): doubling from 16, and the
// indices of an array whose freed elements are taken again: the last freed
// first, a new index only when none waits, a new element zeroed, the stack
// always able to hold every index.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "grow.h"
#include "rng.h"
#include "status.h"

static void doubles_from_16(void **state)
{
    (void)state;
    int *a = NULL;
    uint32_t cap = 0;
    assert_int_equal(ks_grow((void **)&a, &cap, 1, sizeof *a), KS_OK);
    assert_int_equal(cap, 16);
    a[15] = 7;
    assert_int_equal(ks_grow((void **)&a, &cap, 16, sizeof *a), KS_OK); // holds it already
    assert_int_equal(cap, 16);
    assert_int_equal(ks_grow((void **)&a, &cap, 17, sizeof *a), KS_OK);
    assert_int_equal(cap, 32);
    assert_int_equal(a[15], 7); // kept across the move
    assert_int_equal(ks_grow((void **)&a, &cap, 1000, sizeof *a), KS_OK);
    assert_int_equal(cap, 1024);
    free(a);
}

struct elem {
    uint64_t v;
    uint8_t live;
};

// Random takes and gives against a model: which indices are live, the order
// freed ones come back in, new elements zeroed, n the indices ever taken.
static void ids_reuse_last_freed(void **state)
{
    (void)state;
    struct ks_ids ids = {0};
    struct elem *a = NULL;
    enum { OPS = 20000, MOST = 700 };
    uint8_t *live = calloc(MOST, 1);
    uint32_t *freed = malloc(MOST * sizeof *freed), n_freed = 0, n_live = 0;
    assert_non_null(live);
    assert_non_null(freed);
    struct ks_rng rng;
    ks_rng_seed(&rng, 19);
    for (int op = 0; op < OPS; op++) {
        int give = n_live == MOST || (n_live > 0 && ks_rng_below(&rng, 100) < 45);
        if (give) {
            uint32_t id;
            do
                id = ks_rng_below(&rng, ids.n);
            while (!live[id]);
            a[id].live = 0;
            a[id].v = 0xdead;
            live[id] = 0;
            n_live--;
            freed[n_freed++] = id;
            ks_ids_give(&ids, id);
        } else {
            uint32_t id, n_before = ids.n;
            assert_int_equal(ks_ids_take(&ids, (void **)&a, sizeof *a, &id), KS_OK);
            if (n_freed) {
                assert_int_equal(id, freed[--n_freed]); // the last freed, untouched
                assert_int_equal(ids.n, n_before);
                assert_int_equal(a[id].v, 0xdead);
            } else {
                assert_int_equal(id, n_before); // a new one, zeroed
                assert_int_equal(ids.n, n_before + 1);
                assert_int_equal(a[id].v, 0);
                assert_int_equal(a[id].live, 0);
            }
            assert_false(live[id]);
            live[id] = 1;
            a[id].live = 1;
            a[id].v = id;
            n_live++;
        }
        assert_true(ids.n <= ids.cap);
        assert_int_equal(ids.n_free, n_freed);
        assert_int_equal(ids.n_free + n_live, ids.n); // every index live or waiting
    }
    for (uint32_t i = 0; i < ids.n; i++)
        if (live[i])
            assert_int_equal(a[i].v, i); // elements survive the array's moves
    assert_true(ids.n >= 100); // the run took many new indices, and grew past 16
    ks_ids_fini(&ids);
    assert_null(ids.free);
    assert_int_equal(ids.n, 0);
    free(a);
    free(live);
    free(freed);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(doubles_from_16),
        cmocka_unit_test(ids_reuse_last_freed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
