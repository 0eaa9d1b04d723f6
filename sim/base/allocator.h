// allocator.h - which malloc this process runs on, for the reports that
// time it (`kvstrata info`, the benchmark scripts' headers).
//
// The kvstrata command is linked with jemalloc (CMake's KS_JEMALLOC): SimGrid
// makes and frees several small objects for every activity; past its small
// per-thread cache (seven chunks of a size) glibc's malloc locks an arena
// once a second thread runs (the draws' worker, --threads), where jemalloc's
// larger thread caches do not (README, "The simulator's speed": the loaded
// level at 0.90 of its wall time with two threads, unchanged with one).
// Results do not depend on the allocator; wall times and peak memory do.
#ifndef KS_ALLOCATOR_H
#define KS_ALLOCATOR_H

#include <stddef.h>

// Writes "jemalloc VERSION" when jemalloc serves this process's malloc
// (linked in or preloaded), else "C library" (glibc's); returns buf.
const char *ks_allocator(char *buf, size_t len);

#endif
