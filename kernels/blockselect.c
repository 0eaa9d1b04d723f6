// blockselect.c - block scoring and top-k selection, reference version.
//
// Scores are fp32 sums in dimension order. Candidates are ranked by a packed
// 64-bit key (score key high, inverted block index low), unique per block, so
// sorting it gives the documented order (score descending, ties to the lower
// index) with plain qsort and no comparator state.
#include <stdlib.h>

#include "kernel_impl.h"

int ks_block_select_check(const struct ks_block_select_params *p)
{
    if (!p || p->kv_heads == 0 || p->q_heads == 0 || p->q_heads % p->kv_heads != 0 ||
        p->q_heads / p->kv_heads > KS_KERNEL_MAX_GROUP || p->head_dim == 0 || p->head_dim > KS_KERNEL_MAX_HEAD_DIM ||
        p->block_size == 0 || p->score_kind > KS_SCORE_MEAN || p->reduce > KS_REDUCE_SUM || p->mode > KS_SELECT_HEAD)
        return KS_KERNEL_EINVAL;
    uint64_t need = (uint64_t)p->n_sink + p->n_window + 1 + p->top_k;
    if (need > p->max_blocks)
        need = p->max_blocks;
    if (p->max_sel < need)
        return KS_KERNEL_EINVAL;
    if (p->n_seqs == 0)
        return KS_KERNEL_OK;
    if (!p->q || !p->seq_len || !p->sum_table || !p->sel || !p->n_sel)
        return KS_KERNEL_EINVAL;
    if (p->score_kind == KS_SCORE_QUEST ? (!p->kmin || !p->kmax) : !p->kmean)
        return KS_KERNEL_EINVAL;
    if (p->workspace_bytes < ks_block_select_workspace(p) || !p->workspace)
        return KS_KERNEL_EINVAL;
    return KS_KERNEL_OK;
}

size_t ks_block_select_workspace(const struct ks_block_select_params *p)
{
    size_t n = (size_t)p->n_seqs * ks_select_outs(p) * p->max_blocks;
    return n * (sizeof(uint64_t) + sizeof(float));
}

// Score of query head h against a block summary slot.
static float head_score(const struct ks_block_select_params *p, const float *q, uint32_t h, uint32_t slot)
{
    uint32_t kvh = h / (p->q_heads / p->kv_heads);
    size_t o = ((size_t)slot * p->kv_heads + kvh) * p->head_dim;
    float s = 0.0f;
    if (p->score_kind == KS_SCORE_QUEST) {
        for (uint32_t d = 0; d < p->head_dim; d++) {
            float a = q[d] * p->kmin[o + d], b = q[d] * p->kmax[o + d];
            s += a > b ? a : b;
        }
    } else {
        for (uint32_t d = 0; d < p->head_dim; d++)
            s += q[d] * p->kmean[o + d];
    }
    return s;
}

static int cmp_desc(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x < y) - (x > y);
}

static uint64_t packed(float score, uint32_t b)
{
    return (uint64_t)ks_score_key(score) << 32 | (uint64_t)(UINT32_MAX - b);
}

int ks_block_select_ref(const struct ks_block_select_params *p)
{
    int st = ks_block_select_check(p);
    if (st != KS_KERNEL_OK)
        return st;
    const uint32_t outs = ks_select_outs(p), group = p->q_heads / p->kv_heads;
    for (uint32_t s = 0; s < p->n_seqs; s++) {
        if (ks_ceil_div(p->seq_len[s], p->block_size) > p->max_blocks)
            return KS_KERNEL_EINVAL;
        for (uint32_t b = 0; b < p->seq_len[s] / p->block_size; b++)
            if (p->sum_table[(size_t)s * p->max_blocks + b] >= p->n_slots)
                return KS_KERNEL_EINVAL;
    }
    uint64_t *keys = p->workspace;
    float *scores = (float *)(keys + (size_t)p->n_seqs * outs * p->max_blocks);
    for (uint32_t s = 0; s < p->n_seqs; s++) {
        uint32_t nb, lo, hi, full = p->seq_len[s] / p->block_size;
        ks_select_range(p->seq_len[s], p->block_size, p->n_sink, p->n_window, &nb, &lo, &hi);
        const float *q = p->q + (size_t)s * p->q_heads * p->head_dim;
        for (uint32_t o = 0; o < outs; o++) {
            size_t row = ((size_t)s * outs + o) * p->max_blocks;
            uint32_t h0 = p->mode == KS_SELECT_HEAD ? o * group : 0;
            uint32_t h1 = p->mode == KS_SELECT_HEAD ? h0 + group : p->q_heads;
            for (uint32_t b = 0; b < full; b++) {
                uint32_t slot = p->sum_table[(size_t)s * p->max_blocks + b];
                float sc = 0.0f;
                for (uint32_t h = h0; h < h1; h++) {
                    float x = head_score(p, q + (size_t)h * p->head_dim, h, slot);
                    sc = h == h0 ? x : p->reduce == KS_REDUCE_SUM ? sc + x : (x > sc ? x : sc);
                }
                scores[row + b] = sc;
                if (p->score)
                    p->score[row + b] = sc;
            }
            // Candidates past top_k are dropped: keep those with a key at
            // least the top_k-th largest (keys are unique).
            uint64_t threshold = 0;
            if (hi - lo > p->top_k) {
                uint64_t *k = keys + row;
                for (uint32_t b = lo; b < hi; b++)
                    k[b - lo] = packed(scores[row + b], b);
                qsort(k, hi - lo, sizeof *k, cmp_desc);
                threshold = p->top_k ? k[p->top_k - 1] : UINT64_MAX;
            }
            uint32_t *sel = p->sel + ((size_t)s * outs + o) * p->max_sel, n = 0;
            for (uint32_t b = 0; b < nb; b++) {
                int cand = b >= lo && b < hi;
                if (!cand || packed(scores[row + b], b) >= threshold)
                    sel[n++] = b;
            }
            p->n_sel[(size_t)s * outs + o] = n;
        }
    }
    return KS_KERNEL_OK;
}
