// cost.c - the modelled time of a step's work (see cost.h).
#include "cost.h"

#include <math.h>

// The FLOP/s a rank computes at: its attn_tp GPUs (its share of the FFNs'
// GPUs too: dp ranks share them) at the profile's efficiency; matrix work in
// FP8 (fp8 != 0) at the FP8 rate where the profile gives one.
static double rank_flops(const struct ks_scenario *s, int fp8)
{
    double peak = s->platform.flops;
    if (fp8 && s->platform.flops_fp8 > 0)
        peak = s->platform.flops_fp8;
    return peak * s->platform.prefill_efficiency * s->model.arch.attn_tp;
}

int ks_cost_index_apart(const struct ks_scenario *s)
{
    return s->model.indexer.heads > 0 && s->model.indexer.dtype == KS_DTYPE_FP8 && s->platform.flops_fp8 > 0 &&
           s->platform.flops_fp8 != s->platform.flops;
}

double ks_cost_compute(const struct ks_scenario *s, double weight_flops, double attn_flops, double index_flops)
{
    double w = rank_flops(s, s->model.weight_dtype == KS_DTYPE_FP8), a = rank_flops(s, 0);
    // NOTE: one rate, one division: the formulas before FP8 rates, bit for bit
    double t = w == a ? (weight_flops + attn_flops) / a : weight_flops / w + attn_flops / a;
    return index_flops > 0 ? t + index_flops / rank_flops(s, 1) : t;
}

double ks_cost_prefill_pairs(double n, double c, double k)
{
    double dense = n * c + n * (n + 1) / 2;
    if (k <= 0 || c + n <= k)
        return dense;
    if (c >= k)
        return n * k;
    double m = k - c; // query tokens c + 1 .. k read every earlier token, the rest k
    return m * c + m * (m + 1) / 2 + (n - m) * k;
}

double ks_cost_prefill(const struct ks_scenario *s, double n, double c)
{
    const struct ks_arch *a = &s->model.arch;
    double causal = n * c + n * (n + 1) / 2, attn, index = 0;
    if (!s->model.indexer.heads) // dense prefill
        attn = (a->pair_flops + a->index_pair_flops) * s->model.layers * causal;
    else if (ks_cost_index_apart(s)) { // the indexer's scores at the FP8 rate
        attn = a->pair_flops * ks_cost_prefill_pairs(n, c, s->sparse.budget_tokens) * s->model.layers;
        index = a->index_pair_flops * causal * s->model.layers;
    } else
        attn = (a->pair_flops * ks_cost_prefill_pairs(n, c, s->sparse.budget_tokens) + a->index_pair_flops * causal) *
               s->model.layers;
    return ks_cost_compute(s, a->token_flops * n, attn, index);
}

double ks_cost_roofline(const struct ks_scenario *s, double bytes, double attn, double compute)
{
    return fmax(bytes / s->platform.hbm_bw + attn, compute);
}


double ks_cost_pass_overhead(const struct ks_scenario *s)
{
    return s->scheduler.layer_overhead * s->model.layers;
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
    return ((weights + kv_hbm) / s->platform.hbm_bw + attn) / s->model.layers + s->scheduler.layer_overhead;
}
