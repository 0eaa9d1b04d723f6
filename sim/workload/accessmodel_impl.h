// accessmodel_impl.h - what the access model's two files share: the model
// (accessmodel.c fits it, accessstream.c runs it) and two small helpers.
// Nothing outside them includes it.
#ifndef KS_ACCESSMODEL_IMPL_H
#define KS_ACCESSMODEL_IMPL_H

#include <stdint.h>

#include "accessmodel.h"

struct ks_accessmodel {
    uint32_t layers;
    struct ks_accessmodel_params p;
    struct ks_accessmodel_layer *layer; // [layers]
};

// 0 for 0 and 1, else ceil(log2 x), capped at n - 1 (n >= 1): the least k
// with 2^k >= x. NOTE: by the count of leading zeros, not a loop: called per
// block of a step's selection, the loop's exit mispredicted as the ages grew
// (perf, cluster_64x8_loaded.lua on one node, 2026-12-05).
static inline unsigned log_bucket(uint64_t x, unsigned n)
{
    unsigned k = x > 1 ? 64u - (unsigned)__builtin_clzll(x - 1) : 0u;
    return k < n - 1 ? k : n - 1;
}

// The free range [*fs, *fe) of a context of nb blocks.
static inline void free_range(const struct ks_accessmodel_layer *ml, uint32_t nb, uint32_t *fs, uint32_t *fe)
{
    *fs = ml->n_sink < nb ? ml->n_sink : nb;
    *fe = nb - *fs > ml->n_window ? nb - ml->n_window : *fs;
}

#endif
