// test_sort.c - sorting (sim/base/sort.h): the radix sort by a 32-bit key
// against a stable merge (insertion sort over the same input), on random
// keys, many ties, keys using every byte and elements of 4 (the key
// alone), 8 and 12 bytes.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "sort.h"

struct e8 {
    uint32_t key, seq; // seq: the element's place before sorting
};

struct e12 {
    uint32_t seq, pad, key;
};

// Stable by construction: an element moves past a neighbour only when its key is lower.
#define INSERTION(T, a, n)                                                                                         \
    for (size_t i = 1; i < (n); i++) {                                                                             \
        T x = (a)[i];                                                                                              \
        size_t j = i;                                                                                              \
        for (; j > 0 && (a)[j - 1].key > x.key; j--)                                                               \
            (a)[j] = (a)[j - 1];                                                                                   \
        (a)[j] = x;                                                                                                \
    }

static uint32_t draw(uint64_t *x, int shape)
{
    *x ^= *x << 13, *x ^= *x >> 7, *x ^= *x << 17;
    uint32_t v = (uint32_t)(*x >> 16);
    return shape == 0 ? v : shape == 1 ? v % 7 : shape == 2 ? v & 0xff00ff00u : v >> 12;
}

static void radix_is_stable_sort(void **state)
{
    (void)state;
    enum { N = 5000 };
    struct e8 *a = malloc(N * sizeof *a), *ref = malloc(N * sizeof *ref), *tmp = malloc(N * sizeof *tmp);
    struct e12 *b = malloc(N * sizeof *b), *refb = malloc(N * sizeof *refb), *tmpb = malloc(N * sizeof *tmpb);
    assert_true(a && ref && tmp && b && refb && tmpb);
    uint64_t x = 88172645463325252u;
    for (int shape = 0; shape < 4; shape++)
        for (size_t n = 0; n <= N; n = n * 3 + 1) {
            for (size_t i = 0; i < n; i++) {
                a[i] = (struct e8){draw(&x, shape), (uint32_t)i};
                b[i] = (struct e12){(uint32_t)i, 0, a[i].key};
            }
            memcpy(ref, a, n * sizeof *a);
            memcpy(refb, b, n * sizeof *b);
            INSERTION(struct e8, ref, n);
            INSERTION(struct e12, refb, n);
            ks_sort_by_u32(a, n, sizeof *a, offsetof(struct e8, key), tmp);
            ks_sort_by_u32(b, n, sizeof *b, offsetof(struct e12, key), tmpb);
            for (size_t i = 0; i < n; i++) {
                if (a[i].key != ref[i].key || a[i].seq != ref[i].seq)
                    fail_msg("shape %d, n %zu, 8 bytes: element %zu is (%u, %u), the stable sort's (%u, %u)", shape, n,
                             i, a[i].key, a[i].seq, ref[i].key, ref[i].seq);
                if (b[i].key != refb[i].key || b[i].seq != refb[i].seq)
                    fail_msg("shape %d, n %zu, 12 bytes: element %zu is (%u, %u), the stable sort's (%u, %u)", shape,
                             n, i, b[i].key, b[i].seq, refb[i].key, refb[i].seq);
            }
        }
    free(a);
    free(ref);
    free(tmp);
    free(b);
    free(refb);
    free(tmpb);
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

// Elements that are their key: the order of a sort.
static void radix_sorts_bare_keys(void **state)
{
    (void)state;
    enum { N = 5000 };
    uint32_t *a = malloc(N * sizeof *a), *ref = malloc(N * sizeof *ref), *tmp = malloc(N * sizeof *tmp);
    assert_true(a && ref && tmp);
    uint64_t x = 88172645463325252u;
    for (int shape = 0; shape < 4; shape++)
        for (size_t n = 0; n <= N; n = n * 3 + 1) {
            for (size_t i = 0; i < n; i++)
                a[i] = draw(&x, shape);
            memcpy(ref, a, n * sizeof *a);
            qsort(ref, n, sizeof *ref, cmp_u32);
            ks_sort_by_u32(a, n, sizeof *a, 0, tmp);
            assert_memory_equal(a, ref, n * sizeof *a);
        }
    free(a);
    free(ref);
    free(tmp);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(radix_is_stable_sort),
        cmocka_unit_test(radix_sorts_bare_keys),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
