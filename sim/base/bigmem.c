// bigmem.c - huge-page backed allocations (see bigmem.h).
#define _DEFAULT_SOURCE // MAP_ANONYMOUS, madvise

#include "bigmem.h"

#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>

#define SMALL (UINT64_C(1) << 21) // below one huge page, malloc does better

void *ks_bigmem_alloc(size_t n)
{
    if (n < SMALL)
        return calloc(1, n ? n : 1);
    void *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return NULL;
#ifdef MADV_HUGEPAGE
    madvise(p, n, MADV_HUGEPAGE); // advice only: without it the memory still works
#endif
    return p;
}

void ks_bigmem_free(void *p, size_t n)
{
    if (!p)
        return;
    if (n < SMALL)
        free(p);
    else
        munmap(p, n);
}
