// rng.c - seeding of the xoshiro256** state.
#include "rng.h"

void ks_rng_seed(struct ks_rng *r, uint64_t seed)
{
    uint64_t x = seed;
    for (int i = 0; i < 4; i++) { // splitmix64: well-spread state from any seed, never all zero
        x += UINT64_C(0x9e3779b97f4a7c15);
        r->s[i] = ks_rng_mix(x);
    }
}
