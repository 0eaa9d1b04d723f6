// dram.h - host memory copy bandwidth by copy size, on one thread or many.
//
// Each thread owns a source and a destination region of `pool` bytes (at
// least twice the copy size), faulted in before the clock starts, and copies
// `bytes` at a time with memcpy from successive offsets that walk the whole
// region, so that a copy finds its data in DRAM and not in a cache that the
// previous copy warmed (as copying one KV block out of a large pool does).
// All threads start together (a barrier) and copy until a shared deadline;
// a point's time is the mean seconds per copy over the threads.
// Bytes are counted once per byte copied (each byte is read once and written
// once, so the memory traffic is twice the figure).
#ifndef KS_DRAM_H
#define KS_DRAM_H

#include <stddef.h>

// Bytes the host memory moves per byte a copy copies (read once, written
// once): a profile's dram_bw counts bytes moved, so a measured copy rate
// becomes dram_bw times this. A lower bound where a store reads its cache
// line before writing it (then three).
#define KS_DRAM_MOVED_PER_COPIED 2.0

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
