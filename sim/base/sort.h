// sort.h - sorting the short arrays of one planning round.
//
// Eviction rounds and migration plans sort a few dozen entries at a time,
// where an insertion sort beats qsort's call per comparison; longer arrays go
// to qsort. Not stable (use a tie-breaking key where order matters).
#ifndef KS_SORT_H
#define KS_SORT_H

#include <stddef.h>

void ks_sort(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *));

#endif
