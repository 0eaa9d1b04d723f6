// hist.c - log-linear histograms (see hist.h).
#include "hist.h"

#include <math.h>
#include <string.h>

#include "status.h"

void ks_hist_init(struct ks_hist *h)
{
    memset(h, 0, sizeof *h);
}

// Bin of a positive value: (exponent - MIN_EXP) * 2^SUB + top mantissa bits.
static uint32_t bin_of(double v)
{
    int e;
    double m = frexp(v, &e); // v = m * 2^e, m in [0.5, 1)
    e -= 1;                  // v = (2m) * 2^e, 2m in [1, 2)
    if (e < KS_HIST_MIN_EXP)
        return 0;
    if (e >= KS_HIST_MAX_EXP)
        return KS_HIST_BINS - 1;
    uint32_t sub = (uint32_t)((2.0 * m - 1.0) * (1u << KS_HIST_SUB_BITS));
    if (sub >= (1u << KS_HIST_SUB_BITS)) // 2m rounds to 2 only at the top edge
        sub = (1u << KS_HIST_SUB_BITS) - 1;
    return ((uint32_t)(e - KS_HIST_MIN_EXP) << KS_HIST_SUB_BITS) | sub;
}

static double bin_mid(uint32_t b)
{
    int e = (int)(b >> KS_HIST_SUB_BITS) + KS_HIST_MIN_EXP;
    double sub = (double)(b & ((1u << KS_HIST_SUB_BITS) - 1));
    return ldexp(1.0 + (sub + 0.5) / (1u << KS_HIST_SUB_BITS), e);
}

int ks_hist_add(struct ks_hist *h, double v)
{
    if (!(v >= 0.0) || isinf(v))
        return KS_EINVAL;
    if (h->count == 0 || v < h->min)
        h->min = v;
    if (h->count == 0 || v > h->max)
        h->max = v;
    h->count++;
    h->sum += v;
    if (v == 0.0)
        h->zeros++;
    else
        h->bin[bin_of(v)]++;
    return KS_OK;
}

void ks_hist_merge(struct ks_hist *dst, const struct ks_hist *src)
{
    if (src->count == 0)
        return;
    if (dst->count == 0 || src->min < dst->min)
        dst->min = src->min;
    if (dst->count == 0 || src->max > dst->max)
        dst->max = src->max;
    dst->count += src->count;
    dst->zeros += src->zeros;
    dst->sum += src->sum;
    for (uint32_t b = 0; b < KS_HIST_BINS; b++)
        dst->bin[b] += src->bin[b];
}

double ks_hist_quantile(const struct ks_hist *h, double q)
{
    if (h->count == 0)
        return 0.0;
    if (q <= 0.0)
        return h->min;
    if (q >= 1.0)
        return h->max;
    uint64_t rank = (uint64_t)ceil(q * (double)h->count);
    if (rank == 0)
        rank = 1;
    uint64_t seen = h->zeros;
    if (seen >= rank)
        return 0.0;
    for (uint32_t b = 0; b < KS_HIST_BINS; b++) {
        seen += h->bin[b];
        if (seen >= rank) {
            double v = bin_mid(b);
            return v < h->min ? h->min : v > h->max ? h->max : v;
        }
    }
    return h->max;
}
