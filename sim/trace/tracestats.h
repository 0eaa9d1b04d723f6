// tracestats.h - statistics of an access trace: what a cache designer needs before tuning.
//
// Everything here is a pure function of a loaded trace (trace.h), computed in
// one pass per (request, layer) stream plus one OPT simulation per request
// and L1 size; the result owns only its per-layer array.
//
// Vocabulary. A *stream* is one (request, layer): its selections S_0, S_1, ...
// S_{T-1}, one per decode step of the request. A *selection* is one (request,
// layer, step, block) with the block in that step's S_s (the trace schema
// guarantees a block at most once per record). nb(s) = ceil(context(s) /
// block_size) is the number of blocks of the context at step s.
//
// Definitions (every figure below uses exactly these):
// - Reuse distance of a selection (r, l, s, b): s - t, where t < s is the
//   last step at which stream (r, l) selected b; a selection with no such t
//   is *cold*. Histogram buckets: bucket 0 holds d = 1, bucket k >= 1 holds
//   2^(k-1) < d <= 2^k (so d <= 4, 16, 256 are unions of whole buckets).
// - Reuse fraction R(W), backward-looking: among the selections at steps
//   s >= W (a full window of W earlier steps exists in their stream), the
//   fraction whose reuse distance is at most W, i.e. whose block the same
//   stream also selected in at least one of steps s-W .. s-1. Cold
//   selections count in the denominator only. NaN when no step s >= W exists.
// - Overlap of a layer: sum over its streams' steps s >= 1 of
//   |S_{s-1} n S_s|, over the sum of |S_s| over the same steps: the
//   consecutive-step overlap |K(t-1) n K(t)| / |K(t)| of a top-k, pooled
//   (equal to the mean over steps when every selection has the same size).
//   It is R(1) restricted to the layer. New share: 1 - overlap, the share of
//   the selections at steps s >= 1 whose block the step before did not hold.
// - Persistence of a layer: the mean length, in steps, of its runs, a run
//   being a maximal stretch of consecutive steps of one stream in which one
//   block is selected, counted by renewal: (selections at steps s >= 1) /
//   (runs begun at steps s >= 1). Each run begun at s >= 1 counts once; a
//   run cut by the stream's last step counts with the steps it has; a run
//   that includes step 0 (its start unseen) adds its steps s >= 1 to the
//   total but no run. For a stationary stream this is the mean run length
//   without the bias of dropping or truncating cut runs (dropping the runs
//   seen from step 0 leaves out the entries that never leave, which a short
//   trace holds many of). It equals 1 / new share, which is why Levy's
//   persistence 1.82 and new share 0.55 (PUBLISHED.md section 3) agree.
//   NaN when no run begins at a step >= 1.
// - Adjacent-layer overlap of a layer l >= 1: sum over the requests' steps
//   s of |S^{l-1}_s n S^l_s|, over the sum of |S^l_s| over the same steps,
//   where S^l_s is layer l's selection of that (request, step): the share of
//   what a layer selects that the layer below selected at the same step
//   (IndexCache's adjacent-layer top-k overlap, pooled as the overlap is).
//   Every step of a loaded trace has a record of every layer, so every
//   (request, step) counts. The trace-wide figure pools layers 1 .. L-1.
//   NaN for layer 0, and where the layer selects nothing.
// - Sequential-neighbour probability: over all (r, l, s, b) with b in S_s,
//   s + 1 < T and b + 1 < nb(s+1), the fraction with b + 1 in S_{s+1}.
//   The *new-neighbour* probability restricts the same count to b + 1 not in
//   S_s: how often prefetching b + 1 after an access to b fetches a block
//   that the next step selects and the current one did not already have.
// - Working set over window w: |S_{s-w+1} u ... u S_s| for each stream and
//   step s >= w - 1, averaged over streams at each step (the series) and
//   over all (stream, step) pairs (the mean).
// - Mass: per record with n > 0 and a positive total, the share of the
//   record's total mass held by its top-k blocks by mass (k = 1, 8, 32; all
//   of it when n <= k), averaged over records; also the mean total mass of a
//   record (1 when the trace stores normalised masses, less when the masses
//   are shares of the full attention that the selection captured).
// - Belady (OPT) hit rate: each request's accesses, all layers, as one
//   stream in trace order (step, then layer, then the record's order); an
//   access is a (layer, block) pair. An L1 of C entries holds C (layer,
//   block) pairs of that request, starts empty, must hold the block when it
//   is accessed (demand fetch, no bypass), and on a miss with C entries
//   resident evicts the one whose next use is furthest (never again first).
//   C = max(1, round(f * mean_selected * layers)) for f = 1/4, 1/2, 1, 2:
//   f = 1 holds one average step's selection of every layer. The hit rate is
//   hits / accesses over all requests (each request simulated alone).
#ifndef KS_TRACESTATS_H
#define KS_TRACESTATS_H

#include <stddef.h>
#include <stdint.h>

#include "trace.h"

enum {
    KS_TRACESTATS_BUCKETS = 33, // reuse-distance buckets (bucket 32 ends at 2^32)
    KS_TRACESTATS_WINDOWS = 4,  // reuse fractions: W = 1, 4, 16, 256
    KS_TRACESTATS_WS = 2,       // working-set windows: 16, 256 steps
    KS_TRACESTATS_SERIES = 8,   // points of each working-set series
    KS_TRACESTATS_TOP = 3,      // mass shares of the top 1, 8, 32 blocks
    KS_TRACESTATS_OPT = 4,      // OPT L1 sizes: 1/4, 1/2, 1, 2 x mean_selected x layers
};

extern const uint32_t ks_tracestats_window[KS_TRACESTATS_WINDOWS];   // 1, 4, 16, 256
extern const uint32_t ks_tracestats_ws_window[KS_TRACESTATS_WS];     // 16, 256
extern const uint32_t ks_tracestats_top[KS_TRACESTATS_TOP];          // 1, 8, 32
extern const double ks_tracestats_opt_fraction[KS_TRACESTATS_OPT];   // 0.25, 0.5, 1, 2

struct ks_tracestats_layer {
    uint64_t selections;  // selections in this layer, all requests
    double mean_selected; // blocks per record
    double overlap;       // consecutive-step overlap (R(1) of this layer); NaN when no step 1 exists
    double new_share;     // 1 - overlap; NaN when no step 1 exists
    double persistence;   // steps: mean run length (= 1 / new_share); NaN when no run begins at s >= 1
    double neighbour;     // sequential-neighbour probability of this layer; NaN without trials
    double adjacent;      // adjacent-layer overlap with layer - 1; NaN for layer 0 or no selection
};

struct ks_tracestats_ws {
    uint32_t window;                          // steps
    double mean;                              // blocks, NaN when no stream reaches step window-1
    uint32_t points;                          // entries of step[] and value[] in use
    uint32_t step[KS_TRACESTATS_SERIES];      // decode step
    double value[KS_TRACESTATS_SERIES];       // blocks: mean over streams that have that step
};

struct ks_tracestats {
    uint32_t requests, layers;
    uint32_t block_size;    // tokens per block
    uint64_t records;       // (request, step, layer) records
    uint64_t steps;         // decode steps, all requests
    uint64_t selections;    // all selections
    uint32_t max_blocks;    // largest nb(s) of any record

    uint64_t cold;                              // selections with no earlier selection in their stream
    uint64_t reuse_hist[KS_TRACESTATS_BUCKETS]; // the other selections by reuse-distance bucket
    uint32_t hist_buckets;                      // 1 + the last non-empty bucket (0 when all are cold)
    double reuse[KS_TRACESTATS_WINDOWS];        // R(W) for W = ks_tracestats_window[i]
    uint64_t reuse_eligible[KS_TRACESTATS_WINDOWS]; // its denominator: selections at steps s >= W

    double neighbour;          // sequential-neighbour probability (NaN without trials)
    uint64_t neighbour_trials; // its denominator
    double neighbour_new;      // new-neighbour probability (NaN without trials)
    uint64_t neighbour_new_trials;

    double adjacent;           // adjacent-layer overlap, layers 1 .. L-1 pooled (NaN when they select nothing)

    struct ks_tracestats_ws ws[KS_TRACESTATS_WS];

    double mean_selected;                    // blocks per record (0 without records)
    uint32_t min_selected, max_selected;     // blocks per record
    double mass_total;                       // mean total mass of a record
    double mass_top[KS_TRACESTATS_TOP];      // mean share of the top-k blocks (NaN when no record has mass)

    uint32_t opt_capacity[KS_TRACESTATS_OPT]; // (layer, block) entries of L1
    double opt_hit[KS_TRACESTATS_OPT];        // OPT hit rate at that size (NaN without accesses)

    struct ks_tracestats_layer *layer; // [layers], owned
};

// Computes every statistic of t into *s (caller storage; release with
// ks_tracestats_fini). KS_OK, KS_ENOMEM, or KS_EINVAL when layers x
// max_blocks exceeds 2^32 (then *s holds nothing to free).
// Cost: O(selections log) time, O(max_blocks * layers + the largest
// request's selections) memory.
int ks_tracestats_compute(const struct ks_trace *t, struct ks_tracestats *s);

// Frees what ks_tracestats_compute allocated; s may be zeroed storage.
void ks_tracestats_fini(struct ks_tracestats *s);

// Belady's OPT on one access stream: keys[0 .. n) each below n_keys, an L1
// of `capacity` entries as defined above. Writes the hit count into *hits.
// KS_OK, KS_EINVAL (capacity 0 or a key out of range) or KS_ENOMEM.
int ks_tracestats_opt_hits(const uint32_t *keys, size_t n, uint32_t n_keys, uint32_t capacity, uint64_t *hits);

#endif
