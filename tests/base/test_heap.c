// test_heap.c - the binary heap (sim/base/heap.h): pops come out in order on
// random input, a bounded heap keeps the lowest keys, and ties break as the
// contract says, matching the swap-based heap the eviction code used before,
// layout for layout.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "heap.h"
#include "rng.h"

struct kv {
    uint64_t key;
    uint32_t id;
};

// Min-heap on key alone: equal keys tie.
static int lower_key(const void *a, const void *b)
{
    uint64_t x = ((const struct kv *)a)->key, y = ((const struct kv *)b)->key;
    return (x > y) - (x < y);
}

// Max-heap on key alone.
static int higher_key(const void *a, const void *b)
{
    return lower_key(b, a);
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

static void pops_come_out_sorted(void **state)
{
    (void)state;
    enum { N = 5000 };
    struct ks_rng rng;
    ks_rng_seed(&rng, 7);
    struct kv *h = malloc(N * sizeof *h);
    uint64_t *ref = malloc(N * sizeof *ref);
    for (uint32_t round = 0; round < 20; round++) {
        size_t n = 0, m = 0;
        uint32_t range = round % 2 ? 50 : 1000000; // many ties, then few
        for (uint32_t i = 0; i < N; i++) {
            ref[m++] = ks_rng_below(&rng, range);
            ks_heap_push(h, n++, sizeof *h, &(struct kv){ref[m - 1], i}, lower_key);
        }
        qsort(ref, m, sizeof *ref, cmp_u64);
        for (size_t i = 0; i < m; i++) {
            struct kv top;
            ks_heap_pop(h, n--, sizeof *h, &top, lower_key);
            assert_int_equal(top.key, ref[i]);
        }
        assert_int_equal(n, 0);
    }
    free(h);
    free(ref);
}

// Pushes and pops interleaved: every pop returns the least key held.
static void interleaved_pops_return_the_least(void **state)
{
    (void)state;
    enum { N = 20000 };
    struct ks_rng rng;
    ks_rng_seed(&rng, 11);
    struct kv *h = malloc(N * sizeof *h);
    uint32_t *count = calloc(64, sizeof *count); // keys held, by value
    size_t n = 0;
    for (uint32_t i = 0; i < N; i++) {
        if (n == 0 || ks_rng_below(&rng, 3) != 0) {
            uint64_t k = ks_rng_below(&rng, 64);
            count[k]++;
            ks_heap_push(h, n++, sizeof *h, &(struct kv){k, i}, lower_key);
        } else {
            struct kv top;
            ks_heap_pop(h, n--, sizeof *h, &top, lower_key);
            uint64_t least = 0;
            while (count[least] == 0)
                least++;
            assert_int_equal(top.key, least);
            count[least]--;
        }
    }
    free(h);
    free(count);
}

// A max-heap of K elements fed with replace keeps the K lowest keys.
static void replace_keeps_the_lowest(void **state)
{
    (void)state;
    enum { N = 10000, K = 37 };
    struct ks_rng rng;
    ks_rng_seed(&rng, 3);
    struct kv h[K];
    uint64_t *all = malloc(N * sizeof *all), kept[K];
    size_t n = 0;
    for (uint32_t i = 0; i < N; i++) {
        uint64_t k = all[i] = ks_rng_below(&rng, 5000);
        if (n < K)
            ks_heap_push(h, n++, sizeof *h, &(struct kv){k, i}, higher_key);
        else if (k < h[0].key)
            ks_heap_replace(h, n, sizeof *h, &(struct kv){k, i}, higher_key);
    }
    for (size_t i = 0; i < K; i++)
        kept[i] = h[i].key;
    qsort(all, N, sizeof *all, cmp_u64);
    qsort(kept, K, sizeof *kept, cmp_u64);
    assert_memory_equal(kept, all, sizeof kept);
    free(all);
}

// ---- the layout the eviction heap had: swap-based sifts on a max-heap --------

static void old_sift_down(struct kv *h, uint32_t n, uint32_t i)
{
    for (;;) {
        uint32_t l = 2 * i + 1, r = l + 1, m = i;
        if (l < n && h[l].key > h[m].key)
            m = l;
        if (r < n && h[r].key > h[m].key)
            m = r;
        if (m == i)
            return;
        struct kv t = h[i];
        h[i] = h[m];
        h[m] = t;
        i = m;
    }
}

static void old_sift_up(struct kv *h, uint32_t i)
{
    while (i > 0) {
        uint32_t p = (i - 1) / 2;
        if (h[p].key >= h[i].key)
            return;
        struct kv t = h[i];
        h[i] = h[p];
        h[p] = t;
        i = p;
    }
}

static void same_layout_as_swap_heap(void **state)
{
    (void)state;
    enum { CAP = 300, OPS = 200000 };
    struct ks_rng rng;
    ks_rng_seed(&rng, 5);
    struct kv a[CAP], b[CAP];
    memset(a, 0, sizeof a); // padding too: the arrays are compared byte for byte
    memset(b, 0, sizeof b);
    uint32_t n = 0;
    for (uint32_t i = 0; i < OPS; i++) {
        unsigned op = n == 0 ? 0 : n == CAP ? 1 + ks_rng_below(&rng, 2) : ks_rng_below(&rng, 3);
        struct kv e;
        memset(&e, 0, sizeof e);
        e.key = ks_rng_below(&rng, 8); // ties everywhere
        e.id = i;
        if (op == 0) {
            ks_heap_push(a, n, sizeof *a, &e, higher_key);
            b[n] = e;
            old_sift_up(b, n);
            n++;
        } else if (op == 1) {
            struct kv top;
            ks_heap_pop(a, n, sizeof *a, &top, higher_key);
            assert_int_equal(top.id, b[0].id);
            b[0] = b[--n];
            old_sift_down(b, n, 0);
        } else {
            ks_heap_replace(a, n, sizeof *a, &e, higher_key);
            b[0] = e;
            old_sift_down(b, n, 0);
        }
        assert_memory_equal(a, b, n * sizeof *a);
    }
}

// Of two children that tie, the left one rises.
static void tied_children_take_the_left(void **state)
{
    (void)state;
    struct kv h[4] = {{9, 0}, {5, 1}, {5, 2}, {1, 3}};
    struct kv top;
    ks_heap_pop(h, 4, sizeof *h, &top, higher_key);
    assert_int_equal(top.id, 0);
    assert_int_equal(h[0].id, 1);
    assert_int_equal(h[1].id, 3);
    assert_int_equal(h[2].id, 2);
    // and an element equal to its parent stays below it
    ks_heap_push(h, 3, sizeof *h, &(struct kv){5, 4}, higher_key);
    assert_int_equal(h[0].id, 1);
    assert_int_equal(h[1].id, 4);
    assert_int_equal(h[3].id, 3);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(pops_come_out_sorted),
        cmocka_unit_test(interleaved_pops_return_the_least),
        cmocka_unit_test(replace_keeps_the_lowest),
        cmocka_unit_test(same_layout_as_swap_heap),
        cmocka_unit_test(tied_children_take_the_left),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
