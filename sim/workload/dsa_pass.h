// dsa_pass.h - the DSA access model's passes over a layer's units (dsa.c):
// the noise draw, the scores at or above a bound, the passes that find the
// value of a rank, and the units a threshold keeps. Each pass has a plain C
// form and forms that use AVX2 or AVX-512; all give the same results, bit
// for bit (the test compares them), and the model runs the widest this CPU
// has.
//
// The draw, for unit i of [lo, hi):
//   e_i = table[ks_rng_mix(key + i * KS_DSA_GOLDEN) >> (64 - KS_DSA_QBITS)]
//   w_i = a lower_i + c e_i  when i < m,  e_i  otherwise
//   z_i = w_i  (stationary)  or  fa z_i + fc w_i
//   s_i = g_i + sigma z_i    (when s is not NULL)
//   keep_i = w_i             (when keep is not NULL)
// each product and sum rounded to float on its own (no fused multiply-add).
// lower and keep may be the same array (a layer leaves its draws where it
// read the layer below's): unit i's lower_i is read before keep_i is
// written. The AVX-512 form hashes eight units at a time (64-bit lanes
// multiplied with AVX-512DQ, the table read by a gather), the AVX2 form four.
#ifndef KS_DSA_PASS_H
#define KS_DSA_PASS_H

#include <stdint.h>

#define KS_DSA_QBITS 12
#define KS_DSA_GOLDEN UINT64_C(0x9e3779b97f4a7c15)

// The instructions a pass may use: a pass without a form of its own for one
// runs its widest form below it.
enum ks_dsa_isa {
    KS_DSA_PLAIN,  // C alone
    KS_DSA_AVX2,   // AVX2 (and the SSE2 below it)
    KS_DSA_AVX512, // AVX-512F and AVX-512DQ
};

// The widest this CPU (and build) has; a pass must not be asked for more.
enum ks_dsa_isa ks_dsa_isa_best(void);

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

// The draw over units [lo, hi).
void ks_dsa_draw(enum ks_dsa_isa isa, const struct ks_dsa_draw *p, uint32_t lo, uint32_t hi);

// The values of s[0 .. n) at or above low, in order, into dst (which may be
// s); returns how many. (NaN is not at or above any bound.)
uint32_t ks_dsa_at_least(enum ks_dsa_isa isa, float *dst, const float *s, uint32_t n, float low);

// The order statistics' passes (dsa.c's rank_of). A value's bucket is
// (uint32_t)x for x = (v - lo) * scale when x < top, else top (as C computes
// it: a NaN goes to top).
// The least and the greatest of a[0 .. n), n >= 1: lo = a[0], then lo = x <
// lo ? x : lo over the rest in order (NaN kept out unless a[0] is one), the
// same for hi with >.
void ks_dsa_range(enum ks_dsa_isa isa, const float *a, uint32_t n, float *lo, float *hi);
// Adds 1 to count[bucket] for each value of a[0 .. n).
void ks_dsa_count_buckets(enum ks_dsa_isa isa, const float *a, uint32_t n, float lo, float scale, float top,
                          uint32_t *count);
// The values of a[0 .. n) in bucket b, in order, into dst (which may be a);
// returns how many.
uint32_t ks_dsa_in_bucket(enum ks_dsa_isa isa, float *dst, const float *a, uint32_t n, float lo, float scale,
                          float top, uint32_t b);

// What a selection keeps of s[0 .. n) given its threshold: every unit above
// thr and the first `ties` units at it, in ascending order, until want are
// kept, into out (want entries); returns how many. (NaN is neither above nor
// at any threshold.)
uint32_t ks_dsa_take(enum ks_dsa_isa isa, const float *s, uint32_t n, float thr, uint32_t ties, uint32_t want,
                     uint32_t *out);

// mass[i] = (float)(mass[i] / sum) for i < m: the selection's masses
// normalised (the quotient in double, rounded to float once).
void ks_dsa_divide(enum ks_dsa_isa isa, float *mass, uint32_t m, double sum);

#endif
