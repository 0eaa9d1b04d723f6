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

// 0 for 1, else ceil(log2 x), capped at n - 1.
static inline unsigned log_bucket(uint64_t x, unsigned n)
{
    unsigned k = 0;
    while (k < n - 1 && (UINT64_C(1) << k) < x)
        k++;
    return k;
}

// The free range [*fs, *fe) of a context of nb blocks.
static inline void free_range(const struct ks_accessmodel_layer *ml, uint32_t nb, uint32_t *fs, uint32_t *fe)
{
    *fs = ml->n_sink < nb ? ml->n_sink : nb;
    *fe = nb - *fs > ml->n_window ? nb - ml->n_window : *fs;
}

#endif
