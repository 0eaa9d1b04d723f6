// attention.h - block selection from synthetic attention, through the
// reference kernels.
//
// One sequence is one (request, layer) of the synthetic attention (synth.h).
// As its context grows, every block that fills is summarised by
// ks_block_summary_ref from the block's synthetic keys (generated once, then
// dropped: only the summaries stay, so memory is per block, not per token);
// each decode step scores the summarised blocks with the step's queries and
// selects sink + recent window + top-k with ks_block_select_ref (one
// selection per sequence, query heads reduced by their maximum). Memory:
// 2 * kv_heads * head_dim floats per block (Quest: min and max) or one
// (mean).
//
// The mass of each selected block is the block-level softmax of its score
// (score * scale, with tokens in the block as weight; the partial last block,
// which has no summary yet, takes the best selected score): an estimate.
// The exact mass comes from the decode kernel over the real KV, which the
// trace recorder runs; the simulator's `topk` policy uses this estimate.
#ifndef KS_ATTENTION_H
#define KS_ATTENTION_H

#include <stddef.h>
#include <stdint.h>

#include "synth.h"

struct ks_attention_params {
    uint32_t block_size; // tokens per block
    uint32_t n_sink;     // blocks always selected at the start
    uint32_t n_window;   // blocks always selected at the end
    uint32_t top_k;      // blocks selected by score among the others
    uint32_t score;      // enum ks_score_kind (kernels/blockselect.h): Quest bound or mean key
};

struct ks_attention_seq;

// A sequence for (req, prompt tokens, layer) of synthetic attention s (not
// owned; it must outlive the sequence). NULL with the reason in err.
struct ks_attention_seq *ks_attention_seq_new(const struct ks_attention_params *p, const struct ks_synth *s,
                                              uint64_t req, uint32_t prompt, uint32_t layer, char *err, size_t len);
void ks_attention_seq_free(struct ks_attention_seq *q);

// The selection of decode step st (context prompt + st->step + 1 tokens:
// the step's own token included):
// blocks ascending into blocks[0 .. *n), their estimated masses (summing to
// 1) into mass. cap must be at least n_sink + n_window + 1 + top_k. KS_OK,
// KS_EINVAL (a step for another request, cap too small) or KS_ENOMEM.
int ks_attention_seq_select(struct ks_attention_seq *q, const struct ks_synth_step *st, uint32_t *blocks,
                            float *mass, uint32_t cap, uint32_t *n);

#endif
