// follow.h - the level of detail `detail.gpus`: the caches of a sample of
// GPUs are simulated in full; the other GPUs, the followers, follow them.
//
// A follower runs the same step driver (its queue, admission, prefill,
// decode steps and tokens; its lanes' batches over its own links, so that
// contention and stalls stay modelled) but draws no selections and reports
// no accesses. Each of its decode steps takes the shape of a decode step of
// a sampled GPU: what its selections read (KV bytes, the bytes and kernel
// seconds of attention, its flops), its migration batches (their tiers,
// blocks, bytes, the layer that waits for them, their order) and its reads
// outside L1 per layer. Its pointer table is rebuilt when its own L1
// changed (its requests' new and freed blocks, its evictions) or the shape
// promotes blocks into L1.
//
// The model, fitted online, is the empirical law of the sampled GPUs'
// recent steps: the last KS_FOLLOW_RING shapes published per key (the
// number of decoding requests, how many are at their first decode step,
// their age); a follower draws one with its own key (or the nearest
// published) and scales it to its own number of requests. Until steps both
// with and without young requests have been published (the run's first
// sampled steps: the first is all young), a follower steps in full detail:
// a follower's step after its first would otherwise take the only shape
// published, the sampled GPUs' first, their cold start, again.
//
// With detail.follow = "time" a follower takes only the step's time: no
// batch, no read outside L1, no traffic on any link; its step waits what
// the sampled step waited (its stall, and its layers' time besides their
// compute), scaled as the batches would be, beside its own compute. The
// sampled GPUs then publish each step once it ended, its waits known, and
// are whole nodes (scenario.c): a link they shared with a follower would
// carry fewer copies than at full detail, and their waits would shrink.
// In time, a follower's step before then (its first above all, the cold
// one: every request's selections are new, and a full step of it costs as
// much as many followed ones) does not run in full while sampled steps are
// under way: it waits for those to end and takes the nearest shape
// published, its own step ending when its scaled time has passed or, if the
// wait outlasted it, when the wait ended (the rest counted as stall). Where
// the load is the same everywhere, its requests and the sampled GPUs'
// started together, and the steps it waited for are of the same age. Where
// none was published yet and none is under way, it waits for the first (a
// run whose sampled GPUs end no decode step before its end fails, saying
// so): in time a follower never steps in full, and its cache manager is a
// tally (sim/cache/tally.c), counts of its requests' pages per tier with no
// block table.
//
// The follower's own cache manager still places its requests' blocks
// (admission and the L1 reserve's evictions stay its own) but sees no
// access: hit rates are the sampled GPUs', the cache's counts theirs scaled
// (sim/engine/engine.c). Simulator only.
#ifndef KS_FOLLOW_H
#define KS_FOLLOW_H

#include <stdint.h>

#include "cache.h"
#include "job.h"

#define KS_FOLLOW_RING 32   // shapes kept per key
#define KS_FOLLOW_EXACT 64  // numbers of decoding requests told apart one by one; above, by powers of two
#define KS_FOLLOW_BUCKETS (KS_FOLLOW_EXACT + 27)
// Steps are told apart by their requests' ages too: the requests at their
// first decode step (the young ones: a new request's first selections find
// its blocks elsewhere, its misses come in a burst), 0 to
// KS_FOLLOW_YOUNG_MAX (or more), and the mean tokens generated
// (ks_follow_age: one by one below KS_FOLLOW_AGE_EXACT, where L1 warms up
// step by step, then by powers of two up to 2^13).
#define KS_FOLLOW_YOUNG 1
#define KS_FOLLOW_YOUNG_MAX 3
#define KS_FOLLOW_AGE_EXACT 16
#define KS_FOLLOW_AGES (KS_FOLLOW_AGE_EXACT + 10)

// The age key of a step whose requests generated `mean` tokens on average.
static inline uint32_t ks_follow_age(uint64_t mean)
{
    if (mean < KS_FOLLOW_AGE_EXACT)
        return (uint32_t)mean;
    uint32_t age = KS_FOLLOW_AGE_EXACT + (63 - (uint32_t)__builtin_clzll(mean)) - 4; // 2^4 = KS_FOLLOW_AGE_EXACT
    return age < KS_FOLLOW_AGES ? age : KS_FOLLOW_AGES - 1;
}

// A batch of a sampled step, as its lanes saw it.
struct ks_follow_batch {
    uint64_t bytes;
    uint32_t n, most_per_req, group;
    uint32_t after;        // index of the batch it waits for in the shape (an earlier one), KS_NONE: none
    uint32_t layer, start; // as struct ks_step_job
    uint8_t src, dst, klass, early, needed;
};

// One decode step of a sampled GPU.
struct ks_follow_shape {
    uint32_t n_dec;   // decoding requests (each one's token)
    uint32_t n_young; // of them, young ones
    uint32_t age;     // their mean tokens generated, as ks_follow_age keys it
    double kv;        // KV bytes its selections read
    double hbm;       // of them, the bytes timed at HBM bandwidth (no kernel time)
    double attn;      // seconds of measured attention kernel
    double flops;     // attention flops of one query token of each request
    double stall;     // detail.follow = "time": seconds it waited for blocks
    double extra;     // detail.follow = "time": seconds its layers spent besides their compute
    uint8_t promotes; // a batch of it moves blocks into L1 (L1's mapping changes)
    struct ks_follow_batch *batch;
    uint32_t n_batch, cap_batch;
    uint32_t (*outside)[KS_TIERS]; // [groups] blocks read outside L1 per layer and tier
};

// The sampled GPUs' recent steps (one per run, shared by every GPU: SimGrid
// actors run one at a time).
struct ks_follow {
    uint32_t groups;
    struct ks_follow_ring {
        struct ks_follow_shape *shape; // [KS_FOLLOW_RING], allocated on first use
        uint32_t n, next;
    } ring[KS_FOLLOW_YOUNG_MAX + 1][KS_FOLLOW_AGES][KS_FOLLOW_BUCKETS];
    uint64_t published;       // steps
    uint64_t published_young; // of them, steps with a young request
    uint64_t begun, ended;    // detail.follow = "time": the sampled GPUs' decode steps begun and ended
};

// What one follower keeps between steps: its batches (valid until the step's
// end), their jobs, and the fractions its scaled counts carry.
struct ks_follow_out {
    struct ks_batch *batch;
    struct ks_step_job *job;
    uint32_t n, cap;
    uint32_t next_id;
    double carry_batch;
    double *carry_outside; // [groups][KS_TIERS]
};

// KS_OK or KS_ENOMEM.
int ks_follow_init(struct ks_follow *f, uint32_t groups);
void ks_follow_fini(struct ks_follow *f);

// A sampled GPU's step into the model: its numbers, its plan's jobs
// (jobs[i].b the plan's batches, in plan order) and outside[groups]. The
// shape it replaces in its ring is reused. KS_OK or KS_ENOMEM.
int ks_follow_publish(struct ks_follow *f, const struct ks_follow_shape *numbers, const struct ks_step_job *jobs,
                      uint32_t n_jobs, const uint32_t (*outside)[KS_TIERS]);

// Whether followers follow: steps both with and without young requests
// were published (before, a follower steps in full detail).
int ks_follow_ready(const struct ks_follow *f);

// A shape for a step of n_dec decoding requests (> 0), n_young of them
// young, of age `age`: one of the ring with as many young ones
// (KS_FOLLOW_YOUNG_MAX: as many or more), that age and that number of
// requests, chosen by `draw` (a well-spread number: the same draw, the same
// shape); where that ring is empty, the nearest one published: the nearest
// young count first, then age, then number of requests. NULL while none is
// published.
const struct ks_follow_shape *ks_follow_pick(const struct ks_follow *f, uint32_t n_dec, uint32_t n_young,
                                             uint32_t age, uint64_t draw);

// KS_OK or KS_ENOMEM.
int ks_follow_out_init(struct ks_follow_out *o, uint32_t groups);
void ks_follow_out_fini(struct ks_follow_out *o);

// The follower's jobs for a step `scale` times the shape's (its decoding
// requests over the shape's): the shape's batches, in order, as many as
// scale x n_batch rounded with the carry (after the last, they start over:
// a batch waits for its own round's). o->job[0..o->n) are valid until the
// next call. KS_OK or KS_ENOMEM.
int ks_follow_jobs(struct ks_follow_out *o, const struct ks_follow_shape *sh, double scale);

// The follower's reads outside L1 for the step into outside[groups]: the
// shape's, scaled and rounded with the carry per layer and tier.
void ks_follow_outside(struct ks_follow_out *o, const struct ks_follow_shape *sh, double scale, uint32_t groups,
                       uint32_t (*outside)[KS_TIERS]);

#endif
