// bigmem.h - large zeroed arrays that cost memory as far as they are used,
// backed by huge pages once that part is large.
//
// A table sized for the worst case (the block table for every page of every
// tier, a tier's reverse map) is reserved, not committed: a page of it takes
// memory only when first written. Its owner writes it from the front (ids
// and pages are handed out in increasing order), so the memory follows the
// part in use, not the size.
//
// The block table and the tiers' page arrays are read at random (eviction
// samples, access reports): once such a table outgrows the TLB's reach with
// 4 KiB pages, nearly every read also misses the TLB, and huge pages (2 MiB)
// cut those misses by 512x. But one byte written in a huge page commits all
// of it, and a GPU of a large cluster holds a few thousand blocks in tables
// sized for millions. So huge pages are asked for only over the part in use,
// and only once it reaches KS_BIGMEM_DENSE: the owner says how far it is
// about to write (ks_bigmem_use) before it writes there. Then the front,
// written on small pages so far, is moved onto huge ones at once (Linux's
// MADV_COLLAPSE; the table's owner writes it densely, so this commits
// little), and every huge page after it is asked for before it is entered.
//
// Invariant: below KS_BIGMEM_DENSE in use, the memory an array costs is its
// written bytes rounded up to 4 KiB pages; from there on, at most one huge
// page (2 MiB) beyond the written part, and the unwritten holes of the front.
#ifndef KS_BIGMEM_H
#define KS_BIGMEM_H

#include <stddef.h>

// NOTE: 8 MiB: a table below it fits the reach of a TLB of ~2000 small
// pages, where huge pages buy little; above it the huge page being filled
// costs at most a quarter more than the part in use.
#define KS_BIGMEM_DENSE ((size_t)8 << 20) // bytes

// Returns zeroed memory of n bytes, reserved (committed as written), or
// NULL. Free with ks_bigmem_free(p, n).
void *ks_bigmem_alloc(size_t n);
void ks_bigmem_free(void *p, size_t n);

// Bytes [off, off + len) of p (n bytes from ks_bigmem_alloc; off and len
// multiples of 4 KiB) will not be read again before they are written: their
// memory goes back to the system, and they read as zero. A small array (a
// calloc of its own) keeps its memory. Advice only, as below.
void ks_bigmem_drop(void *p, size_t n, size_t off, size_t len);

// Bytes [0, used) of p (n bytes from ks_bigmem_alloc) are about to be
// written. Returns a mark: the next call is needed only once used passes it
// (the caller keeps it, starting from 0, and passes it back). Advice only:
// the memory works whatever the kernel does with it.
size_t ks_bigmem_use(void *p, size_t n, size_t mark, size_t used);

#endif
