// dsa_fit.c - ks_dsa_fit: fits the "dsa" access model's profile to its
// calibration inputs and writes the profile as C source on stdout.
//
//   build/calib/ks_dsa_fit calib/locality/dsa.lua > sim/workload/dsa_fitted.c
//
// The fits (the per-layer profile, then the layers' correlation lambda) are
// locality.h's; this program only prints. Exit 1 when the inputs
// cannot be read or memory runs out, 2 on bad usage.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "locality.h"
#include "status.h"

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: ks_dsa_fit CALIBRATION.lua > dsa_fitted.c\n");
        return 2;
    }
    struct ks_locality_inputs in;
    char err[1024];
    if (ks_locality_load(argv[1], &in, err, sizeof err) != KS_OK) {
        fprintf(stderr, "ks_dsa_fit: %s\n", err);
        return 1;
    }
    struct ks_dsa_layer *prof = calloc(in.layers, sizeof *prof);
    double *got = calloc(in.layers, sizeof *got), *adj = calloc(in.layers, sizeof *adj);
    double drift, adjacent;
    float cross;
    if (!prof || !got || !adj || ks_locality_fit(&in, prof, got, &drift) != KS_OK ||
        ks_locality_fit_cross(&in, prof, &cross, &adjacent, adj) != KS_OK) {
        fprintf(stderr, "ks_dsa_fit: out of memory\n");
        free(prof);
        free(got);
        free(adj);
        return 1;
    }
    double lo = 1, hi = 0; // the range of the layers' own adjacent overlap, those averaged
    for (uint32_t l = KS_LOCALITY_ADJACENT_FIRST; l < in.layers; l++) {
        lo = adj[l] < lo ? adj[l] : lo;
        hi = adj[l] > hi ? adj[l] : hi;
    }
    printf("// dsa_fitted.c - the \"dsa\" access model's shipped profile (dsa.h). GENERATED: do not edit.\n"
           "//\n"
           "// Remake: build/calib/ks_dsa_fit calib/locality/dsa.lua > sim/workload/dsa_fitted.c\n"
           "// Fitted (calib/locality.h) to the calibration inputs of calib/locality/dsa.lua\n"
           "// only: %u reference layers, top-k %u of %u units. Each line: {sigma, rho},\n"
           "// then the band's overlap range and the overlap the fit measured; between\n"
           "// %uK and %uK contexts no band above the random floor moves by more than %.4f.\n"
           "#include \"dsa.h\"\n\n"
           "const struct ks_dsa_layer ks_dsa_fitted[] = {\n",
           in.layers, in.top_k, in.context, in.context / 2048, in.context * 2 / 1024, drift);
    for (uint32_t j = 0; j < in.layers; j++) {
        const struct ks_locality_band *b = ks_locality_band_of(&in, j);
        printf("    {%.6ff, %.6ff}, // layer %u: band %.2f-%.2f, measured %.4f\n", (double)prof[j].sigma,
               (double)prof[j].rho, j, b->lo, b->hi, got[j]);
    }
    printf("};\n\nconst uint32_t ks_dsa_fitted_layers = %u;\n", in.layers);
    printf("\n// lambda, the layers' cross-layer correlation (dsa.h's cross), fitted with the\n"
           "// profile above fixed to IndexCache's adjacent-layer overlap (arXiv 2603.12201,\n"
           "// secondary: 70-100%% top-k overlap between adjacent layers): aiming at %.2f, the\n"
           "// middle of %.2f-%.2f, it measures %.4f at %uK averaged over layers %u-%u, each with\n"
           "// the layer below (from %.4f to %.4f by layer); layer 1 with layer 0, left out of\n"
           "// the average (layer 0 is near random), %.4f.\n"
           "const float ks_dsa_fitted_cross = %.6ff;\n",
           0.5 * (in.adjacent_lo + in.adjacent_hi), in.adjacent_lo, in.adjacent_hi, adjacent, in.context / 1024,
           KS_LOCALITY_ADJACENT_FIRST, in.layers - 1, lo, hi, in.layers > 1 ? adj[1] : NAN, (double)cross);
    free(prof);
    free(got);
    free(adj);
    return fflush(stdout) == 0 ? 0 : 1;
}
