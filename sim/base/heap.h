// heap.h - a binary heap kept in the caller's array of fixed-size elements.
//
// The caller owns the array, its capacity and its count; these functions
// only move elements, qsort-style. cmp(a, b) < 0 means a leaves before b
// (only whether the answer is negative is looked at). base[0 .. n) is in
// heap order when no element leaves before its parent, and base[0] then
// leaves first. Ties are part of the contract, because results built on a
// heap are compared byte for byte: an element rises above its parent, or a
// child above the element sifting down, only when it leaves strictly before
// it; of two children that tie, the left one is taken.
//
// Both sifts move a hole instead of swapping: the element being placed is
// read where it lies (e, or the last slot, which the sift never writes) and
// copied once into the slot it ends in.
//
// NOTE: defined here, inline, with no heap.c: each user's cmp and element
// size then compile into its own copy of the sifts. Called through a pointer,
// the eviction heap ran `kvstrata bench cache --policy belady` 10-15% slower.
#ifndef KS_HEAP_H
#define KS_HEAP_H

#include <stddef.h>
#include <string.h>

#include "status.h"

// Adds *e to base[0 .. n) (heap order, room for element n); base then holds
// n + 1 elements in heap order. e must not point into base.
static inline void ks_heap_push(void *base, size_t n, size_t size, const void *e,
                                int (*cmp)(const void *a, const void *b))
{
    unsigned char *a = base;
    size_t i = n;
    while (i > 0) {
        size_t p = (i - 1) / 2;
        if (cmp(e, a + p * size) >= 0)
            break;
        memcpy(a + i * size, a + p * size, size);
        i = p;
    }
    memcpy(a + i * size, e, size);
}

// Replaces base[0] of base[0 .. n), n >= 1, by *e and restores heap order:
// a pop and a push in one pass. e must not point into base[0 .. n).
static inline void ks_heap_replace(void *base, size_t n, size_t size, const void *e,
                                   int (*cmp)(const void *a, const void *b))
{
    KS_ASSERT(n >= 1);
    unsigned char *a = base;
    size_t i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= n)
            break;
        if (c + 1 < n && cmp(a + (c + 1) * size, a + c * size) < 0)
            c++;
        if (cmp(a + c * size, e) >= 0)
            break;
        memcpy(a + i * size, a + c * size, size);
        i = c;
    }
    memcpy(a + i * size, e, size);
}

// Removes base[0] from base[0 .. n), n >= 1, copying it to *top unless top is
// NULL; base then holds n - 1 elements in heap order.
static inline void ks_heap_pop(void *base, size_t n, size_t size, void *top,
                               int (*cmp)(const void *a, const void *b))
{
    KS_ASSERT(n >= 1);
    unsigned char *a = base;
    if (top)
        memcpy(top, a, size);
    if (n > 1) // the last element sifts down from the root of the n - 1 left; its slot lies outside them
        ks_heap_replace(base, n - 1, size, a + (n - 1) * size, cmp);
}

#endif
