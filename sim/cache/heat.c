// heat.c - the lazy-decay clock (see heat.h; the 38-bit codes are inline there).
#include "heat.h"

#include <math.h>

#include "status.h"

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
