// positional.c - block selection by position rules (see positional.h).
#include "positional.h"

#include <stdlib.h>
#include <string.h>

void ks_positional_init(struct ks_positional *s, const struct ks_scenario_sparse *sp, uint32_t block_size)
{
    memset(s, 0, sizeof *s);
    s->sp = sp;
    s->block_size = block_size ? block_size : 1;
}

void ks_positional_fini(struct ks_positional *s)
{
    free(s->bits);
    memset(s, 0, sizeof *s);
}

// The blocks between the sinks and the window: [lo, hi).
static void middle(const struct ks_positional *s, uint32_t n, uint32_t *lo, uint32_t *hi)
{
    uint32_t sink = s->sp->sink_blocks < n ? s->sp->sink_blocks : n;
    uint32_t win = s->sp->window_blocks < n - sink ? s->sp->window_blocks : n - sink;
    *lo = sink;
    *hi = n - win;
}

static uint32_t extra(const struct ks_positional *s, uint32_t lo, uint32_t hi)
{
    uint32_t budget = s->sp->budget_tokens / s->block_size;
    return budget < hi - lo ? budget : hi - lo;
}

uint32_t ks_positional_max(const struct ks_positional *s, uint32_t n)
{
    uint32_t lo, hi;
    middle(s, n, &lo, &hi);
    if (s->sp->policy == KS_SPARSE_DENSE)
        return n;
    return lo + (n - hi) + extra(s, lo, hi);
}

uint32_t ks_positional_select(struct ks_positional *s, uint32_t n, struct ks_rng *rng, uint32_t *out, float *mass)
{
    uint32_t lo, hi, k = 0;
    middle(s, n, &lo, &hi);
    uint32_t want = extra(s, lo, hi);
    for (uint32_t b = 0; b < lo; b++)
        out[k++] = b;
    switch (s->sp->policy) {
    case KS_SPARSE_DENSE:
        for (uint32_t b = lo; b < hi; b++)
            out[k++] = b;
        break;
    case KS_SPARSE_WINDOW:
        for (uint32_t b = hi - want; b < hi; b++)
            out[k++] = b;
        break;
    case KS_SPARSE_STRIDE: {
        int64_t stride = s->sp->stride ? s->sp->stride : 1;
        uint32_t first = k;
        for (int64_t b = (int64_t)hi - 1; b >= (int64_t)lo && k - first < want; b -= stride) // newest first
            out[k++] = (uint32_t)b;
        for (uint32_t i = first, j = k ? k - 1 : 0; i < j; i++, j--) { // into increasing order
            uint32_t t = out[i];
            out[i] = out[j];
            out[j] = t;
        }
        break;
    }
    case KS_SPARSE_RANDOM: {
        uint32_t m = hi - lo, words = (m + 63) / 64;
        if (words > s->cap_bits) {
            uint64_t *bits = realloc(s->bits, (size_t)words * sizeof *bits);
            if (!bits)
                return 0;
            s->bits = bits;
            s->cap_bits = words;
        }
        memset(s->bits, 0, (size_t)words * sizeof *s->bits);
        // Floyd's sampling: `want` distinct draws, each one random number
        for (uint32_t j = m - want; j < m; j++) {
            uint32_t t = ks_rng_below(rng, j + 1);
            if (s->bits[t / 64] >> (t % 64) & 1)
                t = j;
            s->bits[t / 64] |= UINT64_C(1) << (t % 64);
        }
        for (uint32_t w = 0; w < words; w++)
            for (uint64_t x = s->bits[w]; x; x &= x - 1)
                out[k++] = lo + w * 64 + (uint32_t)__builtin_ctzll(x);
        break;
    }
    default: // the score-driven policies and replays are sparse.c's; here they read the window
        for (uint32_t b = hi - want; b < hi; b++)
            out[k++] = b;
        break;
    }
    for (uint32_t b = hi; b < n; b++)
        out[k++] = b;
    if (mass)
        for (uint32_t i = 0; i < k; i++)
            mass[i] = 1.0f / (float)k;
    return k;
}
