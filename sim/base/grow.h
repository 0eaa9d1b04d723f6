// grow.h - growing an array by doubling, and reusing its freed elements.
//
// An array that grows by doubling costs amortised O(1) per element and never
// shrinks; a failed growth leaves the array and its capacity as they were.
// An array whose elements are freed and taken again by index (requests in a
// cache manager) keeps its freed indices on a stack (struct ks_ids): the last
// freed is taken first, and a new index only when none waits.
#ifndef KS_GROW_H
#define KS_GROW_H

#include <stddef.h>
#include <stdint.h>

// Makes room for n elements of size sz in *arr (capacity *cap, in
// elements): doubles from 16 until it holds n. KS_OK or KS_ENOMEM.
int ks_grow(void **arr, uint32_t *cap, uint32_t n, size_t sz);

// The indices of an array's elements, the freed ones on a stack. Zeroed, it
// holds none; ks_ids_fini frees the stack.
struct ks_ids {
    uint32_t n;      // indices ever taken: [0, n)
    uint32_t cap;    // elements the array and the stack hold
    uint32_t *free;  // [cap] freed indices, the last freed on top
    uint32_t n_free; // indices on the stack
};

// Takes an index of *arr (elements of sz bytes, ids->cap of them): the last
// freed, else ids->n, whose element is zeroed after *arr grows to hold it
// (the stack grows with it, so that it can hold every index). KS_OK, or
// KS_ENOMEM with no index taken (*arr may have moved to a larger block).
int ks_ids_take(struct ks_ids *ids, void **arr, size_t sz, uint32_t *id);

// Gives index id back (it must have been taken and not given back since).
static inline void ks_ids_give(struct ks_ids *ids, uint32_t id)
{
    ids->free[ids->n_free++] = id;
}

void ks_ids_fini(struct ks_ids *ids);

#endif
