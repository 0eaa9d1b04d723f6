// cost.h - the modelled time of a step's work: prefill compute, a layer's
// attention from a measured kernel-time table, a layer's weights and KV
// over HBM.
//
// Pure functions of the scenario. The step driver (step.h) applies them to
// every selection so that a backend that models time (the simulator) charges
// them; a backend that does the work for real (the runtime) takes its own
// time instead.
#ifndef KS_COST_H
#define KS_COST_H

#include <stdint.h>

#include "scenario.h"

// Seconds to prefill n prompt tokens after c tokens whose KV exists: the
// weights' flops, token_flops * n (2 x the parameters a token uses,
// arch.h), and causal attention's: the indexer's scores over every earlier
// token, index_pair_flops * layers * (n * c + n * (n + 1) / 2), and QK and
// PV, pair_flops * layers * the pairs read: every earlier token (causal
// pairs) without an indexer; with one (a DSA model, whose prefill is as
// sparse as its decode), at most sparse.budget_tokens per query token
// (ks_cost_prefill_pairs). At the rank's rates (ks_cost_compute; the
// indexer's scores apart where ks_cost_index_apart).
double ks_cost_prefill(const struct ks_scenario *s, double n, double c);

// Attention pairs of query tokens c + 1 .. c + n when each reads every
// earlier token but at most k of them (k = 0: no bound): sum over i of
// min(c + i, k); n * c + n * (n + 1) / 2 without a bound.
double ks_cost_prefill_pairs(double n, double c, double k);

// Seconds of matrix work on a rank's attn_tp GPUs: weight_flops at flops_fp8
// when the weights are FP8 and the profile gives that rate, else at flops;
// attn_flops at flops; index_flops (a sparse indexer's scores, counted apart
// only where ks_cost_index_apart, else within attn_flops) at flops_fp8; each
// times prefill_efficiency (the profile's figure for matrix work, the same
// for prefill and decode).
double ks_cost_compute(const struct ks_scenario *s, double weight_flops, double attn_flops, double index_flops);

// Whether a sparse indexer's scores run at another rate than attention's:
// its keys are FP8 (model.indexer.dtype; DSA's lightning indexer computes its
// logits in FP8, DeepSeek-V3.2-Exp's paper) and the profile gives an FP8 rate
// that differs. Then they are counted apart (index_flops); otherwise within
// the attention's flops, as before FP8 indexers had their rate.
int ks_cost_index_apart(const struct ks_scenario *s);

// Seconds of a fused iteration (scheduler.kind "fused": decode tokens and
// prefill chunks together) that memory or compute sets, the slower of the
// two: max(bytes / HBM bandwidth + attn, compute). bytes: what one GPU reads
// and writes (weights for all the iteration's tokens, KV and index keys
// read, the prompts' KV written); attn: measured kernel seconds; compute:
// seconds of its matrix work (ks_cost_compute, ks_cost_prefill). The
// iteration takes that plus the engine's fixed time of a pass
// (ks_cost_pass_overhead).
double ks_cost_roofline(const struct ks_scenario *s, double bytes, double attn, double compute);

// Seconds a forward pass takes beyond its bytes and its matrix work:
// scheduler.layer_overhead x the model's layers. What a real engine's step
// costs at batch 1 over the roofline: kernel launches and the gaps between
// kernels, synchronisation, the latency of small collectives. Every pass
// pays it: a fused iteration, a serial scheduler's decode step and prefill
// chunk, a prefill pool's prompt. 0 by default (the roofline alone).
double ks_cost_pass_overhead(const struct ks_scenario *s);

// Seconds of one layer of the measured attention kernel for one sequence
// selecting k blocks in decode step `step` (0-based): a replayed run's speed
// of that step when there is one, else the table's time at k (linear between
// points, the end segments extended, never below 0), shared by the table's
// batch. kt->n > 0.
double ks_cost_kernel(const struct ks_kernel_time *kt, uint32_t step, uint32_t k);

// Seconds of one layer of a decode step that reads `weights` bytes of
// weights (ks_arch_gpu_read_bytes for its tokens) and kv_hbm bytes of KV and
// index keys timed at HBM bandwidth, and takes attn seconds of measured
// kernel time, all layers together: (weights + kv_hbm) / HBM bandwidth +
// attn, over the layers, plus scheduler.layer_overhead.
double ks_cost_layer(const struct ks_scenario *s, double weights, double kv_hbm, double attn);

#endif
