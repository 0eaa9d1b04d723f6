// grow.h - growing an array by doubling.
//
// An array that grows by doubling costs amortised O(1) per element and never
// shrinks; a failed growth leaves the array and its capacity as they were.
#ifndef KS_GROW_H
#define KS_GROW_H

#include <stddef.h>
#include <stdint.h>

// Makes room for n elements of size sz in *arr (capacity *cap, in
// elements): doubles from 16 until it holds n. KS_OK or KS_ENOMEM.
int ks_grow(void **arr, uint32_t *cap, uint32_t n, size_t sz);

#endif
