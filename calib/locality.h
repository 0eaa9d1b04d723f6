// locality.h - the "dsa" access model's calibration: its inputs, the fit of
// its per-layer profile to them, and the overlap it gives.
//
// Inputs (calib/locality/dsa.lua, each figure citing its source): the
// reference model's layers and top-k, the fit's context, bands of layers with
// the consecutive-step overlap read off ESS's plot (a range [lo, hi] per
// band), the noise's step correlation rho, the adjacent-layer overlap range
// (IndexCache), and layer-averaged figures from other measurements (Levy's
// persistence and new share, GVR's kept share) that the check compares with
// and the fit never reads.
//
// The fit, per reference layer: the target is the middle of its band's
// range; sigma in [0, KS_LOCALITY_SIGMA_MAX] with a rho is bisected until
// the measured overlap (at `context`) meets it (overlap falls as sigma
// grows); where even the largest sigma leaves the overlap above the target,
// sigma stays at the largest and rho is bisected below (a fresher noise
// lowers the overlap further). rho starts at the input's and is lowered by
// 0.1 until no band's overlap moves by more than context_drift / 2 between
// context / 2 and 2 context (half the allowance left to sampling); bands
// whose range starts below the random-selection overlap top_k / (context /
// 2) are left out of that test (a random top-k's overlap is k / N, which
// moves with N by itself). A noise with a large sigma outweighs the
// importance's tail, reaches its bulk and makes the overlap depend on N: a
// lower rho needs less sigma for the same overlap. Every measurement draws the same requests
// (common random numbers), so the measured overlap is a smooth function of
// the parameters and the bisection converges.
//
// Then, the profile fixed, the cross-layer correlation lambda (dsa.h's
// `cross`) is bisected in [0, KS_LOCALITY_CROSS_MAX] until the adjacent-layer
// overlap meets the middle of its range: |K_{l-1}(t) n K_l(t)| / |K_l(t)|
// of a model of `layers` layers with the profile, averaged over steps and
// the layers l >= KS_LOCALITY_ADJACENT_FIRST at `context`. The pair of
// layers 0 and 1 is left out: layer 0 is near random (its band), and with
// the shipped profile it shares at most about 0.28 of its top-k with layer 1
// whatever lambda is, so counting it would only push lambda up for the
// others (its overlap is reported beside). lambda leaves every layer's
// consecutive-step overlap as it was (dsa.h), so the two fits do not
// interact. Nothing else is read: no cache miss rate, no throughput.
#ifndef KS_LOCALITY_H
#define KS_LOCALITY_H

#include <stddef.h>
#include <stdint.h>

#include "dsa.h"

#define KS_LOCALITY_MAX_BANDS 16
#define KS_LOCALITY_SIGMA_MAX 8.0f // noise scale at which the selection is the noise's
#define KS_LOCALITY_CROSS_MAX 0.999f // the largest lambda the fit tries
#define KS_LOCALITY_ADJACENT_FIRST 2 // the first layer l whose pair (l - 1, l) the adjacent overlap averages

struct ks_locality_band {
    uint32_t first, last; // reference layers, inclusive
    double lo, hi;        // overlap range read off the plot
};

struct ks_locality_inputs {
    uint32_t layers;   // reference layers
    uint32_t top_k;    // units per selection
    uint32_t context;  // units of context the fit measures at
    struct ks_locality_band band[KS_LOCALITY_MAX_BANDS];
    uint32_t n_bands;
    double context_drift; // largest change of a band's mean overlap between contexts
    double rho;           // the noise's step correlation, before the fit lowers it
    double adjacent_lo, adjacent_hi; // adjacent-layer overlap range; the fit of lambda aims at its middle
    double persistence;   // layer-averaged figures, for the check only
    double new_share;
    double kept_share;
};

// Reads a calibration file. KS_OK, or KS_EINVAL with "FILE: reason" in err
// (a missing field, bands that overlap or leave a layer out).
int ks_locality_load(const char *path, struct ks_locality_inputs *in, char *err, size_t len);

// The band of reference layer j (every layer has one after a successful load).
const struct ks_locality_band *ks_locality_band_of(const struct ks_locality_inputs *in, uint32_t j);

// The pooled consecutive-step overlap of one layer with parameters lp:
// `requests` requests of `context` units growing by one unit per step,
// `steps` steps each, top_k units selected; sum over steps t >= 1 of
// |K(t-1) n K(t)| over the sum of |K(t)|. NAN when out of memory.
double ks_locality_overlap(struct ks_dsa_layer lp, uint32_t top_k, uint32_t context, uint32_t steps,
                           uint32_t requests, uint64_t seed);

// The adjacent-layer overlap of a model of `layers` layers with profile
// (`layers` reference layers, one per model layer) and lambda `cross`:
// `requests` requests of `context` units growing by one unit per step,
// `steps` steps each, every layer asked in order at each step, top_k units
// selected; sum over steps and layers l >= KS_LOCALITY_ADJACENT_FIRST of
// |K_{l-1}(t) n K_l(t)| over the sum of |K_l(t)|. Each layer l >= 1's own
// figure, pooled the same way, into per_layer[l] (per_layer[0] NAN; may be
// NULL). NAN when out of memory, the model is invalid (ks_dsa_new) or no
// layer l >= KS_LOCALITY_ADJACENT_FIRST exists.
double ks_locality_adjacent(const struct ks_dsa_layer *profile, uint32_t layers, float cross, uint32_t top_k,
                            uint32_t context, uint32_t steps, uint32_t requests, uint64_t seed, double *per_layer);

// Fits the profile: out[in->layers], each layer's measured overlap in
// achieved[in->layers] and the largest drift across contexts in *drift
// (both may be NULL). KS_OK or KS_ENOMEM.
int ks_locality_fit(const struct ks_locality_inputs *in, struct ks_dsa_layer *out, double *achieved, double *drift);

// Fits lambda to the adjacent-layer overlap for the fitted profile
// (in->layers entries): *cross, the overlap it gives in *achieved and each
// layer's in per_layer[in->layers] (may be NULL; as ks_locality_adjacent).
// Where even KS_LOCALITY_CROSS_MAX leaves the overlap below the target,
// lambda stays there and *achieved says how far it got. KS_OK or KS_ENOMEM.
int ks_locality_fit_cross(const struct ks_locality_inputs *in, const struct ks_dsa_layer *profile, float *cross,
                          double *achieved, double *per_layer);

#endif
