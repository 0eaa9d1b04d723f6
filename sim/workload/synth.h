// synth.h - synthetic attention: per-request keys and queries with the structure real models show.
//
// Where no model is at hand, this module stands in for one: it produces key
// vectors for any token of any (request, layer, KV head) and query vectors for
// any (request, decode step, layer, query head), so that scoring blocks by
// q . k shows attention sinks, recency, topic clusters the query drifts
// between, occasional long-range retrieval, heavy hitters, and layer-to-layer
// and head-to-head variation.
//
// Invariants:
// - Everything is a pure function of (params, request id, prompt length,
//   layer, head, token index or step): no context is stored. Keys come from a
//   counter-based hash, so the keys of [t0, t1) are bit-identical to the same
//   tokens taken from any larger range, in any call order (rotary angles are
//   computed exactly at 32-token anchors, never accumulated along a range).
// - The logit of a query against a key is q . k / sqrt(head_dim). Channels:
//   [0, 2 rope_pairs) carry position as rotary pairs; then content (topic and
//   phrase directions plus unit-variance noise); the last two are the
//   heavy-hitter and the sink channel ("massive activation" channels, where
//   one key value in a few carries a large logit).
// - Token t < prompt belongs to the prompt; token prompt + s is written by
//   decode step s and its key follows the query's topic at step s. The query
//   of step s sits at position prompt + s and sees tokens [0, prompt + s).
//
// The model. Key of token t (content part: key_signal * unit directions +
// noise n_t with per-channel variance 1):
//   k_t = rope(t) / sqrt(m) + key_signal (u[topic(t)] + w[phrase(t)]) + n_t
//         + [t heavy] e_heavy + [t < sink_tokens] e_sink
// (a sink has no rotary part, so it draws its logit at any distance).
// Query of step s at position p = prompt + s, in logit units L (each L is
// the configured logit times the layer profile and the head's weight):
//   q / sqrt(d) = L_rec rope(p) / sqrt(m) + L_sink e_sink + L_heavy e_heavy
//                 + (L_topic u[topic(s)] + L_ret [episode] w[phrase(target)]) / key_signal
//                 + L_drift d(s)
// so that
//   logit(s, t) = L_sink [sink] + L_heavy [heavy] + L_rec mean_i cos(w_i (p - t))
//               + L_topic [same topic] + L_ret [target phrase] + L_drift d(s) . n_t
//               + small cross terms (random directions are ~1/sqrt(channels) apart).
// topic(s) is a Markov chain: at each step it changes with probability
// topic_switch to a uniformly drawn other topic. A retrieval episode starts
// with probability retrieval_prob, lasts retrieval_steps and targets a
// uniform token at least retrieval_min_distance back. d(s) is a unit vector
// interpolated between random anchors drift_steps apart: it sets how fast the
// non-topic part of the top-k turns over. Layers: a term's logit is scaled by
// (1 - early_flatten e(l)) (recency: 1 + early_local e(l)) with
// e(l) = exp(-l / early_layers); the drift by 1 +- layer_noise per layer;
// every (layer, query head) multiplies each term by exp(head_spread z).
//
// Costs: keys cost O(head_dim) hash mixes per token, plus two unit vectors
// per topic span or phrase entered and 16 sin/cos per 32-token anchor;
// queries cost four unit vectors. ks_synth_step_at walks back to the last
// topic draw: O(min(step, 1 / topic_switch)) hashes expected.
#ifndef KS_SYNTH_H
#define KS_SYNTH_H

#include <stddef.h>
#include <stdint.h>

#define KS_SYNTH_NONE UINT32_MAX
#define KS_SYNTH_MAX_DIM 1024 // largest head_dim (workspace lives on the stack)

// Every field says what it models and the observation behind it.
struct ks_synth_params {
    uint64_t seed; // the whole model is a function of it

    // Shape (a Llama-3-8B-like default: 32 layers, 8 KV heads, GQA group 4).
    uint32_t n_layers;   // layers
    uint32_t n_kv_heads; // KV heads per layer
    uint32_t group;      // query heads per KV head (GQA); query heads = n_kv_heads * group
    uint32_t head_dim;   // floats per key / query vector; in [2 * rope_pairs + 4, KS_SYNTH_MAX_DIM]

    // Attention sinks (StreamingLLM, Xiao et al. 2023): the first few tokens
    // draw a large share of attention whatever the query.
    // The logit is per token: block-mean scoring sees sink_tokens / block of
    // it (8/32 by default, +3.5), enough to keep the sink block among the
    // top blocks. At 32K tokens the sinks then take most softmax mass, as
    // they do in real middle layers.
    uint32_t sink_tokens; // tokens at the start of the context that are sinks
    float sink_logit;     // logit (above a plain token) of each sink token

    // Recency (local attention; RoPE's decay with distance): nearby tokens
    // score higher, through rotary channel pairs whose frequencies span
    // recency_tokens, so far tokens see a small oscillating residue as in RoPE.
    uint32_t rope_pairs;     // channel pairs carrying position
    uint32_t recency_tokens; // tokens: distance at which the positional term has decayed to ~0
    float recency_logit;     // logit of the nearest token from the positional term

    // Topics: spans of the prompt share a topic direction; the query follows
    // a Markov chain over topics, so whole clusters of blocks rise and fall
    // together (Quest's query-aware sparsity, Tang et al. 2024: which blocks
    // matter depends on the current query).
    uint32_t n_topics;     // distinct topics (>= 2 when topic_switch > 0)
    uint32_t topic_tokens; // tokens per prompt span that shares one topic
    float topic_logit;     // logit of a token on the query's current topic
    double topic_switch;   // probability per decode step that the query's topic changes;
                           // <= (n_topics - 1) / n_topics

    // Long-range retrieval: now and then the query looks up one far phrase
    // (needle-style lookups; retrieval heads, Wu et al. 2024).
    double retrieval_prob;           // probability per step that a retrieval episode starts
    uint32_t retrieval_steps;        // steps an episode lasts
    uint32_t retrieval_min_distance; // tokens: targets lie at least this far behind the query
    uint32_t phrase_tokens;          // tokens sharing one phrase direction (the unit a retrieval finds)
    float retrieval_logit;           // logit of the target phrase's tokens during an episode

    // Heavy hitters (H2O, Zhang et al. 2023): a few tokens score high at every
    // step, whatever the topic.
    double heavy_frac; // fraction of tokens that are heavy hitters
    float heavy_logit; // logit of a heavy hitter

    // Temporal locality: consecutive steps' top-k sets overlap strongly, how
    // strongly depends on the layer (InfiniGen, Lee et al. 2024; ShadowKV,
    // Sun et al. 2024). The query's content part drifts between random anchors
    // drift_steps apart; 1 means a fresh direction every step.
    float drift_logit;    // std of the per-token logit the drifting part adds
    uint32_t drift_steps; // steps between independent drift anchors
    float key_signal;     // norm of each structured direction in a key, against noise of per-channel std 1

    // Layers and heads: early layers attend more locally and more uniformly
    // (lower sparsity in the first layers, reported by H2O and InfiniGen);
    // each head mixes the terms with its own weights.
    float early_layers;  // layers: e-folding depth of the early-layer effect (0: none)
    float early_flatten; // in [0, 1): how much content logits shrink at layer 0
    float early_local;   // how much the recency logit grows at layer 0 (0.5 = x1.5)
    float layer_noise;   // in [0, 1): per-layer drift logit varies by up to this fraction
    float head_spread;   // log-normal sigma of each head's weight on each term
};

// Per-request state of one decode step, shared by all layers and heads:
// the query's topic and the retrieval target. Caller storage.
struct ks_synth_step {
    uint64_t req;     // request id
    uint32_t prompt;  // prompt tokens
    uint32_t step;    // decode step; the query's position is prompt + step
    uint32_t topic;   // query's topic at this step
    uint32_t target;  // retrieval target token, or KS_SYNTH_NONE
    uint32_t episode; // step at which the current retrieval episode began, or KS_SYNTH_NONE
};

struct ks_synth;

// The default: a real-model-like middle ground (the "drifting" preset).
void ks_synth_params_default(struct ks_synth_params *p);

// Fills p with a named preset, from stable to noisy: "stable" (rare topic
// switches, slow drift), "drifting" (the default), "noisy" (frequent topic
// switches and retrieval jumps: the strategy-switching case where history
// predicts little). Shape and seed are the default's. KS_EINVAL if unknown.
int ks_synth_preset(const char *name, struct ks_synth_params *p);

// Checks p; on error returns KS_EINVAL and writes why into err (may be NULL).
int ks_synth_params_check(const struct ks_synth_params *p, char *err, size_t errlen);

// A generator for p (copied; p is not kept). NULL with a message in err when
// p is invalid or memory runs out. Free with ks_synth_free (NULL is a no-op).
struct ks_synth *ks_synth_new(const struct ks_synth_params *p, char *err, size_t errlen);
void ks_synth_free(struct ks_synth *s);

const struct ks_synth_params *ks_synth_params_of(const struct ks_synth *s);

// The state of decode step `step` of request (req, prompt), from scratch.
// Cost: O(min(step, 1 / topic_switch)) hashes expected for the topic chain
// plus O(retrieval_steps); use ks_synth_step_next to walk steps in order.
void ks_synth_step_at(const struct ks_synth *s, uint64_t req, uint32_t prompt, uint32_t step,
                      struct ks_synth_step *st);

// Advances st by one step in O(1); the result equals ks_synth_step_at's.
void ks_synth_step_next(const struct ks_synth *s, struct ks_synth_step *st);

// Topic of token t of request (req, prompt): its prompt span's topic, or the
// query's topic at step t - prompt for a generated token.
uint32_t ks_synth_token_topic(const struct ks_synth *s, uint64_t req, uint32_t prompt, uint32_t t);

// Writes the keys of tokens [t0, t1) of (req, layer, kv_head) into
// out[t1 - t0][head_dim]. Tokens at or past `prompt` are generated ones (their
// topic follows the chain: O(min(t0 - prompt, 1 / topic_switch)) extra
// hashes once per call). KS_EINVAL for a layer or head out of range or t0 > t1.
int ks_synth_keys(const struct ks_synth *s, uint64_t req, uint32_t prompt, uint32_t layer, uint32_t kv_head,
                  uint32_t t0, uint32_t t1, float *out);

// Writes the query of step st, layer, q_head (KV head q_head / group) into
// out[head_dim]. KS_EINVAL for a layer or head out of range.
int ks_synth_query(const struct ks_synth *s, const struct ks_synth_step *st, uint32_t layer, uint32_t q_head,
                   float *out);

#endif
