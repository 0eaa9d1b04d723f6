// locality.h - the "dsa" access model's calibration: its inputs, the fit of
// its per-layer profile to them, and the overlap it gives.
//
// Inputs (calib/locality/dsa.lua, each figure citing its source): the
// reference model's layers and top-k, the fit's context, bands of layers with
// the consecutive-step overlap read off ESS's plot (a range [lo, hi] per
// band), the noise's step correlation rho, and layer-averaged figures from
// other measurements (Levy's persistence and new share, GVR's kept share)
// that the check compares with and the fit never reads.
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
// the parameters and the bisection converges. Nothing else is read: no
// cache miss rate, no throughput.
#ifndef KS_LOCALITY_H
#define KS_LOCALITY_H

#include <stddef.h>
#include <stdint.h>

#include "dsa.h"

#define KS_LOCALITY_MAX_BANDS 16
#define KS_LOCALITY_SIGMA_MAX 8.0f // noise scale at which the selection is the noise's

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

// Fits the profile: out[in->layers], each layer's measured overlap in
// achieved[in->layers] and the largest drift across contexts in *drift
// (both may be NULL). KS_OK or KS_ENOMEM.
int ks_locality_fit(const struct ks_locality_inputs *in, struct ks_dsa_layer *out, double *achieved, double *drift);

#endif
