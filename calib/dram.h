// dram.h - host memory copy bandwidth by copy size, on one thread or many.
//
// A ks_dram holds, per thread, a source and a destination region of
// max(pool, 2 * the largest copy) bytes, faulted in once by ks_dram_new, so
// that timing a window costs the window and nothing else: a caller can
// measure its sizes in rounds (one window of each size per round), and a
// slow drift of the machine then reaches every size alike instead of the
// few measured while it lasted. ks_dram_run times one window: each thread
// copies `bytes` at a time with memcpy from successive offsets that walk
// max(pool, 2 * bytes) bytes of its regions, so that a copy finds its data
// in DRAM and not in a cache that the previous copy warmed (as copying one
// KV block out of a large pool does); the walk continues where the thread's
// previous window stopped, for the same reason. The threads start together
// and copy until each has copied for the window's seconds; a window's time
// is the mean seconds per copy over the threads. Bytes are counted once per
// byte copied (the memory moves two or three times that:
// ks_dram_moved_per_copied).
#ifndef KS_DRAM_H
#define KS_DRAM_H

#include <stddef.h>

struct ks_dram;

struct ks_dram_params {
    unsigned threads; // copying threads at most, 1..KS_DRAM_MAX_THREADS
    size_t max_bytes; // bytes of the largest copy, >= 1
    size_t pool;      // bytes per region per thread; raised to 2 * max_bytes when smaller
};
#define KS_DRAM_MAX_THREADS 1024

struct ks_dram_point {
    size_t bytes;     // bytes per copy, 1..max_bytes
    unsigned threads; // copying at once, 1..the ks_dram's threads (the first ones' regions)
    double seconds;   // the timed window per thread, at least (and at least two copies)
};

struct ks_dram_result {
    double t;            // seconds per copy (mean over threads)
    double bytes_per_s;  // all threads together: threads * bytes / t
    unsigned long long copies; // copies made by all threads
};

// Allocates the regions of p->threads threads and writes every page of them
// (p->threads threads in parallel) before returning. The caller frees it
// with ks_dram_free. NULL when p is out of range, memory runs out or a
// thread cannot start. Holds 2 * threads * max(pool, 2 * max_bytes) bytes.
struct ks_dram *ks_dram_new(const struct ks_dram_params *p);

// Times one window. KS_OK, KS_EINVAL (p out of range for d), or KS_EIO when
// a thread cannot start (nothing is timed then).
int ks_dram_run(struct ks_dram *d, const struct ks_dram_point *p, struct ks_dram_result *r);

// Frees d and its regions. NULL is a no-op.
void ks_dram_free(struct ks_dram *d);

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

#endif
