// dsa.h - an access model of DSA-style sparse attention (DeepSeek-V3.2's
// lightning indexer): per layer, the top-k units of importance plus
// temporally correlated noise.
//
// The mechanism. A request's context is a sequence of units (tokens when
// cache.block_size is 1, else blocks); unit i has a static log-importance
// g_i ~ Exp(1), shared by every layer. Each layer l adds noise sigma_l
// z_{l,i}(t), where z_{l,i} is an AR(1) process of unit variance and step
// correlation rho_l:
//   z_{l,i}(t) = rho_l z_{l,i}(t-1) + sqrt(1 - rho_l^2) w_{l,i}(t),
// and selects at step t the top_k units of g_i + sigma_l z_{l,i}(t) over the
// context (a unit written by decode joins it with its own g and a stationary
// z). The exp of a selected unit's score is its attention weight; masses are
// those weights normalised over the selection.
// - Every fresh standard normal w a layer draws at step t (the restart draw,
//   the AR innovation, the draw of a unit that joined) leans on the one the
//   layer below drew at the same step, with the model's cross-layer
//   correlation lambda (`cross`):
//     w_{l,i}(t) = lambda^d w_{l',i}(t) + sqrt(1 - lambda^2d) e_{l,i}(t),
//   e_{l,i}(t) ~ N(0, 1) its own hash draw, l' the last layer below l that
//   drew at step t for this request and d = l - l' (1 when every layer is
//   asked; the distance in model layers between the layers simulated when
//   detail.layers simulates a subset: lambda^d is then the correlation the
//   full model has between them). A unit l' did not draw, a step at which
//   no lower layer drew, and a layer asked below the last one that drew at
//   the step: a fresh draw (w = e). So adjacent layers select much the same
//   entries (IndexCache, arXiv 2603.12201, secondary: 70-100% top-k overlap
//   between adjacent layers), and at lambda = 0 every draw is e, bit for
//   bit. w keeps unit variance and stays independent across steps and
//   units (a blend of table normals, dsa.c, where e takes the table's
//   values), so each layer's law over steps, and with it the per-layer fit
//   of (sigma, rho) to consecutive-step overlaps, does not depend on lambda.
// - sigma_l sets the layer's consecutive-step overlap: 0 keeps the top-k of
//   g (overlap 1); large sigma makes the selection the noise's (overlap
//   towards what a top-k of correlated draws gives, k / N at rho = 0).
// - An entry that leaves the top-k comes back when its noise does: re-visits
//   come out of the noise's dynamics, nothing sets them directly.
// - Exp(1) log-importance (Pareto weights) is memoryless above the top-k
//   threshold ln(N / k): the units near the threshold look the same at any
//   context N >> k, so a layer's overlap barely moves with context length
//   (as ESS, arXiv 2512.10576 Fig. 2, reports for 16-128K).
//
// The per-layer (sigma, rho) come from a profile over `profile_layers`
// reference layers; model layer l of n_layers reads the reference layer at
// its relative depth, floor((l + 1/2) / n_layers * profile_layers). The
// shipped profile (ks_dsa_fitted, dsa_fitted.c) is fitted by calib/dsa_fit
// to the calibration inputs in calib/locality/dsa.lua (calib/locality.h);
// that fit brings rho to 0 (noise fresh each step: a larger rho needs a
// larger sigma for the same overlap, which reaches the importance's bulk and
// makes the overlap depend on the context length). Then lambda
// (ks_dsa_fitted_cross) is fitted, the profile fixed, to IndexCache's
// adjacent-layer overlap: |K_{l-1}(t) n K_l(t)| / |K_l(t)| averaged over
// steps and the adjacent pairs among layers 1 .. 60 at 32K. Layer 0 is left
// out: near random by ESS, it shares at most about 0.28 of its top-k with
// layer 1 whatever lambda is (0.14 at lambda = 0), so IndexCache's range
// cannot hold at that pair alongside ESS's layer 0.
//
// Invariants and determinism: g_i and e_{l,i}(t) are counter-based hashes of
// (seed, request, layer, step, unit), so a request's selections are a pure
// function of the sequence of (step, layer, context) asked of it (at lambda
// = 0, of the steps asked of each layer alone). The engine asks a step's
// layers in increasing order, steps in increasing order (sim/step: step.c,
// ahead.c), which is the order the law above is written for. A layer asked
// its steps one by one evolves z exactly; a gap of d steps draws z(t) from
// its exact conditional law (rho^d) in one go; a step below the last one
// restarts the layer with a stationary z. A layer asked its last step again
// draws nothing (its units that joined since draw, leaning on the layer
// below without becoming the layer the next one leans on).
//
// Costs per selection of k out of N units: O(N) hashes, table lookups and
// multiply-adds, then a quickselect of the k-th score, O(N) expected; no
// sort. Memory per request: 4 B per unit for g, plus 4 B per unit for each
// layer asked (z), plus 8 B per unit of workspace, plus (lambda > 0) 4 B per
// unit for the draws w of the last layer that drew.
#ifndef KS_DSA_H
#define KS_DSA_H

#include <stddef.h>
#include <stdint.h>

// One reference layer of a profile.
struct ks_dsa_layer {
    float sigma; // noise scale, in units of the log-importance's scale (Exp(1)); >= 0
    float rho;   // the noise's correlation between consecutive steps; in [0, 1)
};

struct ks_dsa_params {
    uint64_t seed;
    uint32_t n_layers;                  // the model's layers
    uint32_t top_k;                     // units per selection
    const struct ks_dsa_layer *profile; // [profile_layers]; copied by ks_dsa_new
    uint32_t profile_layers;            // >= 1
    float cross;                        // lambda: correlation of adjacent layers' fresh draws; in [0, 1)
};

// The shipped profile: fitted to DeepSeek-V3.2's 61 layers (dsa_fitted.c).
extern const struct ks_dsa_layer ks_dsa_fitted[];
extern const uint32_t ks_dsa_fitted_layers;
extern const float ks_dsa_fitted_cross; // its lambda

struct ks_dsa;     // per run: read-only after ks_dsa_new
struct ks_dsa_req; // per request

// Fills p with the shipped profile and lambda for a model of n_layers and top_k units.
void ks_dsa_params_default(struct ks_dsa_params *p, uint64_t seed, uint32_t n_layers, uint32_t top_k);

// A model for p (p and its profile copied). NULL with the reason in err
// when p is invalid or memory runs out. ks_dsa_free(NULL) is a no-op.
struct ks_dsa *ks_dsa_new(const struct ks_dsa_params *p, char *err, size_t len);
void ks_dsa_free(struct ks_dsa *d);

// The reference layer's parameters that model layer `layer` uses.
struct ks_dsa_layer ks_dsa_layer_of(const struct ks_dsa *d, uint32_t layer);

// Request `id`'s state (d is borrowed and must outlive it). NULL when out of
// memory. ks_dsa_req_free(NULL) is a no-op.
struct ks_dsa_req *ks_dsa_req_new(const struct ks_dsa *d, uint64_t id);
void ks_dsa_req_free(struct ks_dsa_req *r);

// Bytes request r holds beyond its fixed state: its log-importances (4 B a
// unit), each layer asked's noise (4 B a unit), the selection's two scratch
// arrays (4 B a unit each) and, when lambda > 0, the last drawing layer's
// draws (4 B a unit), every array's capacity counted (they grow by doubling
// from 1024 units).
size_t ks_dsa_req_bytes(const struct ks_dsa_req *r);

// The selection of `layer` at decode step `step` over a context of n units:
// min(n, top_k) distinct units in ascending order into out, their masses
// (summing to 1) into mass, their count into *k. out and mass hold at least
// min(n, top_k) entries. KS_OK, KS_EINVAL (layer out of range) or KS_ENOMEM.
int ks_dsa_select(struct ks_dsa_req *r, uint32_t layer, uint32_t step, uint32_t n, uint32_t *out, float *mass,
                  uint32_t *k);

// The want-th largest of s[0 .. n) (0 < want < n), with tmp (n entries) as
// scratch: what a selection keeps scores from (ks_dsa_select's threshold);
// *above (unless NULL): how many scores are strictly larger.
float ks_dsa_top_value(float *tmp, const float *s, uint32_t n, uint32_t want, uint32_t *above);


#endif
