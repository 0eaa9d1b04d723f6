// arch.h - a model's architecture in figures: its parameters, the bytes of
// its weights, of one token's KV and index keys, what a decode iteration
// reads and what a prompt token costs in flops.
//
// Counted from the fields a public config gives (README "Scenarios", model):
// embedding table vocab x hidden, and an output head of the same size unless
// tied; per layer two norms of hidden, attention, an optional indexer and the
// FFN; one final norm.
// - GQA attention: Q and O of hidden x q_heads x head_dim, K and V of hidden
//   x kv_heads x head_dim. One token's KV in one layer: 2 x kv_heads x
//   head_dim values.
// - MLA attention: the query through a rank q_lora_rank (hidden x rank, rank
//   x q_heads x (qk_nope_dim + qk_rope_dim); without a rank, hidden x q_heads
//   x (qk_nope_dim + qk_rope_dim)), the latent (hidden x (kv_lora_rank +
//   qk_rope_dim)), its expansion (kv_lora_rank x q_heads x (qk_nope_dim +
//   v_head_dim)) and O (q_heads x v_head_dim x hidden). One token's cache in
//   one layer: kv_lora_rank + qk_rope_dim values, no K/V doubling.
// - Indexer (DeepSeek's lightning indexer): queries from the query's rank (or
//   hidden) to heads x dim, one key of dim per token (hidden x dim), head
//   weights hidden x heads. Its keys: dim values per token and layer.
// - FFN: gated, 3 x hidden x intermediate. An MoE layer holds (experts +
//   shared) such FFNs of moe.intermediate and a router of hidden x experts;
//   the first moe.first_dense layers are dense.
// Small norms inside MLA and the indexer (under 0.001% of the weights) and
// multi-token-prediction layers are not counted. Every weight is counted in
// model.weight_dtype (FP8 checkpoints keep a few tensors in BF16 and add
// block scales: under 1% of their bytes).
//
// Values in bytes: model.dtype for the KV cache, indexer.dtype for the index
// keys, unless the scenario gives the bytes of one token in one layer
// (model.kv_token_bytes, indexer.token_bytes) for a kernel's packed layout.
// Parallelism (struct ks_scenario_parallel): the attention weights (and the
// indexer's, the norms) split over a rank's attn_tp = tp / dp_attention
// GPUs; the routed experts over the replica's tp GPUs, or with ep > tp whole
// experts over the ep GPUs of an expert group of ep / tp replicas (whole
// nodes); every other weight (dense FFNs, shared experts, embedding, head)
// over dense_tp GPUs (tp unless parallel.dense_tp: 1 replicates them); a
// rank's KV over its GPUs by KV heads (GQA; a head is replicated past
// kv_heads GPUs), whole on each GPU for MLA's latent, which has no heads. The
// collectives: attention's all-reduce over attn_tp after each layer's
// attention, a dense FFN's all-gather and reduce-scatter over dense_tp (ring:
// 2 (n - 1) / n of the tokens' activations from each GPU, the tokens of the
// ranks on those GPUs together), an MoE layer's the same over tp, or with ep
// > 1 an all-to-all dispatch and combine of each token to its `active`
// experts, of which the share on other nodes crosses the network. Small
// collectives' latency is the NVLink's (platform figures).
//
// When the scenario gives model.weight_bytes, the weights are those bytes,
// parameters = bytes / weight dtype, and each iteration reads them all (the
// model before architectures existed; refused together with experts).
#ifndef KS_ARCH_H
#define KS_ARCH_H

#include "scenario.h"

// Fills m->arch from m's fields (m->weights_given, kv_token_bytes and
// indexer.token_bytes included) and, for one GPU's share, from the
// parallelism (NULL: one GPU holds the replica) and the GPUs of a node
// (which of an expert group's all-to-all crosses the network; 0: none).
void ks_arch_derive(struct ks_scenario_model *m, const struct ks_scenario_parallel *par, uint32_t gpus_per_node);

// Expected distinct routed experts that `tokens` tokens use in one MoE layer
// when each picks moe.active of moe.experts uniformly: experts x (1 - (1 -
// active / experts)^tokens); active at 1 token, experts at many. 0 without
// experts.
double ks_arch_experts_touched(const struct ks_scenario_model *m, double tokens);

// What one GPU reads in an iteration in which its expert group's ranks put
// `group_tokens` tokens through the MoE layers: its share of the fixed
// weights, and of the experts those tokens use; with ep = tp a GPU holds
// experts / tp whole experts, with ep = 1 a slice of each, with ep > tp
// experts / ep whole ones: 1 / moe_gpus of the used experts' bytes.
double ks_arch_gpu_read_bytes(const struct ks_scenario_model *m, double group_tokens);

// Bytes one GPU sends in the collectives of layer `layer` (0-based) for its
// rank's `tokens` tokens: attention's all-reduce, then the FFN's collective
// (the MoE one in a layer of experts). 0 when one GPU holds the replica.
double ks_arch_comm_bytes(const struct ks_scenario_model *m, uint32_t layer, double tokens);

// Of those, the bytes bound for GPUs on other nodes (an MoE layer's
// all-to-all when its expert group spans nodes; 0 otherwise).
double ks_arch_comm_remote_bytes(const struct ks_scenario_model *m, uint32_t layer, double tokens);

#endif
