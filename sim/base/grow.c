// grow.c - growing an array by doubling (see grow.h).
#include "grow.h"

#include <stdlib.h>

#include "status.h"

int ks_grow(void **arr, uint32_t *cap, uint32_t n, size_t sz)
{
    if (n <= *cap)
        return KS_OK;
    uint32_t c = *cap ? *cap : 16;
    while (c < n)
        c = c > UINT32_MAX / 2 ? n : 2 * c;
    void *p = realloc(*arr, (size_t)c * sz);
    if (!p)
        return KS_ENOMEM;
    *arr = p;
    *cap = c;
    return KS_OK;
}
