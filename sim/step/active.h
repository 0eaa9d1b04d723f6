// active.h - the requests admitted to one GPU, from admission to their last
// token: prompt placement (shared prefixes included), prefill chunks, tokens
// with their latencies (TTFT, ITL, and at the end TPOT and E2EL), and their
// /requests records.
//
// The simulator's decode actors (sim/engine/engine.c) and the real runtime
// (kernels/runtime/runtime.c) each drive one set per GPU, so that a request lives the
// same life in both: `kvstrata validate` requires identical hit rates, steps
// and tokens, and gets them because this code is shared. A set keeps no
// clock; its callers pass times in seconds. Requests sit densely in a[0..n):
// finishing one moves the last into its slot, so a pointer into a[] is valid
// only until the next call that may finish or admit one.
#ifndef KS_ACTIVE_H
#define KS_ACTIVE_H

#include <stddef.h>
#include <stdint.h>

#include "cache.h"
#include "runresult.h"
#include "scenario.h"
#include "selection.h"
#include "workload.h"

#define KS_ACTIVE_PREFIX_GROUPS 64 // shared-prefix groups a set tracks; later groups share nothing

struct ks_active {
    uint32_t req;             // cache manager request id (KS_NONE while retracted)
    uint32_t ctx;             // tokens in its KV cache
    uint32_t generated;       // tokens produced
    uint32_t prompt;          // tokens its prefill computes: its prompt, or after a retraction its context
    uint32_t prefilled;       // of those, tokens whose KV exists (a cached prefix, chunks done)
    uint32_t steps;           // decode steps that produced its tokens (speculative: several a step)
    struct ks_selection_req *sr; // its selection state, owned by the set
    struct ks_request_spec spec;
    double admitted, first_token, last_token; // seconds
    double itl_max;                           // seconds: its longest gap between two tokens
    uint32_t sat_out;                         // decode steps it sat out while its cold region warmed up
    uint8_t sitting;                          // it sits the current decode step out: no token
    uint8_t resumed;                          // readmitted after a retraction: its prefill gives its next token
    uint8_t listed;                           // its next selection is (or would be) drawn ahead (step.c)
    uint8_t drawn;                            // listed, not to be deferred: handed to the worker that draws
                                              // ahead, when there is one (step.c)
    void *user;                               // the caller's per-request state; NULL until it sets it
};

// Whether a decodes in this iteration's step: it has its first token and
// is not recomputing its context after a retraction.
static inline int ks_active_decodes(const struct ks_active *a)
{
    return a->generated > 0 && !a->resumed;
}

// What the caller does at two points of a request's life. Either may be NULL.
struct ks_active_hooks {
    void *ctx;
    // Blocks [from, to) of every layer of cache request `req` were just
    // created and placed: give them their KV (the runtime writes real bytes;
    // the simulator has nothing to write). A status other than KS_OK, with
    // the reason in err, is returned by the set's call that created them.
    int (*fill)(void *ctx, uint32_t req, uint32_t from, uint32_t to, char *err, size_t len);
    // `a` (a copy: it has left the set) produced its last token and was
    // recorded; its cache request is released, its selection state is after
    // this returns.
    void (*finished)(void *ctx, struct ks_active *a);
};

struct ks_active_params {
    const struct ks_scenario *s; // borrowed, outlives the set
    struct ks_cache *cache;      // borrowed: the GPU's cache manager
    struct ks_selection *sparse;    // borrowed: opens each request's selection state
    struct ks_run_result *r;     // borrowed: counters, latency histograms, /requests
    uint32_t gpu;                // the GPU's index across the cluster (/requests)
    uint64_t admit_blocks;       // blocks (all groups, at full length) the admitted requests may hold
    uint32_t groups;             // the cache manager's groups (layers simulated: sizing.h)
    struct ks_active_hooks hooks;
};

struct ks_active_set {
    struct ks_active_params p;
    struct ks_active *a; // [n], capacity cap
    uint32_t n, cap;
    struct ks_active *out; // [n_out], capacity cap_out: retracted, oldest arrival first
    uint32_t n_out, cap_out;
    double ratio;          // scheduler.reserve = "estimate": SGLang's new_token_ratio now
    uint64_t tokens;       // output tokens its requests produced
    uint32_t prefix_req[KS_ACTIVE_PREFIX_GROUPS]; // cache request holding each group's prefix; KS_NONE: none yet
};

// The calls that may fail return a status with the reason in the caller's
// err (empty on entry: a hook's own reason is kept).

// Initialises an empty set in caller storage; *p is copied.
void ks_active_init(struct ks_active_set *set, const struct ks_active_params *p);
// Closes the selection state of the requests still in the set and frees its
// array; their cache requests are left to the cache's owner, their `user`
// state to the caller (release it first).
void ks_active_fini(struct ks_active_set *set);

// Admission reserves blocks for each admitted request (all groups), and
// admits while the reservations fit admit_blocks (always into an empty set).
// scheduler.reserve = "full": its prompt and whole output, so it never runs
// out of room. "estimate" (SGLang's scheduler, python/sglang/srt/managers:
// schedule_policy.py, scheduler.py, schedule_batch.py): its context plus
// new_token_ratio x min(output left, reserve_clip) tokens, the ratio starting
// at scheduler.new_token_ratio (SGLANG_INIT_NEW_TOKEN_RATIO, 0.7) and falling
// by (initial - minimum) / 600 each decode step to a minimum of 0.14 x the
// initial (SGLANG_MIN_NEW_TOKEN_RATIO_FACTOR, SGLANG_NEW_TOKEN_RATIO_DECAY_STEPS);
// back to the initial value whenever the set empties. Outputs then outgrow
// their reservations: ks_active_make_room retracts requests before a step
// that would not fit.
//
// Admits the request if its reservation fits (always when the set is
// empty): places its prompt in `tier` (lower tiers when that is
// full), a shared prefix from its group's request, and opens its selection
// state. KS_OK with *out the new request (counted as admitted), or with *out
// NULL when it must wait (it does not fit, or the tiers are full while other
// requests hold them: they free room as they finish). Any other status is a
// failure ("placing a prompt in an empty GPU: ...", ...); nothing of the
// request is kept.
int ks_active_admit(struct ks_active_set *set, const struct ks_request_spec *sp, double now, unsigned tier,
                    struct ks_active **out, char *err, size_t len);

// Blocks (all groups) the admitted requests reserve now.
uint64_t ks_active_reserved(const struct ks_active_set *set);

// Readmits the oldest retracted request if its reservation fits (as
// ks_active_admit): its context (prompt and tokens generated) is placed anew
// in L1 and recomputed by its prefill (ks_active_prefill_chunk, ...), whose
// end gives its next token (ks_active_emit with from_prefill); it keeps its
// selection state, latencies and output. *out as ks_active_admit's, NULL
// also when none is retracted.
int ks_active_resume(struct ks_active_set *set, struct ks_active **out, char *err, size_t len);

// Before a decode step, with scheduler.reserve = "estimate": when the
// blocks the decoding requests hold and open in this step exceed
// admit_blocks, retracts decoding requests (fewest tokens generated first,
// then the longest prompt; never the last one) until 20 more tokens of each
// that is left fit (SGLang's retract_decode_steps), frees their blocks, and
// sets the ratio to (tokens generated + 20 x requests) / (outputs + 1) of
// those left, at most 1; otherwise the ratio decays one step. Retracted
// requests wait in `out`, ahead of any queued request (FCFS: they came
// first). KS_OK or KS_ENOMEM; nothing to do with "full".
int ks_active_make_room(struct ks_active_set *set);

// This iteration's prefill work: up to prefill.chunk tokens of the
// requests' prompts (a resumed request's: its context; 0: no limit), oldest
// admission first. Returns the sum of cost(s, tokens, tokens
// already prefilled) over the chunks taken; 0 when cost is NULL. *tokens
// (may be NULL) gets the tokens taken.
double ks_active_prefill_chunk(struct ks_active_set *set,
                               double (*cost)(const struct ks_scenario *s, double tokens, double done),
                               uint32_t *tokens);

// As ks_active_prefill_chunk with `budget` prompt tokens (UINT32_MAX: no
// limit) instead of prefill.chunk; *tokens (may be NULL) gets those taken.
double ks_active_prefill_budget(struct ks_active_set *set, uint32_t budget,
                                double (*cost)(const struct ks_scenario *s, double tokens, double done),
                                uint32_t *tokens);

// How many requests decode a token this iteration (ks_active_decodes).
uint32_t ks_active_decoding_count(const struct ks_active_set *set);

// A token at `now` for every request whose prefill is complete and which
// came from a prefill (from_prefill: its first token, or a resumed
// request's next) or from the decode step (!from_prefill): its TTFT
// (ks_active_first_token) or the gap since its last token (ITL) is recorded, its context grows by one token (a new block of every
// layer when it fills one: in L1, or counted as unplanned when no tier has
// room), and a request with all its output finishes. With speculative
// decoding a decode step's tokens are ks_active_kept's, arriving together:
// one ITL gap for all of them. KS_OK, or the fill
// hook's status.
int ks_active_emit(struct ks_active_set *set, double now, int from_prefill, char *err, size_t len);

// Tokens a keeps at its next decode step: 1, or with speculative decoding
// floor((n + 1) a) - floor(n a) at its step n (a = speculative.accept_length,
// exactly in thousandths), at most the output it has left.
uint32_t ks_active_kept(const struct ks_active_set *set, const struct ks_active *a);

// a's first token came at `at`: its TTFT is recorded and its prompt counted.
void ks_active_first_token(struct ks_active_set *set, struct ks_active *a, double at);

// Grows a's blocks to hold its ctx tokens (see ks_active_emit). KS_OK, or
// the fill hook's status.
int ks_active_grow(struct ks_active_set *set, struct ks_active *a, char *err, size_t len);

// Finishes request i: records it (its TPOT and end-to-end latency join the
// histograms; it counts as good when it meets every per-request objective
// set: slo.ttft, slo.tpot, slo.e2el), takes it out of the set (the last
// request moves into slot i) and releases its cache request, then runs the
// finished hook (a request the hook releases finds the GPU without it) and
// releases its selection state.
void ks_active_finish(struct ks_active_set *set, uint32_t i);

// The run ended: records every request still in the set (retracted ones
// included) as unfinished.
void ks_active_record_rest(struct ks_active_set *set);

#endif
