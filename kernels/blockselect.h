// blockselect.h - which KV blocks a decode query attends to: Quest scores
// from block summaries, then sink + recent window + top-k of the rest.
//
// Blocks of a sequence with len tokens: nb = ceil(len / block_size) logical
// blocks, n_full = floor(len / block_size) of them full (and summarised).
// Always kept: the sinks (blocks < n_sink), the recent window (the last
// n_window blocks) and a partial last block (it has no summary yet). The
// other blocks are candidates; the top_k of them by score are kept, ties to
// the lower block index, every candidate when there are no more than top_k.
// The selection is written in ascending block order, n_sel entries:
// n_sel <= min(nb, n_sink + n_window + 1 + top_k).
//
// Score of block b for query head h (KV head h / group): with Quest
// (KS_SCORE_QUEST) sum_d max(q_d * min_d, q_d * max_d), an upper bound of
// q . k over the block's keys; with KS_SCORE_MEAN q . mean. No softmax scale
// (it does not change the ranking).
//
// GQA and the per-sequence selection: KS_SELECT_SEQ keeps one selection per
// sequence (what the cache manager moves: a block holds every head), scored
// by reducing the scores of all query heads; KS_SELECT_HEAD keeps one per
// (sequence, KV head), scored by reducing over the query heads of its group.
// The reduction is `reduce`: KS_REDUCE_MAX ranks a block by its best head, so
// the per-sequence selection approximates the union of per-head selections
// (no head loses a block that it alone needs); KS_REDUCE_SUM ranks by the
// total over heads, which favours blocks many heads like. NOTE: MAX is the
// recommended default for the per-sequence selection, for that reason.
#ifndef KS_BLOCKSELECT_H
#define KS_BLOCKSELECT_H

#include <stddef.h>
#include <stdint.h>

#include "kernel.h"

#ifdef __cplusplus
extern "C" {
#endif

enum ks_score_kind { KS_SCORE_QUEST = 0, KS_SCORE_MEAN = 1 };
enum ks_reduce_kind { KS_REDUCE_MAX = 0, KS_REDUCE_SUM = 1 };
enum ks_select_mode { KS_SELECT_SEQ = 0, KS_SELECT_HEAD = 1 };

struct ks_block_select_params {
    uint32_t n_seqs;     // sequences in the batch
    uint32_t q_heads;    // query heads, a multiple of kv_heads
    uint32_t kv_heads;   // KV heads; q_heads / kv_heads <= KS_KERNEL_MAX_GROUP
    uint32_t head_dim;   // elements, <= KS_KERNEL_MAX_HEAD_DIM
    uint32_t block_size; // tokens per block
    uint32_t max_blocks; // row stride of sum_table and score; every nb <= it
    uint32_t n_slots;    // summary slots (bound for sum_table entries)
    uint32_t n_sink;     // blocks always kept at the start
    uint32_t n_window;   // blocks always kept at the end
    uint32_t top_k;      // blocks kept by score among the others
    uint32_t max_sel;    // row stride of sel; >= min(max_blocks, n_sink + n_window + 1 + top_k)
    uint32_t score_kind; // enum ks_score_kind
    uint32_t reduce;     // enum ks_reduce_kind
    uint32_t mode;       // enum ks_select_mode; n_out = 1 (SEQ) or kv_heads (HEAD)
    const float *q;      // [n_seqs][q_heads][head_dim] decode queries
    const uint32_t *seq_len;   // [n_seqs] tokens in the context
    const uint32_t *sum_table; // [n_seqs][max_blocks] summary slot of each full logical block
    const float *kmin;   // [n_slots][kv_heads][head_dim] (ks_block_summary_*); QUEST only
    const float *kmax;   // [n_slots][kv_heads][head_dim]; QUEST only
    const float *kmean;  // [n_slots][kv_heads][head_dim]; MEAN only
    uint32_t *sel;       // [n_seqs][n_out][max_sel] out: selected logical blocks, ascending
    uint32_t *n_sel;     // [n_seqs][n_out] out: entries of each sel row
    float *score;        // [n_seqs][n_out][max_blocks] out, optional (NULL): score of each
                         // full block (sinks and window included); other entries untouched
    void *workspace;     // ks_block_select_workspace(p) bytes (host for ref, device for cuda)
    size_t workspace_bytes;
};

// Workspace bytes both versions need for p's shape.
size_t ks_block_select_workspace(const struct ks_block_select_params *p);

// KS_KERNEL_OK or KS_KERNEL_EINVAL (shape, workspace, a length or - ref only -
// a summary slot out of range); cuda also KS_KERNEL_ENODEV or ECUDA, and on
// any failure it writes the reason into err (kernel.h).
int ks_block_select_ref(const struct ks_block_select_params *p);
int ks_block_select_cuda(const struct ks_block_select_params *p, struct CUstream_st *stream, char *err,
                         size_t len);

#ifdef __cplusplus
}
#endif

#endif
