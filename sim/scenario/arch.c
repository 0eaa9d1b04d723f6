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

// One GPU's share (arch.h, parallelism): attention's weights split over its
// rank's attn_tp GPUs, the routed experts over moe_gpus, the rest over
// dense_tp; the KV of its rank's requests; the bytes its collectives send per
// layer and token. `routed`: the routed experts' parameters.
static void per_gpu(struct ks_scenario_model *m, const struct ks_scenario_parallel *par, double attn_params,
                    double routed, uint32_t gpus_per_node)
{
    struct ks_arch *a = &m->arch;
    a->tp = par && par->tp ? par->tp : 1;
    a->dp = par && par->dp_attention ? par->dp_attention : 1;
    a->attn_tp = a->tp / a->dp ? a->tp / a->dp : 1;
    a->dense_tp = par && par->dense_tp ? par->dense_tp : a->tp;
    uint32_t ep = par && par->ep ? par->ep : 1;
    a->moe_gpus = ep > a->tp ? ep : a->tp;
    a->moe_ranks = a->dp * (a->moe_gpus / a->tp);
    double wb = (double)ks_dtype_bytes(m->weight_dtype);
    if (m->weights_given || a->tp == 1) {
        a->gpu_weight_bytes = a->weight_bytes / a->tp;
        a->gpu_fixed_read_bytes = a->fixed_read_bytes / a->tp;
    } else {
        // attention (and the indexer, the norms) on the rank's attn_tp GPUs,
        // the routed experts over moe_gpus, the rest over dense_tp
        double attn = attn_params * wb, experts = routed * wb, rest = a->weight_bytes - attn;
        a->gpu_weight_bytes = a->moe_gpus == a->dense_tp
                                  ? attn / a->attn_tp + rest / a->dense_tp
                                  : attn / a->attn_tp + experts / a->moe_gpus + (rest - experts) / a->dense_tp;
        a->gpu_fixed_read_bytes = attn / a->attn_tp + (a->fixed_read_bytes - attn) / a->dense_tp;
    }
        if (m->attention == KS_ATTENTION_GQA && !m->kv_token_bytes && m->kv_heads) {
        uint32_t heads = m->kv_heads / a->attn_tp ? m->kv_heads / a->attn_tp : 1; // past kv_heads: replicated
        a->gpu_kv_token_bytes = a->kv_token_bytes / m->kv_heads * heads;
    } else {
        a->gpu_kv_token_bytes = a->kv_token_bytes; // the latent (or a given layout) is not split by heads
    }
    // ring collectives of one token's activations (hidden values): an
    // all-reduce over n GPUs sends 2 (n - 1) / n of them from each GPU; an
    // FFN's all-gather and reduce-scatter over its t GPUs carry the tokens of
    // the t / attn_tp ranks on them; an all-to-all sends each token to its
    // `active` experts, (ep - 1) / ep of them elsewhere, and back, the token
    // split over its rank's GPUs; of those, the experts on other nodes take
    // (ep - g) / (ep - 1), g of the group's GPUs being on one node
    double act = (double)m->hidden * (double)ks_dtype_bytes(par ? par->comm_dtype : KS_DTYPE_BF16);
    double n = a->attn_tp, t = a->tp, d = a->dense_tp;
    a->comm_attn_bytes = n > 1 ? 2.0 * (n - 1) / n * act : 0;
    a->comm_ffn_bytes = d > 1 ? 2.0 * (d - 1) / d * (d / n) * act : 0;
    a->comm_moe_bytes = t > 1 ? 2.0 * (t - 1) / t * a->dp * act : 0; // experts split like any weight
    a->moe_remote_share = 0;
    if (ep > 1) { // the dispatch may carry another type than the combine (FP8 out, BF16 back)
        if (par->dispatch_dtype) {
            double out = (double)m->hidden * (double)ks_dtype_bytes((enum ks_dtype)(par->dispatch_dtype - 1));
            a->comm_moe_bytes = (double)m->moe.active * (ep - 1) / ep * (out + act) / a->attn_tp;
        } else {
            a->comm_moe_bytes = 2.0 * m->moe.active * (ep - 1) / ep * act / a->attn_tp;
        }
        uint32_t g = gpus_per_node && gpus_per_node < ep ? gpus_per_node : ep;
        a->moe_remote_share = (double)(ep - g) / (ep - 1);
    }
}

void ks_arch_derive(struct ks_scenario_model *m, const struct ks_scenario_parallel *par, uint32_t gpus_per_node)
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
        per_gpu(m, par, 0, 0, gpus_per_node);
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
    per_gpu(m, par, m->layers * per_layer, routed, gpus_per_node);
}

double ks_arch_experts_touched(const struct ks_scenario_model *m, double tokens)
{
    if (!m->moe.experts || m->weights_given || tokens <= 0)
        return 0;
    double e = m->moe.experts;
    return e * (1.0 - pow(1.0 - m->moe.active / e, tokens));
}

double ks_arch_gpu_read_bytes(const struct ks_scenario_model *m, double group_tokens)
{
    const struct ks_arch *a = &m->arch;
    return a->gpu_fixed_read_bytes + a->moe_layers * ks_arch_experts_touched(m, group_tokens) *
                                         a->expert_bytes / a->moe_gpus;
}

// Whether layer (0-based) is one of routed experts.
static int moe_layer(const struct ks_scenario_model *m, uint32_t layer)
{
    return m->moe.experts && !m->weights_given && layer >= m->moe.first_dense;
}

double ks_arch_comm_bytes(const struct ks_scenario_model *m, uint32_t layer, double tokens)
{
    const struct ks_arch *a = &m->arch;
    return tokens * (a->comm_attn_bytes + (moe_layer(m, layer) ? a->comm_moe_bytes : a->comm_ffn_bytes));
}

double ks_arch_comm_remote_bytes(const struct ks_scenario_model *m, uint32_t layer, double tokens)
{
    return moe_layer(m, layer) ? tokens * m->arch.comm_moe_bytes * m->arch.moe_remote_share : 0;
}
