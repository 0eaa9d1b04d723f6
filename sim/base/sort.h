// sort.h - sorting the short arrays of one planning round.
//
// Eviction rounds and migration plans sort a few dozen entries at a time,
// where an insertion sort beats qsort's call per comparison; longer arrays go
// to qsort. Not stable (use a tie-breaking key where order matters).
#ifndef KS_SORT_H
#define KS_SORT_H

#include <stddef.h>

void ks_sort(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *));

// Sorts the n elements of `size` bytes at base by the uint32_t at byte
// offset `key` in each, ascending, equal keys in their order: stable, so
// the order is the one every stable sort gives (glibc's qsort, a merge
// sort, included). Least significant byte first, one pass per byte that
// some key uses; tmp holds n elements. For arrays of thousands, where
// qsort's call per comparison is most of the time.
void ks_sort_by_u32(void *base, size_t n, size_t size, size_t key, void *tmp);

#endif
