// dsa_fitted.c - the "dsa" access model's shipped profile (dsa.h). GENERATED: do not edit.
//
// Remake: build/calib/ks_dsa_fit calib/locality/dsa.lua > sim/workload/dsa_fitted.c
// Fitted (calib/locality.h) to the calibration inputs of calib/locality/dsa.lua
// only: 61 reference layers, top-k 2048 of 32768 units. Each line: {sigma, rho},
// then the band's overlap range and the overlap the fit measured; between
// 16K and 64K contexts no band above the random floor moves by more than 0.0240.
#include "dsa.h"

const struct ks_dsa_layer ks_dsa_fitted[] = {
    {5.819375f, 0.000000f}, // layer 0: band 0.00-0.15, measured 0.0750
    {0.596884f, 0.000000f}, // layer 1: band 0.50-0.85, measured 0.6750
    {0.596884f, 0.000000f}, // layer 2: band 0.50-0.85, measured 0.6750
    {0.596884f, 0.000000f}, // layer 3: band 0.50-0.85, measured 0.6750
    {0.596884f, 0.000000f}, // layer 4: band 0.50-0.85, measured 0.6750
    {0.596884f, 0.000000f}, // layer 5: band 0.50-0.85, measured 0.6750
    {0.596884f, 0.000000f}, // layer 6: band 0.50-0.85, measured 0.6750
    {0.596884f, 0.000000f}, // layer 7: band 0.50-0.85, measured 0.6750
    {0.596884f, 0.000000f}, // layer 8: band 0.50-0.85, measured 0.6750
    {0.596884f, 0.000000f}, // layer 9: band 0.50-0.85, measured 0.6750
    {0.596884f, 0.000000f}, // layer 10: band 0.50-0.85, measured 0.6750
    {0.596884f, 0.000000f}, // layer 11: band 0.50-0.85, measured 0.6750
    {0.596884f, 0.000000f}, // layer 12: band 0.50-0.85, measured 0.6750
    {0.596884f, 0.000000f}, // layer 13: band 0.50-0.85, measured 0.6750
    {0.596884f, 0.000000f}, // layer 14: band 0.50-0.85, measured 0.6750
    {0.596884f, 0.000000f}, // layer 15: band 0.50-0.85, measured 0.6750
    {0.596884f, 0.000000f}, // layer 16: band 0.50-0.85, measured 0.6750
    {0.596884f, 0.000000f}, // layer 17: band 0.50-0.85, measured 0.6750
    {1.213560f, 0.000000f}, // layer 18: band 0.30-0.50, measured 0.4000
    {1.213560f, 0.000000f}, // layer 19: band 0.30-0.50, measured 0.4000
    {1.213560f, 0.000000f}, // layer 20: band 0.30-0.50, measured 0.4000
    {1.213560f, 0.000000f}, // layer 21: band 0.30-0.50, measured 0.4000
    {1.213560f, 0.000000f}, // layer 22: band 0.30-0.50, measured 0.4000
    {1.213560f, 0.000000f}, // layer 23: band 0.30-0.50, measured 0.4000
    {1.213560f, 0.000000f}, // layer 24: band 0.30-0.50, measured 0.4000
    {1.213560f, 0.000000f}, // layer 25: band 0.30-0.50, measured 0.4000
    {1.213560f, 0.000000f}, // layer 26: band 0.30-0.50, measured 0.4000
    {1.213560f, 0.000000f}, // layer 27: band 0.30-0.50, measured 0.4000
    {1.213560f, 0.000000f}, // layer 28: band 0.30-0.50, measured 0.4000
    {1.213560f, 0.000000f}, // layer 29: band 0.30-0.50, measured 0.4000
    {1.213560f, 0.000000f}, // layer 30: band 0.30-0.50, measured 0.4000
    {1.213560f, 0.000000f}, // layer 31: band 0.30-0.50, measured 0.4000
    {1.213560f, 0.000000f}, // layer 32: band 0.30-0.50, measured 0.4000
    {1.213560f, 0.000000f}, // layer 33: band 0.30-0.50, measured 0.4000
    {1.213560f, 0.000000f}, // layer 34: band 0.30-0.50, measured 0.4000
    {1.213560f, 0.000000f}, // layer 35: band 0.30-0.50, measured 0.4000
    {1.213560f, 0.000000f}, // layer 36: band 0.30-0.50, measured 0.4000
    {1.213560f, 0.000000f}, // layer 37: band 0.30-0.50, measured 0.4000
    {1.213560f, 0.000000f}, // layer 38: band 0.30-0.50, measured 0.4000
    {1.213560f, 0.000000f}, // layer 39: band 0.30-0.50, measured 0.4000
    {1.213560f, 0.000000f}, // layer 40: band 0.30-0.50, measured 0.4000
    {1.213560f, 0.000000f}, // layer 41: band 0.30-0.50, measured 0.4000
    {1.213560f, 0.000000f}, // layer 42: band 0.30-0.50, measured 0.4000
    {1.213560f, 0.000000f}, // layer 43: band 0.30-0.50, measured 0.4000
    {0.596884f, 0.000000f}, // layer 44: band 0.50-0.85, measured 0.6750
    {0.596884f, 0.000000f}, // layer 45: band 0.50-0.85, measured 0.6750
    {0.596884f, 0.000000f}, // layer 46: band 0.50-0.85, measured 0.6750
    {0.596884f, 0.000000f}, // layer 47: band 0.50-0.85, measured 0.6750
    {0.596884f, 0.000000f}, // layer 48: band 0.50-0.85, measured 0.6750
    {0.596884f, 0.000000f}, // layer 49: band 0.50-0.85, measured 0.6750
    {0.596884f, 0.000000f}, // layer 50: band 0.50-0.85, measured 0.6750
    {0.596884f, 0.000000f}, // layer 51: band 0.50-0.85, measured 0.6750
    {0.596884f, 0.000000f}, // layer 52: band 0.50-0.85, measured 0.6750
    {0.596884f, 0.000000f}, // layer 53: band 0.50-0.85, measured 0.6750
    {0.596884f, 0.000000f}, // layer 54: band 0.50-0.85, measured 0.6750
    {0.596884f, 0.000000f}, // layer 55: band 0.50-0.85, measured 0.6750
    {0.596884f, 0.000000f}, // layer 56: band 0.50-0.85, measured 0.6750
    {0.596884f, 0.000000f}, // layer 57: band 0.50-0.85, measured 0.6750
    {0.596884f, 0.000000f}, // layer 58: band 0.50-0.85, measured 0.6750
    {0.596884f, 0.000000f}, // layer 59: band 0.50-0.85, measured 0.6750
    {0.596884f, 0.000000f}, // layer 60: band 0.50-0.85, measured 0.6750
};

const uint32_t ks_dsa_fitted_layers = 61;

// lambda, the layers' cross-layer correlation (dsa.h's cross), fitted with the
// profile above fixed to IndexCache's adjacent-layer overlap (arXiv 2603.12201,
// secondary: 70-100% top-k overlap between adjacent layers): aiming at 0.85, the
// middle of 0.70-1.00, it measures 0.8500 at 32K averaged over layers 2-60, each with
// the layer below (from 0.7237 to 0.8997 by layer); layer 1 with layer 0, left out of
// the average (layer 0 is near random), 0.2664.
const float ks_dsa_fitted_cross = 0.906850f;
