// accessmodel.h - a statistical access model fitted to a trace, generating selections cheaply.
//
// Where replaying a trace is too rigid (other context lengths, more requests,
// longer runs) and scoring every block is too slow, the simulator draws each
// (request, layer, step) selection from this model: it costs O(selected
// blocks) per step (a few random draws per block, O(log horizon) each; the
// state stays ordered from step to step, and only a step's entering blocks
// are put in order, by radix when many), never a scan of the context. The
// scenario names it as
// sparse = {policy = "model", fit = "TRACE.h5"}; the model is refitted from
// the trace at load (ks_accessmodel_fit, after sparse.c has checked the
// trace's block size against the run's), which takes a fraction of a
// second per million selections, so nothing else is stored.
//
// The model, per layer (every parameter fitted from that layer's records):
// - Always-selected edges: the first n_sink blocks and the last n_window
//   blocks of the context, counted outwards while each position is selected
//   in more than `always` of the records that have it (sinks at the start,
//   the recent window at the end). The blocks between are the *free range*.
// - Free count m: per step, drawn from the empirical distribution of the
//   free-range selection count over unsaturated records (records that left
//   some free block out); capped at the free range (every record saturated:
//   all of it). Its uniform is not the stream's next draw but a hash of the
//   stream's seed and the step (u = the top 53 bits of ks_rng_mix(key +
//   (step + 1) * KS_ACCESSMODEL_COUNT_STRIDE) / 2^53, key =
//   ks_rng_mix(seed + KS_ACCESSMODEL_COUNT_SALT)), so that a step's size is
//   known before its draws (ks_accessmodel_count).
// - Stay: each block of the previous selection that lies in the free range
//   stays with a probability fitted per age bucket, age = consecutive steps
//   it has been selected (bucket 0: 1, bucket k: 2^(k-1) < age <= 2^k, the
//   last one open). When more than m stay, m of them are kept at random.
// - Entering blocks, until m: with probability gap[k] a *return* whose
//   reuse distance d lies in bucket k (2^(k-1) < d <= 2^k, d <= horizon):
//   a block drawn uniformly from those the stream last selected d steps ago
//   and not since (with probability return_adjacent, one next to a block
//   selected now or at the previous step when a few draws find one);
//   otherwise a *far* block (never selected, or not within horizon steps):
//   adjacent (+-1) to a block of the previous or current selection with
//   probability far_adjacent, within +-near of one with probability
//   far_near, else uniform over the free range. The gap shares are those of
//   the trace's entering selections, fitted per step class (steps 0, 1, 2,
//   3-4, 5-8, ...: a step cannot return from further back than the trace's
//   start, so early steps have other shares; steps past the trace use the
//   last class), so the stream reproduces the trace's reuse distances up to
//   the horizon and with them its reuse fractions R(W) (tracestats.h) at
//   the bucket edges W = 1, 4, 16, 256. A draw that finds no candidate is
//   redrawn, within 4 (m - stays) + 16 draws; a step those leave short of m
//   (about one in 10^5) takes the rest from a uniform block of the free range
//   onwards (wrapping): the first blocks it has not selected.
// - Mass: sink i gets the trace's mean mass of sink i, window offset j
//   (0 = the last block) the mean of offset j, and the free blocks, ranked
//   by age (longest-selected first), the trace's mean mass at that rank of
//   the free masses sorted in decreasing order.
//
// Fidelity: R(W) within 5% relative of the source's (tested on synthetic
// traces, tests/workload/test_accessmodel.c, which measures 0.8% at most); on traces
// the kernels recorded (README.md, Traces) R(1), R(4), R(16) within 0.4%
// (stable) to 1.2% (noisy) over model seeds 1-8, though another noisy
// trace gave 2.5%;
// blocks a step, total mass and the working set over 16 steps within a
// few percent; the sequential-neighbour probability lower (runs of blocks
// are only partly kept: 0.37 against 0.50 on "drifting") and the top-1
// mass share lower (means by rank flatten each step's peak).
//
// Stream state: the previous selection's free picks, by block and by rank;
// per block of the context its last selected step and its age or slot
// index (8 bytes a block, an eighth of headroom); the return candidates of
// the last horizon steps (at most one per block, in one array that doubles
// only when they fill half of it); and the slots' bounds and Fenwick tree
// (12 bytes a step of the horizon).
#ifndef KS_ACCESSMODEL_H
#define KS_ACCESSMODEL_H

#include <stddef.h>
#include <stdint.h>

#include "trace.h"

// The free counts' hash (the model, below): its salt and stride.
#define KS_ACCESSMODEL_COUNT_SALT UINT64_C(0xd1b54a32d192ed03)
#define KS_ACCESSMODEL_COUNT_STRIDE UINT64_C(0x9e3779b97f4a7c15)
// A count guide's flag: its bucket's count is known without the cdf (accessmodel.c).
#define KS_ACCESSMODEL_GUIDE_ONLY (UINT32_C(1) << 31)

enum {
    KS_ACCESSMODEL_AGES = 12,    // stay-probability age buckets
    KS_ACCESSMODEL_GAPS = 33,    // reuse-distance buckets (as in tracestats.h)
};

struct ks_accessmodel_params {
    double always;     // fraction of records: an edge block selected in more of them is always selected (0.95)
    uint32_t max_edge; // blocks: the most sinks, and the most window blocks, detected (64)
    uint32_t horizon;  // steps: the longest reuse distance a return reproduces (512)
    uint32_t near;     // blocks: reach of a "near" far block (16)
};

void ks_accessmodel_params_default(struct ks_accessmodel_params *p);

// What was fitted for one layer (read-only; for reports and tests).
struct ks_accessmodel_layer {
    uint32_t n_sink, n_window;            // blocks always selected at the start and at the end
    double stay[KS_ACCESSMODEL_AGES];     // probability a free-range block of the previous step stays, by age bucket
    uint64_t stay_trials[KS_ACCESSMODEL_AGES]; // trials behind each (0: the layer's overall rate is used)
    double gap[KS_ACCESSMODEL_GAPS];      // of entering blocks: share that returns from reuse-distance bucket k
    double far;                           // of entering blocks: share that is far (1 - sum of gap)
    double far_adjacent, far_near;        // of far blocks: adjacent, near (the rest: uniform)
    double return_adjacent;               // of returns: share adjacent to a block selected now or just before
    uint32_t n_classes;                   // step classes: 0 is step 0, c >= 1 holds 2^(c-1) < step <= 2^c
    double *class_gap;                    // [n_classes][KS_ACCESSMODEL_GAPS] gap shares at the steps of a
                                          // class (the generator's; later steps use the last class)
    uint32_t max_free;                    // largest free count drawn
    double *count_cdf;                    // [max_free + 1] P(m <= i); NULL: select the whole free range
    uint32_t guide_bits;                  // count_guide has 2^guide_bits entries
    uint32_t *count_guide;                // [2^guide_bits] where a uniform's quantile search starts (accessmodel.c)
    float *mass_sink;                     // [n_sink] mean mass of sink i
    float *mass_window;                   // [n_window] mean mass of window offset j (0 = last block)
    float *mass_free;                     // [n_mass_free] mean mass of the free block of rank i
    uint32_t n_mass_free;
};

struct ks_accessmodel;

// Fits a model to every layer of t (p NULL: defaults). NULL with the reason
// in err (a parameter out of range, a trace without records, out of
// memory). t is not kept. Free with ks_accessmodel_free (NULL is a no-op).
struct ks_accessmodel *ks_accessmodel_fit(const struct ks_trace *t, const struct ks_accessmodel_params *p, char *err,
                                          size_t len);

void ks_accessmodel_free(struct ks_accessmodel *m);

uint32_t ks_accessmodel_layers(const struct ks_accessmodel *m);
const struct ks_accessmodel_layer *ks_accessmodel_layer(const struct ks_accessmodel *m, uint32_t layer);

// Whether every step of `layer` in a context of context_blocks blocks
// selects its last block (a sink, or in the window); 0 also when layer is
// out of range or the context empty.
int ks_accessmodel_selects_last(const struct ks_accessmodel *m, uint32_t layer, uint32_t context_blocks);

// The most blocks one step of `layer` can select in a context of
// context_blocks blocks: the size of the out arrays ks_accessmodel_next needs.
uint32_t ks_accessmodel_max_selected(const struct ks_accessmodel *m, uint32_t layer, uint32_t context_blocks);

// ---- generation --------------------------------------------------------------

struct ks_accessmodel_stream;

// A generator for one (request, layer) from step 0, deterministic from seed.
// m is borrowed and must outlive the stream. NULL when layer is out of range
// or memory runs out. Free with ks_accessmodel_stream_free (NULL: no-op).
struct ks_accessmodel_stream *ks_accessmodel_stream_new(const struct ks_accessmodel *m, uint32_t layer, uint64_t seed);
void ks_accessmodel_stream_free(struct ks_accessmodel_stream *s);

// The next step's selection for a context of context_blocks blocks (never
// fewer than the previous step's): its blocks, ascending and distinct, in
// out_blocks[0 .. n) with their masses in out_mass. Returns n >= 0, or
// KS_EINVAL (the context shrank, or cap is below ks_accessmodel_max_selected
// for this context; the stream is unchanged) or KS_ENOMEM (the stream is
// then only good for ks_accessmodel_stream_free).
int ks_accessmodel_next(const struct ks_accessmodel *m, struct ks_accessmodel_stream *s, uint32_t context_blocks,
                        uint32_t *out_blocks, float *out_mass, uint32_t cap);

// The number of blocks step `step` of the stream of `layer` seeded with
// `seed` selects in a context of context_blocks blocks, known before the
// step's draws and without the stream (its free count is hashed, and every
// step reaches it): ks_accessmodel_next returns it for that step. step may
// lie ahead of the stream's next (a caller that defers its draws,
// ks_accessmodel_stream_step), or the stream not be made yet. 0 when layer
// is out of range.
uint32_t ks_accessmodel_count(const struct ks_accessmodel *m, uint32_t layer, uint64_t seed, uint32_t step,
                              uint32_t context_blocks);

// The step the stream generates next (the steps generated so far).
uint32_t ks_accessmodel_stream_step(const struct ks_accessmodel_stream *s);

// Fetches into the CPU's cache what the stream's next step reads first, so
// that a caller drawing many streams in turn can overlap one stream's memory
// misses with another's work (changes nothing else). Stage 0: the stream's
// own fields; 1: its lists of the last step's picks, its return candidates
// and their slots' counts and tree (the draws' random reads land there);
// 2: the entries of the last step's picks, sinks and window.
// Each stage reads what the one before fetched: call them one draw apart.
void ks_accessmodel_stream_warm(const struct ks_accessmodel_stream *s, int stage);

// Checks a stream's invariants (for tests; O(context + horizon)): the
// return candidates are exactly the blocks last selected within the horizon
// and not at the last step generated, each once, in the slot of its step at
// the index it keeps; the slots' sizes, their Fenwick tree and their places
// in the shared array agree; the last step's free picks are its selected
// free-range blocks, in block order and in rank order. *candidates (may be
// NULL) receives how many candidates there are. KS_OK, or KS_ECORRUPT with
// the first broken invariant in msg.
int ks_accessmodel_stream_check(const struct ks_accessmodel_stream *s, uint32_t *candidates, char *msg, size_t len);

// Bytes a stream holds (its allocations' sizes as requested).
size_t ks_accessmodel_stream_bytes(const struct ks_accessmodel_stream *s);

// Writes a trace shaped like `shape` (its meta, requests, steps and
// contexts) with every selection drawn from m: stream (r, l) is seeded from
// seed, r and l. For checking a fit: `trace stats` of the result against
// the source. KS_OK, or KS_EINVAL / KS_EIO / KS_ENOMEM with the reason in err.
int ks_accessmodel_write(const struct ks_accessmodel *m, const struct ks_trace *shape, uint64_t seed, const char *path,
                         char *err, size_t len);

#endif
