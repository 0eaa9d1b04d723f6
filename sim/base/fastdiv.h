// fastdiv.h - the quotient of 32-bit numbers by a divisor fixed at run time,
// by a multiplication with a precomputed magic number (Lemire, Kaser and
// Kurz, "Faster remainder by direct computation", 2019): exact for every
// 32-bit numerator and every divisor from 1 to 2^32 - 1.
//
// NOTE: for hot paths that divide by a divisor the compiler cannot see (a
// device buffer's size): a hardware division's latency stalls whatever reads
// the result (a fifth of ks_cache_page_free's samples on hs_one: perf,
// 2026-12-06). An access-model stream's slot (step mod its ring), taken
// from the same magic number, ran no faster (perf, cluster_64x8_loaded.lua
// on one node): there the division's latency was hidden.
#ifndef KS_FASTDIV_H
#define KS_FASTDIV_H

#include <stdint.h>

// The magic number of divisor d >= 1: ceil(2^64 / d), 0 for d == 1.
static inline uint64_t ks_fastdiv_magic(uint32_t d)
{
    return d > 1 ? UINT64_MAX / d + 1 : 0;
}

// n / d, with m = ks_fastdiv_magic(d).
static inline uint32_t ks_fastdiv(uint64_t m, uint32_t n)
{
    return m ? (uint32_t)(((unsigned __int128)m * n) >> 64) : n;
}

#endif
