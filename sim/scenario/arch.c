// arch.c - a model's architecture in figures (see arch.h).
#include "arch.h"

#include <math.h>

// Parameters of one layer's attention.
static double attention_params(const struct ks_scenario_model *m)
{
    double h = m->hidden, qh = m->q_heads;
    if (m->attention == KS_ATTENTION_GQA)
        return 2.0 * h * qh * m->head_dim + 2.0 * h * m->kv_heads * m->head_dim;
    double qk = (double)m->qk_nope_dim + m->qk_rope_dim;
    double q = m->q_lora_rank ? h * m->q_lora_rank + (double)m->q_lora_rank * qh * qk : h * qh * qk;
    double latent = h * ((double)m->kv_lora_rank + m->qk_rope_dim);
    double expand = (double)m->kv_lora_rank * qh * ((double)m->qk_nope_dim + m->v_head_dim);
    return q + latent + expand + qh * m->v_head_dim * h;
}

// Parameters of one layer's indexer (0 without one).
static double indexer_params(const struct ks_scenario_model *m)
{
    if (!m->indexer.heads)
        return 0;
    double h = m->hidden, from = m->attention == KS_ATTENTION_MLA && m->q_lora_rank ? m->q_lora_rank : h;
    return from * m->indexer.heads * m->indexer.dim + h * m->indexer.dim + h * m->indexer.heads;
}

void ks_arch_derive(struct ks_scenario_model *m)
{
    struct ks_arch *a = &m->arch;
    *a = (struct ks_arch){0};
    double wb = (double)ks_dtype_bytes(m->weight_dtype), kvb = (double)ks_dtype_bytes(m->dtype);
    a->kv_token_bytes = m->kv_token_bytes ? m->kv_token_bytes
                        : m->attention == KS_ATTENTION_GQA
                            ? (uint64_t)(2.0 * m->kv_heads * m->head_dim * kvb)
                            : (uint64_t)(((double)m->kv_lora_rank + m->qk_rope_dim) * kvb);
    if (m->indexer.heads)
        a->index_token_bytes = m->indexer.token_bytes
                                   ? m->indexer.token_bytes
                                   : (uint64_t)m->indexer.dim * ks_dtype_bytes(m->indexer.dtype);
    a->pair_flops = m->attention == KS_ATTENTION_GQA
                        ? 4.0 * m->q_heads * m->head_dim
                        : 2.0 * m->q_heads * ((double)m->qk_nope_dim + m->qk_rope_dim + m->v_head_dim);
    a->decode_pair_flops = m->attention == KS_ATTENTION_GQA
                               ? a->pair_flops
                               : 2.0 * m->q_heads * (2.0 * m->kv_lora_rank + m->qk_rope_dim);
    a->index_pair_flops = 2.0 * m->indexer.heads * m->indexer.dim;
    if (m->weights_given) {
        a->weight_bytes = a->fixed_read_bytes = (double)m->weight_bytes;
        a->params = a->active_params = a->weight_bytes / wb;
        a->token_flops = 2.0 * a->params;
        return;
    }
    double h = m->hidden, embed = (double)m->vocab * h, head = m->tied_embeddings ? 0 : embed;
    double expert = 3.0 * h * m->moe.intermediate;
    a->moe_layers = m->moe.experts ? m->layers - m->moe.first_dense : 0;
    double dense_layers = (double)m->layers - a->moe_layers;
    double per_layer = attention_params(m) + indexer_params(m) + 2.0 * h;
    double routed = (double)a->moe_layers * m->moe.experts * expert;
    a->params = embed + head + h + m->layers * per_layer + dense_layers * 3.0 * h * m->intermediate +
                a->moe_layers * ((double)m->moe.shared * expert + h * m->moe.experts) + routed;
    a->active_params = a->params - (double)a->moe_layers * ((double)m->moe.experts - m->moe.active) * expert;
    a->weight_bytes = a->params * wb;
    a->fixed_read_bytes = (a->params - routed - (m->tied_embeddings ? 0 : embed)) * wb;
    a->expert_bytes = expert * wb;
    a->token_flops = 2.0 * (a->active_params - embed - head);
    a->head_flops = 2.0 * embed; // the head's matrix, tied or not, is vocab x hidden
}

double ks_arch_experts_touched(const struct ks_scenario_model *m, double tokens)
{
    if (!m->moe.experts || m->weights_given || tokens <= 0)
        return 0;
    double e = m->moe.experts;
    return e * (1.0 - pow(1.0 - m->moe.active / e, tokens));
}

double ks_arch_read_bytes(const struct ks_scenario_model *m, double tokens)
{
    const struct ks_arch *a = &m->arch;
    return a->fixed_read_bytes + a->moe_layers * ks_arch_experts_touched(m, tokens) * a->expert_bytes;
}
