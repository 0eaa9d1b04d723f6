// rng.h - a small, fast, seedable generator (xoshiro256**, seeded by splitmix64).
//
// Every random choice in kvstrata draws from one of these, seeded from the
// scenario's seed, so a run is reproducible bit for bit on any machine.
#ifndef KS_RNG_H
#define KS_RNG_H

#include <stdint.h>

struct ks_rng {
    uint64_t s[4];
};

void ks_rng_seed(struct ks_rng *r, uint64_t seed);

// splitmix64's finaliser: a well-spread 64-bit hash of x (counter-based
// randomness: the same x gives the same value, neighbouring x unrelated ones).
// (Its multipliers are named for the vectorised forms of it, dsa_pass.c.)
#define KS_RNG_MIX_M1 UINT64_C(0xbf58476d1ce4e5b9)
#define KS_RNG_MIX_M2 UINT64_C(0x94d049bb133111eb)
static inline uint64_t ks_rng_mix(uint64_t z)
{
    z = (z ^ (z >> 30)) * KS_RNG_MIX_M1;
    z = (z ^ (z >> 27)) * KS_RNG_MIX_M2;
    return z ^ (z >> 31);
}

static inline uint64_t ks_rng_rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

static inline uint64_t ks_rng_next(struct ks_rng *r)
{
    uint64_t *s = r->s;
    uint64_t out = ks_rng_rotl(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = ks_rng_rotl(s[3], 45);
    return out;
}

// Uniform in [0, n), n > 0 (multiply-shift; bias below 2^-32 for n < 2^32).
static inline uint32_t ks_rng_below(struct ks_rng *r, uint32_t n)
{
    return (uint32_t)(((ks_rng_next(r) >> 32) * (uint64_t)n) >> 32);
}

// Uniform in [0, 1) with 53 random bits.
static inline double ks_rng_unit(struct ks_rng *r)
{
    return (double)(ks_rng_next(r) >> 11) * 0x1.0p-53;
}

#endif
