// hist.h - a log-linear histogram of non-negative values, for latency
// distributions (TTFT, TPOT, ITL, E2EL, stalls) whose quantiles a run reports.
//
// Values are binned by their binary exponent and the top KS_HIST_SUB_BITS bits
// of their mantissa, so a bin's width is at most 2^-KS_HIST_SUB_BITS of its
// lower edge and a reported quantile is within that relative distance of a
// value that was recorded (clamped to the exact minimum and maximum). Memory
// is fixed (40 KiB whatever the count); histograms of several GPUs merge
// exactly. The count, sum, minimum and maximum are exact.
//
// Invariant: count == sum of the bins; min <= max when count > 0.
#ifndef KS_HIST_H
#define KS_HIST_H

#include <stdint.h>

#define KS_HIST_SUB_BITS 7   // 128 bins per power of two: 0.78% relative width
#define KS_HIST_MIN_EXP (-40) // values below 2^-40 (~1e-12) share the lowest bin
#define KS_HIST_MAX_EXP 40    // values from 2^40 (~1e12) up share the highest bin
#define KS_HIST_BINS ((KS_HIST_MAX_EXP - KS_HIST_MIN_EXP) << KS_HIST_SUB_BITS)

struct ks_hist {
    uint64_t count;
    uint64_t zeros; // values equal to 0 (kept apart: 0 has no exponent)
    double sum, min, max;
    uint32_t bin[KS_HIST_BINS];
};

void ks_hist_init(struct ks_hist *h);

// Records a value; negative values and NaN are refused (KS_EINVAL).
int ks_hist_add(struct ks_hist *h, double v);

// Adds every value of src to dst.
void ks_hist_merge(struct ks_hist *dst, const struct ks_hist *src);

// The q-quantile (0 <= q <= 1), nearest rank: the smallest recorded value
// with at least ceil(q * count) values at or below it, reported as its bin's
// midpoint clamped to [min, max]. 0 when the histogram is empty.
double ks_hist_quantile(const struct ks_hist *h, double q);

static inline double ks_hist_mean(const struct ks_hist *h)
{
    return h->count ? h->sum / (double)h->count : 0.0;
}

#endif
