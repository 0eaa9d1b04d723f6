// cachebench.c - the cache manager's speed and memory on a synthetic access
// stream (see cachebench.h).
//
// NOTE: the manager demotes only into free pages (it never swaps two blocks),
// so the tiers together need some free pages for misses to be served.
//
// The stream is generated whole before the clock starts, from the project
// RNG seeded with the params' seed:
//   - T = 16 topic centres, uniform over [0, N). Each step, with probability
//     1/64, one centre jumps to a uniform block (the working set drifts).
//   - K slots, each holding a block. Each step a slot keeps its block with
//     probability 0.9 (temporal locality); otherwise it redraws: with
//     probability 0.7 a block near a random centre (offset uniform in
//     [-64, 64], clamped to [0, N)), else a uniform block (long-range
//     retrieval).
//   - A step's accesses are the distinct blocks of its slots (a selection is
//     a set, so a step may have fewer than K), with random positive
//     attention masses normalised to sum 1.
//   - For belady, each access carries its next-use step, found by a backward
//     scan over the stream.
// Every status is checked; the first failure ends the run.
#include "cachebench.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "rng.h"
#include "status.h"

enum {
    TOPICS = 16,          // topic centres
    NEAR = 64,            // a near draw lands within this many blocks of a centre
    BLOCK_BYTES = 131072, // bytes per block, every tier
    CHECK_EVERY = 1000,   // steps between invariant checks when checking
    PROGRESS_EVERY = 64,  // steps between progress calls
};
#define P_DRIFT (1.0 / 64) // per step: one centre jumps
#define P_KEEP 0.9         // per slot and step: the slot keeps its block
#define P_NEAR 0.7         // per redraw: near a centre rather than uniform

struct stream {
    struct ks_access *acc; // [off[steps]] every step's accesses, one after another
    size_t *off;           // [steps + 1] first access of each step
    uint32_t steps;
};

static void stream_free(struct stream *s)
{
    free(s->acc);
    free(s->off);
}

// Generates the stream described at the top of the file. 0, or -1 when
// memory runs out.
static int stream_make(struct stream *s, const struct ks_cachebench_params *o)
{
    const uint32_t N = o->blocks, K = o->topk;
    struct ks_rng rng;
    ks_rng_seed(&rng, o->seed);
    memset(s, 0, sizeof *s);
    if ((size_t)o->steps > SIZE_MAX / sizeof *s->acc / K)
        return -1;
    s->steps = o->steps;
    s->off = malloc(((size_t)o->steps + 1) * sizeof *s->off);
    s->acc = malloc((size_t)o->steps * K * sizeof *s->acc);
    uint32_t *slot = malloc((size_t)K * sizeof *slot);
    uint32_t *seen = calloc(N, sizeof *seen); // step + 1 of the block's last pick
    if (!s->off || !s->acc || !slot || !seen) {
        free(slot);
        free(seen);
        stream_free(s);
        return -1;
    }
    uint32_t centre[TOPICS];
    for (int t = 0; t < TOPICS; t++)
        centre[t] = ks_rng_below(&rng, N);
    size_t n = 0;
    for (uint32_t step = 0; step < o->steps; step++) {
        if (ks_rng_unit(&rng) < P_DRIFT)
            centre[ks_rng_below(&rng, TOPICS)] = ks_rng_below(&rng, N);
        s->off[step] = n;
        double total = 0;
        for (uint32_t k = 0; k < K; k++) {
            if (step == 0 || ks_rng_unit(&rng) >= P_KEEP) { // step 0: every slot is empty
                if (ks_rng_unit(&rng) < P_NEAR) {
                    int64_t b = (int64_t)centre[ks_rng_below(&rng, TOPICS)] + (int64_t)ks_rng_below(&rng, 2 * NEAR + 1) - NEAR;
                    slot[k] = (uint32_t)(b < 0 ? 0 : b >= N ? N - 1 : b);
                } else {
                    slot[k] = ks_rng_below(&rng, N);
                }
            }
            if (seen[slot[k]] == step + 1)
                continue;
            seen[slot[k]] = step + 1;
            float mass = (float)(1.0 - ks_rng_unit(&rng)); // (0, 1]: strictly positive
            s->acc[n++] = (struct ks_access){.block = slot[k], .mass = mass, .next = KS_NONE};
            total += mass;
        }
        for (size_t i = s->off[step]; i < n; i++)
            s->acc[i].mass = (float)(s->acc[i].mass / total);
    }
    s->off[o->steps] = n;
    free(slot);
    free(seen);
    return 0;
}

// Fills every access's next-use step for belady: a backward scan with the
// step each block is next seen at. Leaves in *first each block's first use
// (KS_NONE if never), for the caller to free. 0, or -1 when memory runs out.
static int stream_next_use(struct stream *s, uint32_t blocks, uint32_t **first)
{
    uint32_t *next = malloc((size_t)blocks * sizeof *next);
    *first = next;
    if (!next)
        return -1;
    memset(next, 0xff, (size_t)blocks * sizeof *next); // KS_NONE: not seen again
    for (uint32_t step = s->steps; step-- > 0;)
        for (size_t i = s->off[step]; i < s->off[step + 1]; i++) {
            s->acc[i].next = next[s->acc[i].block];
            next[s->acc[i].block] = step; // a block appears once per step
        }
    return 0;
}

static int check(const struct ks_cache *c, uint32_t step, char *err, size_t len)
{
    char msg[512];
    if (ks_cache_check(c, msg, sizeof msg) == KS_OK)
        return KS_OK;
    snprintf(err, len, "invariant check after step %" PRIu32 ": %s", step, msg);
    return KS_ECORRUPT;
}

// Runs the timed loop. KS_OK, or a status with the reason in err.
static int drive(struct ks_cache *c, uint32_t req, const struct stream *s, const struct ks_cachebench_params *p,
                 double *wall, char *err, size_t len)
{
    struct ks_plan plan;
    int st;
#define CALL(what, expr)                                                                              \
    do {                                                                                              \
        if ((st = (expr)) != KS_OK) {                                                                 \
            snprintf(err, len, "%s at step %" PRIu32 ": %s", what, step, ks_status_str(st));          \
            return st;                                                                                \
        }                                                                                             \
    } while (0)
    double t0 = ks_clock_mono();
    if (p->progress)
        p->progress(p->ud, 0, s->steps, 0);
    for (uint32_t step = 0; step < s->steps; step++) {
        CALL("ks_cache_step", ks_cache_step(c, step));
        size_t a = s->off[step];
        CALL("ks_cache_access", ks_cache_access(c, req, 0, s->acc + a, (uint32_t)(s->off[step + 1] - a), NULL, NULL));
        CALL("ks_cache_plan", ks_cache_plan(c, UINT64_MAX, &plan));
        for (uint32_t b = 0; b < plan.n; b++)
            CALL("ks_cache_confirm", ks_cache_confirm(c, plan.batch[b]));
        if (p->check && (step + 1) % CHECK_EVERY == 0 && (st = check(c, step, err, len)) != KS_OK)
            return st;
        if (p->progress && step % PROGRESS_EVERY == 0)
            p->progress(p->ud, step, s->steps, ks_clock_mono() - t0);
    }
#undef CALL
    *wall = ks_clock_mono() - t0;
    if (p->check)
        return check(c, s->steps - 1, err, len);
    return KS_OK;
}

void ks_cachebench_pages(const struct ks_cachebench_params *p, double pages[KS_TIERS])
{
    pages[KS_L1] = round(p->l1 * p->blocks);
    pages[KS_L2] = round(p->l2 * p->blocks);
    pages[KS_L3] = round(p->l3 * p->blocks);
}

// The manager's parameters for the benchmark, b's Lua policy loaded when
// asked for. KS_OK, or a status with the reason in err.
static int cache_params(struct ks_cachebench *b, const struct ks_cachebench_params *o, struct ks_cache_params *p,
                        char *err, size_t len)
{
    double pages[KS_TIERS];
    ks_cachebench_pages(o, pages);
    ks_cache_params_default(p);
    p->n_blocks = o->blocks;
    for (int t = 0; t < KS_TIERS; t++) {
        p->tier_blocks[t] = (uint32_t)pages[t];
        p->block_bytes[t] = BLOCK_BYTES;
    }
    p->evict_samples = o->samples;
    p->prefetch_window = o->window;
    p->evict = o->evict;
    if (o->lua) {
        char *lerr = b->lua_err;
        int st = ks_luapolicy_init(&b->lua, o->lua, "evict", NULL, lerr, sizeof b->lua_err);
        if (st != KS_OK) {
            snprintf(err, len, "%s", lerr);
            return st;
        }
        p->evict = KS_EVICT_CALLBACK;
        p->evict_fn = ks_luapolicy_evict;
        p->evict_ud = &b->lua;
    }
    p->seed = o->seed ^ UINT64_C(0x9e3779b97f4a7c15); // not the stream's sequence
    return KS_OK;
}

// Creates the request's blocks in c (belady is told each block's first use,
// first may be NULL). KS_OK, or a status with the reason in err.
static int fill(struct ks_cache *c, uint32_t blocks, const uint32_t *first, uint32_t *req, char *err, size_t len)
{
    uint32_t placed[KS_TIERS] = {0};
    int st = ks_cache_req_new(c, req);
    if (st == KS_OK)
        st = ks_cache_req_grow(c, *req, blocks, KS_L1, placed);
    for (uint32_t b = 0; first && st == KS_OK && b < blocks; b++) // belady knows the future from step 0
        st = ks_cache_set_next_use(c, *req, 0, b, first[b]);
    if (st != KS_OK)
        snprintf(err, len, "creating the %" PRIu32 " blocks: %s", blocks, ks_status_str(st));
    return st;
}

int ks_cachebench_run(struct ks_cachebench *b, const struct ks_cachebench_params *o, char *err, size_t len)
{
    memset(b, 0, sizeof *b);
    struct ks_cache_params p;
    int st = cache_params(b, o, &p, err, len);
    if (st != KS_OK)
        return st;
    struct stream s;
    if (stream_make(&s, o) != 0) {
        snprintf(err, len, "out of memory for a stream of %" PRIu32 " x %" PRIu32 " accesses", o->steps, o->topk);
        return KS_ENOMEM;
    }
    uint32_t *first = NULL;
    if (p.evict == KS_EVICT_BELADY && stream_next_use(&s, o->blocks, &first) != 0) {
        stream_free(&s);
        snprintf(err, len, "out of memory");
        return KS_ENOMEM;
    }
    char cerr[256];
    if (!(b->cache = ks_cache_new(&p, cerr, sizeof cerr))) {
        stream_free(&s);
        snprintf(err, len, "ks_cache_new: %s", cerr);
        return KS_EINVAL;
    }
    uint32_t req;
    st = fill(b->cache, o->blocks, first, &req, err, len);
    free(first);
    if (st == KS_OK)
        st = drive(b->cache, req, &s, o, &b->wall, err, len);
    b->accesses = s.off[s.steps];
    stream_free(&s);
    if (st == KS_OK && ks_cache_stats(b->cache)->accesses != b->accesses) {
        snprintf(err, len, "the manager counted %" PRIu64 " accesses, the stream has %" PRIu64,
                 ks_cache_stats(b->cache)->accesses, b->accesses);
        st = KS_ECORRUPT;
    }
    if (st == KS_OK && b->lua.failed) {
        snprintf(err, len, "%s: evict: %s", o->lua, b->lua.err);
        st = KS_EINVAL;
    }
    return st;
}

void ks_cachebench_fini(struct ks_cachebench *b)
{
    ks_cache_free(b->cache);
    ks_luapolicy_fini(&b->lua);
    b->cache = NULL;
}
