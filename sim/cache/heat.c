// heat.c - 38-bit heat codes and the lazy-decay clock (see heat.h).
#include "heat.h"

#include <math.h>
#include <string.h>

#include "status.h"

#define MANT_BITS 28
#define EXP_BIAS 511
#define DBL_MANT 52
#define DBL_BIAS 1023

uint64_t ks_heat_encode(double x)
{
    if (!(x > 0.0)) // also maps NaN to zero
        return 0;
    uint64_t u;
    memcpy(&u, &x, sizeof u);
    int64_t e = (int64_t)((u >> DBL_MANT) & 0x7ff) - DBL_BIAS;
    uint64_t m = u & ((UINT64_C(1) << DBL_MANT) - 1);
    // round the 52-bit mantissa to nearest at 28 bits; a carry bumps the exponent
    m = (m + (UINT64_C(1) << (DBL_MANT - MANT_BITS - 1))) >> (DBL_MANT - MANT_BITS);
    if (m >> MANT_BITS) {
        m = 0;
        e++;
    }
    int64_t be = e + EXP_BIAS;
    if (be <= 0)
        return 0;
    if (be >= 1023)
        return KS_HEAT_MAX;
    return ((uint64_t)be << MANT_BITS) | m;
}

double ks_heat_decode(uint64_t code)
{
    if (code == 0)
        return 0.0;
    uint64_t be = code >> MANT_BITS;
    uint64_t m = code & ((UINT64_C(1) << MANT_BITS) - 1);
    uint64_t u = ((be - EXP_BIAS + DBL_BIAS) << DBL_MANT) | (m << (DBL_MANT - MANT_BITS));
    double x;
    memcpy(&x, &u, sizeof x);
    return x;
}

void ks_heat_clock_init(struct ks_heat_clock *clk, uint32_t half_life, uint32_t step)
{
    KS_ASSERT(half_life > 0);
    clk->half_life = half_life;
    clk->epoch = step;
    clk->now = step;
    clk->gain = 1.0;
}

double ks_heat_clock_advance(struct ks_heat_clock *clk, uint32_t step)
{
    KS_ASSERT(step >= clk->now);
    clk->now = step;
    double factor = 1.0;
    uint64_t span = (uint64_t)step - clk->epoch;
    if (span >= (uint64_t)KS_HEAT_REBASE_HALF_LIVES * clk->half_life) {
        factor = exp2(-(double)span / clk->half_life);
        clk->epoch = step;
        span = 0;
    }
    clk->gain = exp2((double)span / clk->half_life);
    return factor;
}
