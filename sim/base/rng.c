// rng.c - seeding of the xoshiro256** state.
#include "rng.h"

void ks_rng_seed(struct ks_rng *r, uint64_t seed)
{
    uint64_t x = seed;
    for (int i = 0; i < 4; i++) { // splitmix64: well-spread state from any seed, never all zero
        x += UINT64_C(0x9e3779b97f4a7c15);
        uint64_t z = x;
        z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
        z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
        r->s[i] = z ^ (z >> 31);
    }
}
