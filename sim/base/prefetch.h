// prefetch.h - functions whose only work is to fetch memory ahead.
//
// Such a function (a "warm" one: it issues __builtin_prefetch and nothing
// else) must be declared KS_PREFETCH_FN where other files call it: GCC deems
// a function without side effects pure and drops calls whose result nobody
// reads, and a prefetch is no side effect to it. noipa keeps the compiler
// from looking into the function at its calls. Within one file, write the
// prefetches in the loop itself (cache.c, blocktab.c do), or call
// ks_prefetch_lines, which is always inlined.
#ifndef KS_PREFETCH_H
#define KS_PREFETCH_H

#include <stddef.h>
#include <stdint.h>

#if defined(__GNUC__) && !defined(__clang__)
#define KS_PREFETCH_FN __attribute__((noipa))
#else
#define KS_PREFETCH_FN
#endif

// Fetches (for reading) the cache lines that hold the bytes at p.
static inline __attribute__((always_inline)) void ks_prefetch_lines(const void *p, size_t bytes)
{
    uintptr_t at = (uintptr_t)p & ~(uintptr_t)63, end = (uintptr_t)p + bytes;
    for (; at < end; at += 64)
        __builtin_prefetch((const void *)at);
}

#endif
