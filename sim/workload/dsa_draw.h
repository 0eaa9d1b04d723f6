// dsa_draw.h - the per-unit pass of the DSA access model's noise (dsa.c):
// over a range of units, each unit's fresh normal from its counter hash,
// its lean on the layer below's draw, the layer's noise update and the
// unit's score.
//
// For unit i of [lo, hi):
//   e_i = table[ks_rng_mix(key + i * KS_DSA_GOLDEN) >> (64 - KS_DSA_QBITS)]
//   w_i = a lower_i + c e_i  when i < m,  e_i  otherwise
//   z_i = w_i  (stationary)  or  fa z_i + fc w_i
//   s_i = g_i + sigma z_i    (when s is not NULL)
//   keep_i = w_i             (when keep is not NULL)
// each product and sum rounded to float on its own (no fused multiply-add).
// lower and keep may be the same array (a layer leaves its draws where it
// read the layer below's): unit i's lower_i is read before keep_i is
// written.
//
// Three forms give the same bits: a scalar one, one that hashes eight units
// at a time with AVX-512 (64-bit lanes multiplied with AVX-512DQ, the table
// read by a gather) and one that hashes four at a time with AVX2.
// ks_dsa_draw takes the widest this CPU has; the test compares them.
#ifndef KS_DSA_DRAW_H
#define KS_DSA_DRAW_H

#include <stdint.h>

#define KS_DSA_QBITS 12
#define KS_DSA_GOLDEN UINT64_C(0x9e3779b97f4a7c15)

struct ks_dsa_draw {
    const float *table; // [1 << KS_DSA_QBITS] normal quantiles
    uint64_t key;       // the stream's key
    float a, c;         // the lean, for units below m
    uint32_t m;
    const float *lower; // [m] the layer below's draws (unread when m is 0)
    int stationary;     // 1: z_i = w_i; 0: the AR(1) update with fa, fc
    float fa, fc;
    float *z;           // [hi] the layer's noise, updated in place
    const float *g;     // [hi] log-importances (read when s is not NULL)
    float sigma;
    float *s;           // [hi] scores, or NULL
    float *keep;        // [hi] the draws w, or NULL
};

// The pass over [lo, hi), in the widest form this CPU has.
void ks_dsa_draw(const struct ks_dsa_draw *p, uint32_t lo, uint32_t hi);
// The scalar form.
void ks_dsa_draw_scalar(const struct ks_dsa_draw *p, uint32_t lo, uint32_t hi);
// The wide forms: KS_OK, or KS_EINVAL with nothing done where this CPU (or
// build) lacks AVX-512F and AVX-512DQ, or AVX2.
int ks_dsa_draw_avx512(const struct ks_dsa_draw *p, uint32_t lo, uint32_t hi);
int ks_dsa_draw_avx2(const struct ks_dsa_draw *p, uint32_t lo, uint32_t hi);

#endif
