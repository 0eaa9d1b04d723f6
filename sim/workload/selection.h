// selection.h - a run's sparse-attention policy: which blocks each request
// reads, decode step by decode step and layer by layer.
//
// The rules over block positions (dense, window, stride, random; positional.h)
// give every layer the same blocks. The others differ by layer:
//   topk      : synthetic attention (synth.h, preset sparse.preset) through
//               the reference scoring kernel (attention.h): sink + window +
//               top-k of budget_tokens / block_size blocks;
//   retrieval : the same scores, top-k alone (no sinks, no window);
//   mixed     : per request, switches between the window rule and topk with
//               probability switch_prob per step (the noisy strategy
//               switching that starves a heat map);
//   trace     : replays a trace (trace.h): request i of the run takes the
//               trace's request i mod n, its step s the trace's step s mod
//               the request's steps, layer l the trace's layer l mod its
//               layers; blocks past the run's context are dropped;
//   model     : an access model fitted to a trace (accessmodel.h, sparse.fit):
//               per request and layer a stream drawing each step's selection
//               at O(selected blocks), the cluster-scale choice;
//   dsa       : DSA-style sparse attention (dsa.h): per layer, the top-k of
//               ceil(budget_tokens / block_size) blocks by a static
//               importance plus AR(1) noise whose per-layer scale is fitted
//               to published overlaps (calib/locality/dsa.lua); O(context)
//               per selection, every layer its own.
// A trace that trace or model reads must have cache.block_size as its block
// size (its block indices mean blocks of that size).
// Synthetic attention is computed for sparse.attention_layers layers, evenly
// spread; every other layer reads the selection of the nearest computed one
// below it (memory and time per request grow with the computed layers).
// Masses: equal for the position rules; estimated from scores (attention.h)
// for topk/retrieval; as recorded for trace; as generated for model and dsa.
#ifndef KS_SELECTION_H
#define KS_SELECTION_H

#include <stddef.h>
#include <stdint.h>

#include "rng.h"
#include "scenario.h"

struct ks_selection;     // per run: shared, read-only after ks_selection_new
struct ks_synth_params;
struct ks_selection_req; // per request

// The synthetic attention's parameters for s: preset `preset` (an index of
// sparse.preset's choices: 0 stable, 1 drifting, 2 noisy), then the
// scenario's sparse.topic_switch and sparse.retrieval_prob where given, its
// seed and its model's shape. ks_synth_params_check may still refuse them.
void ks_selection_synth_params(const struct ks_scenario *s, int preset, struct ks_synth_params *p);

// Prepares the scenario's policy: loads a trace or fits a model. NULL with
// "FILE: reason" in err.
struct ks_selection *ks_selection_new(const struct ks_scenario *s, char *err, size_t len);
void ks_selection_free(struct ks_selection *sp);

// 1 when the selection differs by layer (the caller must ask per layer).
int ks_selection_per_layer(const struct ks_selection *sp);

// 1 when a request's selections depend on its own state and the arguments
// alone (topk, retrieval, model, dsa: no rng, nothing that next_uses or
// kernel_time read back): different requests' selections may then be drawn
// on different threads at once, each request's in its own order, and give
// the same blocks. The policy itself is only read.
int ks_selection_ahead(const struct ks_selection *sp);

// A request's selection state: id is its run-wide request id, prompt its
// prompt tokens (synthetic attention generates that context). NULL when out
// of memory.
struct ks_selection_req *ks_selection_open(struct ks_selection *sp, uint64_t id, uint32_t prompt);
void ks_selection_close(struct ks_selection_req *r);

// The blocks request r reads at its decode step `step` (from 0, called in
// increasing order) in `layer`, out of nb blocks of context, into out
// (capacity nb: a block is selected at most once) with their masses, and
// their count into *k. KS_OK, or a status with the reason in err. rng
// drives the random rules.
int ks_selection_get(struct ks_selection_req *r, uint32_t step, uint32_t layer, uint32_t nb, struct ks_rng *rng,
                     uint32_t *out, float *mass, uint32_t *k, char *err, size_t len);

// The size of request r's selection in `layer` over nb blocks of context,
// `ahead` selections after the next one it draws there (a caller that
// defers draws: ks_cache_access_deferred), where the policy knows it before
// drawing and the last block (nb - 1) is among the blocks: 1 with the
// count in *k. 0 otherwise: only the access model knows its sizes, and a
// layer of it without a window may leave the last block out.
int ks_selection_count(const struct ks_selection_req *r, uint32_t layer, uint32_t ahead, uint32_t nb, uint32_t *k);

// Prepares request r's next selection in `layer` for a caller that draws
// many in turn: fetches into the CPU's cache what it reads first, in stages
// 0, 1, 2 made one draw apart (ks_accessmodel_stream_warm), so that its
// memory misses overlap the draws in between. Only the access model's
// streams need it; for other policies, and before a stream's first draw,
// it does nothing. It changes no result.
void ks_selection_warm(const struct ks_selection_req *r, uint32_t layer, int stage);

// Prepares request r's counts (ks_selection_count) for a caller that counts
// many requests' in turn: fetches its state into the CPU's cache, stage 0
// the request's record, stage 1 (after every request's stage 0) its list of
// streams. It changes no result.
void ks_selection_warm_counts(const struct ks_selection_req *r, int stage);

// Trace replay only (the future is known): for the selection the last
// ks_selection_get returned, the decode steps until each block is selected
// again in that layer (the trace's steps wrap around), into dist[0 .. count).
// Returns 0, or -1 when the policy is not trace.
int ks_selection_next_uses(const struct ks_selection_req *r, uint32_t *dist);

// Trace replay only: the seconds of the attention kernel the trace recorded
// for the record the last ks_selection_get read (one sequence, that layer,
// as recorded: blocks dropped past the run's context do not shorten it).
// NAN when the policy is not trace, before the first selection, or when the
// record's kernel_time is negative (not measured).
double ks_selection_kernel_time(const struct ks_selection_req *r);

// Trace replay only: the first decode step at which `block` is selected in
// `layer`, KS_SELECTION_NEVER when it never is. -1 when the policy is not trace.
#define KS_SELECTION_NEVER UINT32_MAX
int ks_selection_first_use(const struct ks_selection_req *r, uint32_t layer, uint32_t block, uint32_t *step);

#endif
