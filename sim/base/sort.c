// sort.c - insertion sort for short arrays, qsort for long ones (see sort.h).
#include "sort.h"

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
