// cost.c - the modelled time of a step's work (see cost.h).
#include "cost.h"

#include <math.h>

double ks_cost_prefill_flops(const struct ks_scenario *s, double n, double c)
{
    const struct ks_arch *a = &s->model.arch;
    double attn = (a->pair_flops + a->index_pair_flops) * s->model.layers * (n * c + n * (n + 1) / 2);
    return a->token_flops * n + attn;
}

// The FLOP/s a rank computes at: its attn_tp GPUs (its share of the FFNs'
// GPUs too: dp ranks share them) at the profile's efficiency.
static double rank_flops(const struct ks_scenario *s)
{
    return s->platform.flops * s->platform.prefill_efficiency * s->model.arch.attn_tp;
}

double ks_cost_prefill(const struct ks_scenario *s, double n, double c)
{
    return ks_cost_prefill_flops(s, n, c) / rank_flops(s);
}

double ks_cost_compute(const struct ks_scenario *s, double flops)
{
    return flops / rank_flops(s);
}

double ks_cost_iteration(const struct ks_scenario *s, double bytes, double attn, double flops)
{
    return fmax(bytes / s->platform.hbm_bw + attn, ks_cost_compute(s, flops));
}

double ks_cost_kernel(const struct ks_kernel_time *kt, uint32_t step, uint32_t k)
{
    if (step < kt->n_steps && isfinite(kt->steps[step]))
        return kt->steps[step] * k;
    uint32_t i = 1;
    if (kt->n == 1)
        return kt->seconds[0] * k / kt->blocks[0] / kt->batch;
    while (i + 1 < kt->n && kt->blocks[i] < k)
        i++;
    double x0 = kt->blocks[i - 1], x1 = kt->blocks[i], y0 = kt->seconds[i - 1], y1 = kt->seconds[i];
    double t = y0 + (y1 - y0) * ((double)k - x0) / (x1 - x0);
    return t > 0 ? t / kt->batch : 0;
}

double ks_cost_layer(const struct ks_scenario *s, double weights, double kv_hbm, double attn)
{
    // NOTE: with no measured time kv_hbm is all the KV read and attn = 0, and
    // with the table alone kv_hbm = 0: both give the earlier formulas bit for bit
    return ((weights + kv_hbm) / s->platform.hbm_bw + attn) / s->model.layers;
}
