// bigmem.c - reserved arrays, huge pages over their dense front (see bigmem.h).
#define _DEFAULT_SOURCE // MAP_ANONYMOUS, madvise

#include "bigmem.h"

#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>

#ifndef MADV_COLLAPSE
#define MADV_COLLAPSE 25 // Linux 6.1; older kernels refuse it, and the front stays on small pages
#endif

#define HUGE ((size_t)2 << 20)  // one transparent huge page
#define SMALL ((size_t)64 << 10) // below it, malloc does better than a mapping of its own

void *ks_bigmem_alloc(size_t n)
{
    if (n < SMALL)
        return calloc(1, n ? n : 1);
    // an array that may get huge pages starts on one, so that its front
    // [0, k * HUGE) is exactly k of them
    size_t align = n >= KS_BIGMEM_DENSE ? HUGE : 0;
    char *m = mmap(NULL, n + align, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED)
        return NULL;
    char *p = m;
    if (align) {
        p = (char *)(((uintptr_t)m + HUGE - 1) & ~(uintptr_t)(HUGE - 1));
        if (p > m)
            munmap(m, (size_t)(p - m));
        if (p + n < m + n + align)
            munmap(p + n, (size_t)(m + n + align - (p + n)));
    }
#ifdef MADV_NOHUGEPAGE
    // NOTE: where the kernel gives huge pages to every mapping (THP
    // "always"), the first byte written would commit 2 MiB; small pages
    // until ks_bigmem_use says the array is dense
    madvise(p, n, MADV_NOHUGEPAGE);
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

void ks_bigmem_drop(void *p, size_t n, size_t off, size_t len)
{
    if (n >= SMALL && len > 0)
        madvise((char *)p + off, len, MADV_DONTNEED);
}

size_t ks_bigmem_use(void *p, size_t n, size_t mark, size_t used)
{
    if (n < KS_BIGMEM_DENSE)
        return n; // never dense: no call is needed
    if (used < KS_BIGMEM_DENSE)
        return KS_BIGMEM_DENSE - 1;
    size_t end = (used + HUGE - 1) / HUGE * HUGE; // the huge page being entered, before it is written
    if (end > n)
        end = n;
#ifdef MADV_HUGEPAGE
    madvise(p, end, MADV_HUGEPAGE); // advice only: without it the memory still works
#endif
    if (mark < KS_BIGMEM_DENSE) // just became dense: its front, written on small pages, moves onto huge ones now
        madvise(p, KS_BIGMEM_DENSE, MADV_COLLAPSE);
    return end;
}
