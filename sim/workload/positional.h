// positional.h - which KV blocks the position rules (dense, window, stride, random) read at a decode step.
//
// For one request (one layer group) with n blocks of context, a policy
// always keeps the first sink_blocks (attention sinks) and the last
// window_blocks (the recent window), and picks up to budget_tokens /
// block_size more blocks from the rest by its rule:
//   dense  : all of them (the budget does not apply: dense reads everything);
//   window : the most recent ones (the window grows by the budget);
//   stride : every stride-th block counted back from the newest;
//   random : distinct blocks drawn uniformly (the case where tiering cannot
//            predict anything).
// The other policies (scores, traces, models) live in selection.h; given one,
// ks_positional_select applies the window rule.
// Blocks come out in increasing order. Every selected block gets the same
// attention mass, 1 / count: these policies say which blocks are read, not
// how attention weighs them (attention-driven top-k, with real masses, comes
// from the kernels).
#ifndef KS_POSITIONAL_H
#define KS_POSITIONAL_H

#include <stdint.h>

#include "rng.h"
#include "scenario.h"

struct ks_positional {
    const struct ks_scenario_sparse *sp; // borrowed: must outlive the selector
    uint32_t block_size;                 // tokens per block
    uint64_t *bits;                      // scratch bitmap for random draws
    uint32_t cap_bits;                   // 64-bit words in bits
};

void ks_positional_init(struct ks_positional *s, const struct ks_scenario_sparse *sp, uint32_t block_size);
void ks_positional_fini(struct ks_positional *s);

// Upper bound of the blocks one step selects from n blocks.
uint32_t ks_positional_max(const struct ks_positional *s, uint32_t n);

// Writes the selected blocks of a context of n blocks into out (capacity at
// least ks_positional_max(s, n)) and their masses into mass (may be NULL).
// Returns the count, or 0 when memory for the random draw runs out.
uint32_t ks_positional_select(struct ks_positional *s, uint32_t n, struct ks_rng *rng, uint32_t *out, float *mass);

#endif
