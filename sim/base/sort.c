// sort.c - insertion sort for short arrays, qsort for long ones, radix by a
// 32-bit key (see sort.h).
#include "sort.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define SHORT 48 // entries; measured on plans and eviction rounds of the cache bench
#define MAX_ELEM 64 // bytes an element may take on the insertion path

void ks_sort(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *))
{
    if (n > SHORT || size > MAX_ELEM) {
        qsort(base, n, size, cmp);
        return;
    }
    unsigned char *a = base, x[MAX_ELEM];
    for (size_t i = 1; i < n; i++) {
        memcpy(x, a + i * size, size);
        size_t j = i;
        for (; j > 0 && cmp(x, a + (j - 1) * size) < 0; j--)
            memcpy(a + j * size, a + (j - 1) * size, size);
        memcpy(a + j * size, x, size);
    }
}

static uint32_t key_at(const unsigned char *e, size_t key)
{
    uint32_t k;
    memcpy(&k, e + key, sizeof k);
    return k;
}

void ks_sort_by_u32(void *base, size_t n, size_t size, size_t key, void *tmp)
{
    unsigned char *src = base, *dst = tmp;
    uint32_t used = 0; // the bits some key sets: passes over the bytes that vary
    for (size_t i = 0; i < n; i++)
        used |= key_at(src + i * size, key);
    for (unsigned shift = 0; shift < 32 && used >> shift; shift += 8) {
        size_t start[257] = {0};
        for (size_t i = 0; i < n; i++)
            start[((key_at(src + i * size, key) >> shift) & 255) + 1]++;
        for (int d = 1; d <= 256; d++)
            start[d] += start[d - 1];
        if (size == sizeof(uint64_t)) { // the common elements, copied as one word
            for (size_t i = 0; i < n; i++) {
                uint64_t e;
                memcpy(&e, src + i * 8, 8);
                memcpy(dst + start[(key_at(src + i * 8, key) >> shift) & 255]++ * 8, &e, 8);
            }
        } else if (size == sizeof(uint32_t)) { // the key alone
            for (size_t i = 0; i < n; i++) {
                uint32_t e = key_at(src + i * 4, 0);
                memcpy(dst + start[(e >> shift) & 255]++ * 4, &e, 4);
            }
        } else {
            for (size_t i = 0; i < n; i++)
                memcpy(dst + start[(key_at(src + i * size, key) >> shift) & 255]++ * size, src + i * size, size);
        }
        unsigned char *t = src;
        src = dst;
        dst = t;
    }
    if (src != base)
        memcpy(base, src, n * size);
}
