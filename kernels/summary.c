// summary.c - block summaries, reference version: min, max and mean key per
// block and KV head, accumulated in fp32 in token order.
#include <math.h>

#include "kernel_impl.h"

int ks_block_summary_check(const struct ks_block_summary_params *p)
{
    if (!p || p->block_size == 0 || p->kv_heads == 0 || p->head_dim == 0 || p->head_dim > KS_KERNEL_MAX_HEAD_DIM)
        return KS_KERNEL_EINVAL;
    if (p->n && (!p->k || !p->page || !p->slot || !p->kmin || !p->kmax || !p->kmean))
        return KS_KERNEL_EINVAL;
    return KS_KERNEL_OK;
}

int ks_block_summary_ref(const struct ks_block_summary_params *p)
{
    int st = ks_block_summary_check(p);
    if (st != KS_KERNEL_OK)
        return st;
    for (uint32_t i = 0; i < p->n; i++)
        if (p->page[i] >= p->n_pages || p->slot[i] >= p->n_slots)
            return KS_KERNEL_EINVAL;
    const size_t hd = p->head_dim, row = (size_t)p->kv_heads * hd;
    for (uint32_t i = 0; i < p->n; i++) {
        const uint16_t *page = p->k + (size_t)p->page[i] * p->block_size * row;
        for (uint32_t h = 0; h < p->kv_heads; h++) {
            size_t o = ((size_t)p->slot[i] * p->kv_heads + h) * hd;
            for (uint32_t d = 0; d < hd; d++) {
                float x = ks_half_to_float(page[h * hd + d]);
                float mn = x, mx = x, sum = x;
                for (uint32_t t = 1; t < p->block_size; t++) {
                    x = ks_half_to_float(page[t * row + h * hd + d]);
                    mn = fminf(mn, x);
                    mx = fmaxf(mx, x);
                    sum += x;
                }
                p->kmin[o + d] = mn;
                p->kmax[o + d] = mx;
                p->kmean[o + d] = sum / (float)p->block_size;
            }
        }
    }
    return KS_KERNEL_OK;
}
