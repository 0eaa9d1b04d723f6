// dram.h - host memory copy bandwidth by copy size, on one thread or many.
//
// Each thread owns a source and a destination region of `pool` bytes (at
// least twice the copy size), faulted in before the clock starts, and copies
// `bytes` at a time with memcpy from successive offsets that walk the whole
// region, so that a copy finds its data in DRAM and not in a cache that the
// previous copy warmed (as copying one KV block out of a large pool does).
// All threads start together (a barrier) and copy until a shared deadline;
// a point's time is the mean seconds per copy over the threads.
// Bytes are counted once per byte copied (the memory moves two or three
// times that: ks_dram_moved_per_copied).
#ifndef KS_DRAM_H
#define KS_DRAM_H

#include <stddef.h>

// glibc's x86 memcpy writes with non-temporal stores at or above this many
// bytes (the tunable glibc.cpu.x86_non_temporal_threshold, read from the
// dynamic loader's --list-tunables); 0 where it cannot be read (not x86-64,
// another libc, no loader at the usual path).
size_t ks_dram_nt_threshold(void);

// Bytes the memory moves per byte a copy of `bytes` copies: 3 below the
// non-temporal threshold (each store reads its cache line before writing it:
// the source line, the destination line, the write-back), 2 at or above it
// (no read for ownership); 2 when the threshold is unknown (0). A profile's
// dram_bw counts bytes moved: a copy of s bytes on T threads at once is
// predicted T * s * moved / dram_bw seconds.
double ks_dram_moved_per_copied(size_t bytes, size_t nt_threshold);

struct ks_dram_params {
    size_t bytes;    // bytes per copy
    unsigned threads; // copying threads, >= 1
    size_t pool;     // bytes per region per thread; raised to 2 * bytes when smaller
    double seconds;  // seconds of copying per point, at least
};

struct ks_dram_result {
    double t;            // seconds per copy (mean over threads)
    double bytes_per_s;  // all threads together: threads * bytes / t
    unsigned long long copies; // copies made by all threads
};

// Runs one point. KS_OK, KS_EINVAL (bytes or threads 0, seconds <= 0),
// KS_ENOMEM, or KS_EIO when a thread cannot start.
int ks_dram_bench(const struct ks_dram_params *p, struct ks_dram_result *r);

#endif
