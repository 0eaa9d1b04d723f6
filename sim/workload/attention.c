// attention.c - block selection from synthetic attention (see attention.h).
//
// Invariant: blocks 0 .. n_sum-1 are summarised, in store slots of the same
// index; n_sum only grows (a context never shrinks).
#include "attention.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blockselect.h"
#include "kernel.h"
#include "status.h"
#include "summary.h"

struct ks_attention_seq {
    struct ks_attention_params p;
    const struct ks_synth *s;
    uint64_t req;
    uint32_t prompt, layer;
    uint32_t kv_heads, q_heads, head_dim;
    uint32_t n_sum, cap;      // blocks summarised, slots allocated
    float *kmin, *kmax, *kmean; // [cap][kv_heads][head_dim]; only what the score needs
    uint32_t *slot_of;        // [cap] identity: the summary slot of each block
    float *score;             // [cap + 1] scores of the last step
    float *q;                 // [q_heads][head_dim]
    float *keys;              // [block_size][head_dim] one head's keys
    uint16_t *page;           // [block_size][kv_heads][head_dim] fp16: the block being summarised
    float *one_min, *one_max, *one_mean; // [kv_heads][head_dim] the summary kernel's output slot
    void *ws;
    size_t ws_bytes;
};

struct ks_attention_seq *ks_attention_seq_new(const struct ks_attention_params *p, const struct ks_synth *s,
                                              uint64_t req, uint32_t prompt, uint32_t layer, char *err, size_t len)
{
    const struct ks_synth_params *sp = ks_synth_params_of(s);
    if (p->block_size == 0 || p->block_size > KS_KERNEL_MAX_BLOCK_SIZE || sp->head_dim > KS_KERNEL_MAX_HEAD_DIM ||
        sp->group > KS_KERNEL_MAX_GROUP || layer >= sp->n_layers || p->score > KS_SCORE_MEAN) {
        snprintf(err, len, "attention: block size %u, head_dim %u, group %u or layer %u out of range", p->block_size,
                 sp->head_dim, sp->group, layer);
        return NULL;
    }
    struct ks_attention_seq *q = calloc(1, sizeof *q);
    if (!q) {
        snprintf(err, len, "out of memory");
        return NULL;
    }
    q->p = *p;
    q->s = s;
    q->req = req;
    q->prompt = prompt;
    q->layer = layer;
    q->kv_heads = sp->n_kv_heads;
    q->q_heads = sp->n_kv_heads * sp->group;
    q->head_dim = sp->head_dim;
    size_t hd = (size_t)q->kv_heads * q->head_dim;
    q->q = malloc((size_t)q->q_heads * q->head_dim * sizeof *q->q);
    q->keys = malloc((size_t)p->block_size * q->head_dim * sizeof *q->keys);
    q->page = malloc((size_t)p->block_size * hd * sizeof *q->page);
    q->one_min = malloc(hd * sizeof(float));
    q->one_max = malloc(hd * sizeof(float));
    q->one_mean = malloc(hd * sizeof(float));
    if (!q->q || !q->keys || !q->page || !q->one_min || !q->one_max || !q->one_mean) {
        ks_attention_seq_free(q);
        snprintf(err, len, "out of memory");
        return NULL;
    }
    return q;
}

void ks_attention_seq_free(struct ks_attention_seq *q)
{
    if (!q)
        return;
    free(q->kmin);
    free(q->kmax);
    free(q->kmean);
    free(q->slot_of);
    free(q->score);
    free(q->q);
    free(q->keys);
    free(q->page);
    free(q->one_min);
    free(q->one_max);
    free(q->one_mean);
    free(q->ws);
    free(q);
}

static int grow(struct ks_attention_seq *q, uint32_t need)
{
    if (need <= q->cap)
        return KS_OK;
    uint32_t cap = q->cap ? q->cap : 64;
    while (cap < need)
        cap *= 2;
    size_t hd = (size_t)q->kv_heads * q->head_dim;
    int quest = q->p.score == KS_SCORE_QUEST;
    float *a = quest ? realloc(q->kmin, cap * hd * sizeof *a) : q->kmin;
    if (quest && a)
        q->kmin = a;
    float *b = quest ? realloc(q->kmax, cap * hd * sizeof *b) : q->kmax;
    if (quest && b)
        q->kmax = b;
    float *c = quest ? q->kmean : realloc(q->kmean, cap * hd * sizeof *c);
    if (!quest && c)
        q->kmean = c;
    uint32_t *d = realloc(q->slot_of, cap * sizeof *d);
    if (d)
        q->slot_of = d;
    float *e = realloc(q->score, (cap + 1) * sizeof *e);
    if (e)
        q->score = e;
    if ((quest && (!a || !b)) || (!quest && !c) || !d || !e)
        return KS_ENOMEM;
    for (uint32_t i = q->cap; i < cap; i++)
        q->slot_of[i] = i;
    q->cap = cap;
    return KS_OK;
}

// Summarises block b (full) from its synthetic keys.
static int summarise(struct ks_attention_seq *q, uint32_t b)
{
    uint32_t bs = q->p.block_size, t0 = b * bs;
    for (uint32_t h = 0; h < q->kv_heads; h++) {
        if (ks_synth_keys(q->s, q->req, q->prompt, q->layer, h, t0, t0 + bs, q->keys) != KS_OK)
            return KS_EINVAL;
        for (uint32_t t = 0; t < bs; t++)
            for (uint32_t d = 0; d < q->head_dim; d++)
                q->page[((size_t)t * q->kv_heads + h) * q->head_dim + d] =
                    ks_half_from_float(q->keys[(size_t)t * q->head_dim + d]);
    }
    uint32_t zero = 0;
    struct ks_block_summary_params sp = {
        .n = 1, .block_size = bs, .kv_heads = q->kv_heads, .head_dim = q->head_dim, .n_pages = 1, .n_slots = 1,
        .k = q->page, .page = &zero, .slot = &zero, .kmin = q->one_min, .kmax = q->one_max, .kmean = q->one_mean};
    if (ks_block_summary_ref(&sp) != KS_KERNEL_OK)
        return KS_EINVAL;
    size_t hd = (size_t)q->kv_heads * q->head_dim;
    if (q->p.score == KS_SCORE_QUEST) {
        memcpy(q->kmin + (size_t)b * hd, q->one_min, hd * sizeof(float));
        memcpy(q->kmax + (size_t)b * hd, q->one_max, hd * sizeof(float));
    } else {
        memcpy(q->kmean + (size_t)b * hd, q->one_mean, hd * sizeof(float));
    }
    return KS_OK;
}

int ks_attention_seq_select(struct ks_attention_seq *q, const struct ks_synth_step *st, uint32_t *blocks,
                            float *mass, uint32_t cap, uint32_t *n)
{
    const struct ks_attention_params *p = &q->p;
    *n = 0;
    if (st->req != q->req || st->prompt != q->prompt || cap < p->n_sink + p->n_window + 1 + p->top_k)
        return KS_EINVAL;
    uint32_t ctx = q->prompt + st->step + 1, bs = p->block_size; // the step's own token included
    uint32_t nb = (ctx + bs - 1) / bs, full = ctx / bs;
    if (nb == 0)
        return KS_OK;
    int st_grow = grow(q, nb);
    if (st_grow != KS_OK)
        return st_grow;
    for (; q->n_sum < full; q->n_sum++) {
        int rc = summarise(q, q->n_sum);
        if (rc != KS_OK)
            return rc;
    }
    for (uint32_t h = 0; h < q->q_heads; h++)
        if (ks_synth_query(q->s, st, q->layer, h, q->q + (size_t)h * q->head_dim) != KS_OK)
            return KS_EINVAL;
    uint32_t n_sel = 0;
    struct ks_block_select_params sp = {
        .n_seqs = 1, .q_heads = q->q_heads, .kv_heads = q->kv_heads, .head_dim = q->head_dim, .block_size = bs,
        .max_blocks = nb, .n_slots = q->n_sum ? q->n_sum : 1, .n_sink = p->n_sink, .n_window = p->n_window,
        .top_k = p->top_k, .max_sel = cap, .score_kind = p->score, .reduce = KS_REDUCE_MAX, .mode = KS_SELECT_SEQ,
        .q = q->q, .seq_len = &ctx, .sum_table = q->slot_of, .kmin = q->kmin, .kmax = q->kmax, .kmean = q->kmean,
        .sel = blocks, .n_sel = &n_sel, .score = q->score};
    size_t ws = ks_block_select_workspace(&sp);
    if (ws > q->ws_bytes) {
        void *w = realloc(q->ws, ws);
        if (!w)
            return KS_ENOMEM;
        q->ws = w;
        q->ws_bytes = ws;
    }
    sp.workspace = q->ws;
    sp.workspace_bytes = q->ws_bytes;
    if (ks_block_select_ref(&sp) != KS_KERNEL_OK)
        return KS_EINVAL;
    // block-level softmax of the scores, weighted by tokens per block
    double scale = 1.0 / sqrt((double)q->head_dim), best = -INFINITY, sum = 0;
    for (uint32_t i = 0; i < n_sel; i++)
        if (blocks[i] < full && q->score[blocks[i]] > best)
            best = q->score[blocks[i]];
    if (!isfinite(best))
        best = 0;
    for (uint32_t i = 0; i < n_sel; i++) {
        uint32_t b = blocks[i];
        double s = b < full ? q->score[b] : best;
        uint32_t tokens = b < full ? bs : ctx - b * bs;
        double w = tokens * exp(scale * (s - best));
        mass[i] = (float)w;
        sum += w;
    }
    for (uint32_t i = 0; i < n_sel; i++)
        mass[i] = sum > 0 ? (float)(mass[i] / sum) : 0.0f;
    *n = n_sel;
    return KS_OK;
}
