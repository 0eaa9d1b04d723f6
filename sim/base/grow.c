// grow.c - growing an array by doubling, and reusing its freed elements (see grow.h).
#include "grow.h"

#include <stdlib.h>
#include <string.h>

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

int ks_ids_take(struct ks_ids *ids, void **arr, size_t sz, uint32_t *id)
{
    if (ids->n_free) {
        *id = ids->free[--ids->n_free];
        return KS_OK;
    }
    if (ids->n == UINT32_MAX - 1)
        return KS_ENOMEM;
    uint32_t cap = ids->cap;
    if (ks_grow(arr, &ids->cap, ids->n + 1, sz) != KS_OK)
        return KS_ENOMEM;
    if (ids->cap != cap) { // the stack holds every index the array does
        uint32_t *f = realloc(ids->free, (size_t)ids->cap * sizeof *f);
        if (!f) {
            ids->cap = cap; // the array keeps its larger block; the next growth reuses it
            return KS_ENOMEM;
        }
        ids->free = f;
    }
    *id = ids->n++;
    memset((char *)*arr + (size_t)*id * sz, 0, sz);
    return KS_OK;
}

void ks_ids_fini(struct ks_ids *ids)
{
    free(ids->free);
    *ids = (struct ks_ids){0};
}
