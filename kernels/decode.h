// decode.h - paged decode attention: one query token per sequence against
// its KV cache, dense (every block) or block-sparse (the selected blocks),
// over fp16 KV or int8 KV with a scale per page and KV head; it writes the
// access report the cache manager consumes.
//
// Cache layout: pages of block_size tokens, [n_pages][block_size][kv_heads]
// [head_dim]; logical block b of sequence s lives in page
// block_table[s * max_blocks + b]. Token slots past a sequence's length in its
// last page are never read. GQA: query head h reads KV head h / group, with
// group = q_heads / kv_heads. Softmax and accumulation are fp32 (so are q
// and out); KV is converted to fp32 as loaded.
//
// Access report, per sequence: the blocks accessed (the selection, or
// 0..nb-1 for dense, in that order), the attention mass of each (the sum of
// softmax probabilities over the block's tokens, averaged over the query
// heads, so the masses of a sequence sum to 1), and the accessed blocks that
// the residency table says were not resident. By default the kernel attends
// over every selected block and only reports the missing ones (the caller
// waited for them); with skip_missing it leaves them out (mass 0, never read),
// attending over what is resident. A sequence with nothing to attend to gets
// out = 0 and masses 0.
#ifndef KS_DECODE_H
#define KS_DECODE_H

#include <stddef.h>
#include <stdint.h>

#include "kernel.h"

#ifdef __cplusplus
extern "C" {
#endif

struct ks_decode_params {
    uint32_t n_seqs;     // sequences in the batch (one query token each)
    uint32_t q_heads;    // query heads, a multiple of kv_heads
    uint32_t kv_heads;   // KV heads; q_heads / kv_heads <= KS_KERNEL_MAX_GROUP
    uint32_t head_dim;   // elements, <= KS_KERNEL_MAX_HEAD_DIM
    uint32_t block_size; // tokens per block and page, <= KS_KERNEL_MAX_BLOCK_SIZE
    uint32_t n_pages;    // pages in the cache (bound for block_table entries)
    uint32_t max_blocks; // row stride of block_table and resident; every nb <= it
    float scale;         // applied to q . k before softmax, usually 1 / sqrt(head_dim)
    const float *q;      // [n_seqs][q_heads][head_dim]
    const uint32_t *seq_len;     // [n_seqs] tokens, >= 0
    const uint32_t *block_table; // [n_seqs][max_blocks] page of each logical block
    // fp16 cache (ks_*_decode_*), bit patterns
    const uint16_t *k; // [n_pages][block_size][kv_heads][head_dim]
    const uint16_t *v; // [n_pages][block_size][kv_heads][head_dim]
    // int8 cache (ks_sparse_decode_i8_*): value = int8 * scale of its page and head
    const int8_t *k_i8;   // [n_pages][block_size][kv_heads][head_dim]
    const int8_t *v_i8;   // [n_pages][block_size][kv_heads][head_dim]
    const float *k_scale; // [n_pages][kv_heads]
    const float *v_scale; // [n_pages][kv_heads]
    // selection (sparse only): ks_block_select_* output in KS_SELECT_SEQ mode
    uint32_t max_sel;     // row stride of sel
    const uint32_t *sel;  // [n_seqs][max_sel] logical blocks, strictly ascending, < nb
    const uint32_t *n_sel; // [n_seqs] entries of each sel row
    const uint8_t *resident; // [n_seqs][max_blocks] nonzero: block resident; NULL: all are
    uint32_t skip_missing;   // 1: leave non-resident blocks out of the attention
    // outputs
    float *out;           // [n_seqs][q_heads][head_dim]
    uint32_t report_cap;  // row stride of the report arrays: >= max_sel (sparse), max_blocks (dense)
    uint32_t *acc_blocks; // [n_seqs][report_cap] blocks accessed (may be NULL: not written)
    float *acc_mass;      // [n_seqs][report_cap] attention mass of each (may be NULL)
    uint32_t *n_acc;      // [n_seqs] entries of acc_blocks / acc_mass rows (may be NULL)
    uint32_t *missing;    // [n_seqs][report_cap] accessed blocks not resident, in access order (may be NULL)
    uint32_t *n_missing;  // [n_seqs] entries of each missing row (may be NULL)
    void *workspace;      // ks_decode_workspace(p, sparse) bytes (host for ref, device for cuda)
    size_t workspace_bytes;
};

// Workspace bytes the ref and cuda versions need for p's shape (sparse: 1 for
// the sparse kernels, 0 for dense).
size_t ks_decode_workspace(const struct ks_decode_params *p, int sparse);

// Each returns KS_KERNEL_OK or KS_KERNEL_EINVAL (a shape out of range, a
// missing pointer or workspace; the ref versions also check every page,
// length and selection entry, the cuda versions trust them). The cuda
// versions also return KS_KERNEL_ENODEV or KS_KERNEL_ECUDA, and on any
// failure write the reason into err (kernel.h).
int ks_dense_decode_ref(const struct ks_decode_params *p);
int ks_dense_decode_cuda(const struct ks_decode_params *p, struct CUstream_st *stream, char *err, size_t len);
int ks_sparse_decode_ref(const struct ks_decode_params *p);
int ks_sparse_decode_cuda(const struct ks_decode_params *p, struct CUstream_st *stream, char *err, size_t len);
int ks_sparse_decode_i8_ref(const struct ks_decode_params *p);
int ks_sparse_decode_i8_cuda(const struct ks_decode_params *p, struct CUstream_st *stream, char *err, size_t len);

// Compresses one fp16 page for the int8 kernels: for each KV head, scale =
// max |x| / 127 over its first n_tokens tokens (0 when all are zero) and
// x_i8 = round(x / scale) (ties away from zero), so |x - x_i8 * scale| <=
// scale / 2. Token slots from n_tokens on are written as 0 and never read, so
// a partial page may hold garbage there. KS_KERNEL_OK, or KS_KERNEL_EINVAL
// (shape, or a non-finite value among the tokens read).
int ks_page_quantize_i8(const uint16_t *src, // [block_size][kv_heads][head_dim] fp16
                        uint32_t block_size, uint32_t kv_heads, uint32_t head_dim, uint32_t n_tokens,
                        int8_t *dst,  // [block_size][kv_heads][head_dim]
                        float *scale); // [kv_heads]

#ifdef __cplusplus
}
#endif

#endif
