// summary.h - block summaries: per full block and KV head, the element-wise
// min, max and mean of its keys.
//
// A block is summarised once, when it fills (the scorer in blockselect.h
// reads min and max as the Quest bound, or the mean key). Summaries live in
// slots of their own, apart from the KV pages, so that a block whose KV has
// left the GPU keeps its summary for selection; a caller that keeps one
// summary per page may use page numbers as slots.
#ifndef KS_SUMMARY_H
#define KS_SUMMARY_H

#include <stdint.h>

#include "kernel.h"

#ifdef __cplusplus
extern "C" {
#endif

struct ks_block_summary_params {
    uint32_t n;          // blocks to summarise in this call
    uint32_t block_size; // tokens per block (every block here is full)
    uint32_t kv_heads;   // KV heads
    uint32_t head_dim;   // elements per head, <= KS_KERNEL_MAX_HEAD_DIM
    uint32_t n_pages;    // pages in k (bound for page[])
    uint32_t n_slots;    // slots in the summary arrays (bound for slot[])
    const uint16_t *k;   // [n_pages][block_size][kv_heads][head_dim] fp16 keys
    const uint32_t *page; // [n] page holding each block
    const uint32_t *slot; // [n] summary slot each block's summary goes to
    float *kmin;         // [n_slots][kv_heads][head_dim] element-wise min of the keys
    float *kmax;         // [n_slots][kv_heads][head_dim] element-wise max
    float *kmean;        // [n_slots][kv_heads][head_dim] mean key (fp32 sum / block_size)
};

// Writes the summaries of the n blocks; slots not named are left untouched.
// KS_KERNEL_OK or KS_KERNEL_EINVAL (shape out of range, page or slot out of
// bounds: ref checks every entry, cuda only the shape). NaN keys propagate
// into mean and may or may not into min/max (fmin/fmax ignore them). cuda
// also returns KS_KERNEL_ENODEV or ECUDA, and on any failure writes the
// reason into err (kernel.h).
int ks_block_summary_ref(const struct ks_block_summary_params *p);
int ks_block_summary_cuda(const struct ks_block_summary_params *p, struct CUstream_st *stream, char *err,
                          size_t len);

#ifdef __cplusplus
}
#endif

#endif
