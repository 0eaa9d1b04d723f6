// dsa.h - an access model of DSA-style sparse attention (DeepSeek-V3.2's
// lightning indexer): per layer, the top-k units of importance plus
// temporally correlated noise.
//
// The mechanism. A request's context is a sequence of units (tokens when
// cache.block_size is 1, else blocks); unit i has a static log-importance
// g_i ~ Exp(1), shared by every layer (adjacent layers of a DSA model select
// much the same entries; IndexCache, arXiv 2603.12201, secondary). Each
// layer l adds noise sigma_l z_i(t), where z_i is an AR(1) process of unit
// variance and step correlation rho_l:
//   z_i(t) = rho_l z_i(t-1) + sqrt(1 - rho_l^2) e_i(t),  e_i(t) ~ N(0, 1),
// and selects at step t the top_k units of g_i + sigma_l z_i(t) over the
// context (a unit written by decode joins it with its own g and a stationary
// z). The exp of a selected unit's score is its attention weight; masses are
// those weights normalised over the selection.
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
// makes the overlap depend on the context length).
//
// Invariants and determinism: g_i and e_i(t) are counter-based hashes of
// (seed, request, layer, step, unit), so a request's selections are a pure
// function of the sequence of steps asked of each layer. A layer asked its
// steps in increasing order, one by one (the engine does), evolves z exactly;
// a gap of d steps draws z(t) from its exact conditional law (rho^d) in one
// go; a step below the last one restarts the layer with a stationary z.
//
// Costs per selection of k out of N units: O(N) hashes, table lookups and
// multiply-adds, then a quickselect of the k-th score, O(N) expected; no
// sort. Memory per request: 4 B per unit for g, plus 4 B per unit for each
// layer asked (z), plus 8 B per unit of workspace.
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
};

// The shipped profile: fitted to DeepSeek-V3.2's 61 layers (dsa_fitted.c).
extern const struct ks_dsa_layer ks_dsa_fitted[];
extern const uint32_t ks_dsa_fitted_layers;

struct ks_dsa;     // per run: read-only after ks_dsa_new
struct ks_dsa_req; // per request

// Fills p with the shipped profile for a model of n_layers and top_k units.
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
// unit), each layer asked's noise (4 B a unit) and the selection's two
// scratch arrays (4 B a unit each), every array's capacity counted (they
// grow by doubling from 1024 units).
size_t ks_dsa_req_bytes(const struct ks_dsa_req *r);

// The selection of `layer` at decode step `step` over a context of n units:
// min(n, top_k) distinct units in ascending order into out, their masses
// (summing to 1) into mass, their count into *k. out and mass hold at least
// min(n, top_k) entries. KS_OK, KS_EINVAL (layer out of range) or KS_ENOMEM.
int ks_dsa_select(struct ks_dsa_req *r, uint32_t layer, uint32_t step, uint32_t n, uint32_t *out, float *mass,
                  uint32_t *k);

// The want-th largest of s[0 .. n) (0 < want < n), with tmp (n entries) as
// scratch: what a selection keeps scores from (ks_dsa_select's threshold).
float ks_dsa_top_value(float *tmp, const float *s, uint32_t n, uint32_t want);

#endif
