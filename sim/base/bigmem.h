// bigmem.h - large zeroed arrays, backed by huge pages where the kernel allows.
//
// The block table and the tiers' page arrays are read at random (eviction
// samples, access reports): with 4 KiB pages nearly every such read also
// misses the TLB. Asking for transparent huge pages (2 MiB) cuts those misses
// by 512x. Allocations below a threshold come from malloc as usual.
#ifndef KS_BIGMEM_H
#define KS_BIGMEM_H

#include <stddef.h>

// Returns zeroed memory of n bytes, or NULL. Free with ks_bigmem_free(p, n).
void *ks_bigmem_alloc(size_t n);
void ks_bigmem_free(void *p, size_t n);

#endif
