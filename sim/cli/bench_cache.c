// bench_cache.c - `kvstrata bench cache`: one cache manager driven by a
// synthetic access stream, timed, its memory and statistics reported.
//
// Setup: one request with one layer group of N blocks, created with
// ks_cache_req_grow into L1, then L2, then L3. The tiers hold round(l1 * N),
// round(l2 * N) and round(l3 * N) pages (defaults 1/16, 1/4 and 1: like an
// SSD, L3 could hold the whole context). All tiers use 131072-byte blocks.
// NOTE: the manager demotes only into free pages (it never swaps two blocks),
// so the tiers together need some free pages for misses to be served.
//
// The stream is generated whole before the clock starts, from the project
// RNG seeded with --seed, so that the timed loop is the manager alone:
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
// Each timed step is ks_cache_step, one ks_cache_access, ks_cache_plan with
// an unlimited budget, and ks_cache_confirm of every batch in plan order.
// Every status is checked; a failure ends the run with exit status 1.
#define _POSIX_C_SOURCE 200809L // isatty

#include "bench_cache.h"

#include <inttypes.h>
#include <stdint.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cache.h"
#include "clock.h"
#include "json.h"
#include "luapolicy.h"
#include "rng.h"

enum {
    TOPICS = 16,          // topic centres
    NEAR = 64,            // a near draw lands within this many blocks of a centre
    BLOCK_BYTES = 131072, // bytes per block, every tier
    CHECK_EVERY = 1000,   // steps between invariant checks under --check
    PROGRESS_EVERY = 64,  // steps between looks at the clock for the progress line
};
#define P_DRIFT (1.0 / 64) // per step: one centre jumps
#define P_KEEP 0.9         // per slot and step: the slot keeps its block
#define P_NEAR 0.7         // per redraw: near a centre rather than uniform

static const char *const policy_names[] = {"heat", "lru", "lfu", "belady", NULL};
static const enum ks_evict_policy policy_of[] = {KS_EVICT_HEAT, KS_EVICT_LRU, KS_EVICT_LFU, KS_EVICT_BELADY};

struct settings {
    uint32_t blocks, topk, steps, samples, window;
    uint64_t seed;
    double l1, l2, l3; // tier sizes, fractions of the blocks
    int policy;    // index into policy_names
    int check, json;
    const char *lua; // a Lua file whose table's `evict` function replaces the policy
};

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
static int stream_make(struct stream *s, const struct settings *o)
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

struct progress {
    int on;
    double start, shown;
};

static void progress_show(struct progress *p, uint32_t done, uint32_t total)
{
    double t = ks_clock_mono();
    if (t - p->shown < 0.25)
        return;
    p->shown = t;
    fprintf(stderr, "\rbench cache: %3.0f%%  %.0f steps/s ", 100.0 * done / total,
            t > p->start ? done / (t - p->start) : 0.0);
    fflush(stderr);
}

static void progress_clear(struct progress *p)
{
    if (p->on)
        fputs("\r\033[K", stderr);
}

static int check(const struct ks_cli_cmd *cmd, const struct ks_cache *c, uint32_t step)
{
    char msg[512];
    if (ks_cache_check(c, msg, sizeof msg) == KS_OK)
        return 0;
    return ks_cli_fail(cmd, "invariant check after step %" PRIu32 ": %s", step, msg);
}

// Runs the timed loop. 0, or an exit status after a message.
static int drive(const struct ks_cli_cmd *cmd, struct ks_cache *c, uint32_t req, const struct stream *s,
                 int check_on, double *wall)
{
    struct progress prog = {.on = isatty(STDERR_FILENO)};
    struct ks_plan plan;
    int st;
#define CALL(what, expr)                                                                              \
    do {                                                                                              \
        if ((st = (expr)) != KS_OK) {                                                                 \
            progress_clear(&prog);                                                                    \
            return ks_cli_fail(cmd, "%s at step %" PRIu32 ": %s", what, step, ks_status_str(st));     \
        }                                                                                             \
    } while (0)
    double t0 = ks_clock_mono();
    prog.start = prog.shown = t0;
    for (uint32_t step = 0; step < s->steps; step++) {
        CALL("ks_cache_step", ks_cache_step(c, step));
        size_t a = s->off[step];
        CALL("ks_cache_access", ks_cache_access(c, req, 0, s->acc + a, (uint32_t)(s->off[step + 1] - a), NULL, NULL));
        CALL("ks_cache_plan", ks_cache_plan(c, UINT64_MAX, &plan));
        for (uint32_t b = 0; b < plan.n; b++)
            CALL("ks_cache_confirm", ks_cache_confirm(c, plan.batch[b]));
        if (check_on && (step + 1) % CHECK_EVERY == 0 && check(cmd, c, step) != 0) {
            progress_clear(&prog);
            return KS_EXIT_FAIL;
        }
        if (prog.on && step % PROGRESS_EVERY == 0)
            progress_show(&prog, step, s->steps);
    }
#undef CALL
    *wall = ks_clock_mono() - t0;
    progress_clear(&prog);
    if (check_on && check(cmd, c, s->steps - 1) != 0)
        return KS_EXIT_FAIL;
    return 0;
}

struct gather {
    json_t *fig, *notes;
    int err;
};

static void add_stat(void *ud, const char *name, const char *desc, double value)
{
    struct gather *g = ud;
    if (json_object_get(g->fig, name)) // already reported above
        return;
    g->err |= ks_json_set_num(g->fig, name, value);
    g->err |= ks_json_set_str(g->notes, name, desc);
}

static int report(const struct ks_cli_cmd *cmd, const struct settings *o, const struct ks_cache *c,
                  uint64_t accesses, double wall)
{
    struct gather g = {json_object(), json_object(), 0};
    if (!g.fig || !g.notes) {
        json_decref(g.fig);
        json_decref(g.notes);
        return ks_cli_fail(cmd, "out of memory");
    }
    const struct ks_cache_stats *st = ks_cache_stats(c);
    double hit = st->accesses ? (double)st->found[KS_L1] / (double)st->accesses : 0.0;
#define FIG(setter, key, value, note) \
    (g.err |= setter(g.fig, key, value), g.err |= ks_json_set_str(g.notes, key, note))
    FIG(ks_json_set_int, "blocks", o->blocks, "blocks in the request");
    FIG(ks_json_set_int, "topk", o->topk, "attention slots per step (top-k)");
    FIG(ks_json_set_int, "steps", o->steps, "decode steps");
    FIG(ks_json_set_str, "policy", o->lua ? "lua" : policy_names[o->policy], "eviction policy");
    FIG(ks_json_set_int, "samples", o->samples, "blocks sampled per victim (0 = exact scan)");
    FIG(ks_json_set_int, "window", o->window, "prefetch window, blocks");
    FIG(ks_json_set_real, "l1", o->l1, "L1 pages / blocks");
    FIG(ks_json_set_real, "l2", o->l2, "L2 pages / blocks");
    FIG(ks_json_set_real, "l3", o->l3, "L3 pages / blocks");
    FIG(ks_json_set_int, "seed", (int64_t)o->seed, "stream and sampling seed");
    FIG(ks_json_set_int, "accesses", (int64_t)accesses, "block accesses in the stream");
    FIG(ks_json_set_real, "wall_s", wall, "seconds in the timed step loop");
    FIG(ks_json_set_real, "accesses_per_s", wall > 0 ? (double)accesses / wall : 0.0,
        "block accesses handled per wall second");
    FIG(ks_json_set_real, "bytes_per_block", (double)ks_cache_bytes(c) / o->blocks,
        "manager memory after the run / blocks");
    FIG(ks_json_set_real, "hit_rate_l1", hit, "fraction of accesses that found the block in L1");
#undef FIG
    ks_cache_stats_visit(c, add_stat, &g);
    int rc = g.err ? -1 : o->json ? ks_json_print(stdout, g.fig) : ks_json_print_table(stdout, g.fig, g.notes);
    json_decref(g.fig);
    json_decref(g.notes);
    return rc == 0 ? KS_EXIT_OK : ks_cli_fail(cmd, "cannot write the report");
}

static int run(const struct ks_cli_cmd *cmd, int argc, char **argv)
{
    struct ks_cache_params p;
    ks_cache_params_default(&p);
    struct settings o = {.blocks = 1u << 20, .topk = 64, .steps = 10000, .samples = p.evict_samples,
                         .window = p.prefetch_window, .seed = 1, .l1 = 1.0 / 16, .l2 = 1.0 / 4, .l3 = 1};
    const struct ks_cli_opt opts[] = {
        {.name = "blocks", .kind = KS_CLI_U32, .out = &o.blocks, .arg = "N", .help = "blocks in the request",
         .min = 1, .max = (UINT32_C(1) << 31) - KS_CHUNK},
        {.name = "topk", .kind = KS_CLI_U32, .out = &o.topk, .arg = "K",
         .help = "attention slots per step (at most --blocks)", .min = 1},
        {.name = "steps", .kind = KS_CLI_U32, .out = &o.steps, .arg = "S", .help = "decode steps", .min = 1,
         .max = KS_NONE - 1},
        {.name = "policy", .kind = KS_CLI_CHOICE, .out = &o.policy, .help = "eviction policy",
         .choices = policy_names},
        {.name = "lua", .kind = KS_CLI_STRING, .out = &o.lua, .arg = "FILE.lua",
         .help = "evict by the function `evict` of the table FILE.lua returns (its cost against the built-in "
                 "policies); replaces --policy",
         .hide_default = 1},
        {.name = "samples", .kind = KS_CLI_U32, .out = &o.samples, .arg = "S",
         .help = "blocks sampled per eviction victim; 0 = exact scan (belady is always exact)"},
        {.name = "l1", .kind = KS_CLI_REAL, .out = &o.l1, .arg = "FRACTION",
         .help = "L1 size as a fraction of the blocks", .fmax = 1},
        {.name = "l2", .kind = KS_CLI_REAL, .out = &o.l2, .arg = "FRACTION",
         .help = "L2 size as a fraction of the blocks", .fmax = 1},
        {.name = "l3", .kind = KS_CLI_REAL, .out = &o.l3, .arg = "FRACTION",
         .help = "L3 size as a fraction of the blocks", .fmax = 4},
        {.name = "window", .kind = KS_CLI_U32, .out = &o.window, .arg = "W",
         .help = "prefetch window, blocks after an accessed block", .max = 1024},
        {.name = "seed", .kind = KS_CLI_U64, .out = &o.seed, .arg = "N",
         .help = "seed of the stream and of eviction sampling"},
        {.name = "check", .kind = KS_CLI_FLAG, .out = &o.check,
         .help = "check the manager's invariants every 1000 steps and at the end"},
        {.name = "json", .kind = KS_CLI_FLAG, .out = &o.json, .help = "print one JSON object on stdout"},
    };
    int status;
    if (!ks_cli_parse(cmd, opts, sizeof opts / sizeof opts[0], argc, argv, &status))
        return status;
    if (o.topk > o.blocks)
        return ks_cli_usage_error(cmd, "--topk %" PRIu32 " exceeds --blocks %" PRIu32, o.topk, o.blocks);
    double l1 = round(o.l1 * o.blocks), l2 = round(o.l2 * o.blocks), l3 = round(o.l3 * o.blocks);
    if (l1 < 1)
        return ks_cli_usage_error(cmd, "--l1 %g leaves L1 empty: round(l1 * blocks) must be at least 1", o.l1);
    if (l1 + l2 + l3 < o.blocks)
        return ks_cli_usage_error(cmd, "--l1 %g, --l2 %g and --l3 %g together hold fewer than the %" PRIu32 " blocks",
                                  o.l1, o.l2, o.l3, o.blocks);
    if (l1 > KS_PAGE_MAX || l2 > KS_PAGE_MAX || l3 > KS_PAGE_MAX)
        return ks_cli_usage_error(cmd, "a tier would exceed %u pages", KS_PAGE_MAX);

    p.n_blocks = o.blocks;
    p.tier_blocks[KS_L1] = (uint32_t)l1;
    p.tier_blocks[KS_L2] = (uint32_t)l2;
    p.tier_blocks[KS_L3] = (uint32_t)l3;
    for (int t = 0; t < KS_TIERS; t++)
        p.block_bytes[t] = BLOCK_BYTES;
    p.evict_samples = o.samples;
    p.prefetch_window = o.window;
    p.evict = policy_of[o.policy];
    static struct ks_luapolicy lp;
    if (o.lua) {
        static char lerr[1024];
        if (ks_luapolicy_init(&lp, o.lua, "evict", NULL, lerr, sizeof lerr) != KS_OK)
            return ks_cli_fail(cmd, "%s", lerr);
        p.evict = KS_EVICT_CALLBACK;
        p.evict_fn = ks_luapolicy_evict;
        p.evict_ud = &lp;
    }
    p.seed = o.seed ^ UINT64_C(0x9e3779b97f4a7c15); // not the stream's sequence

    struct stream s;
    if (stream_make(&s, &o) != 0)
        return ks_cli_fail(cmd, "out of memory for a stream of %" PRIu32 " x %" PRIu32 " accesses", o.steps, o.topk);
    uint32_t *first = NULL;
    if (p.evict == KS_EVICT_BELADY && stream_next_use(&s, o.blocks, &first) != 0) {
        stream_free(&s);
        return ks_cli_fail(cmd, "out of memory");
    }
    char err[256];
    struct ks_cache *c = ks_cache_new(&p, err, sizeof err);
    if (!c) {
        stream_free(&s);
        return ks_cli_fail(cmd, "ks_cache_new: %s", err);
    }
    uint32_t req, placed[KS_TIERS] = {0};
    int st = ks_cache_req_new(c, &req);
    if (st == KS_OK)
        st = ks_cache_req_grow(c, req, o.blocks, KS_L1, placed);
    for (uint32_t b = 0; first && st == KS_OK && b < o.blocks; b++) // belady knows the future from step 0
        st = ks_cache_set_next_use(c, req, 0, b, first[b]);
    free(first);
    double wall = 0;
    int rc;
    if (st != KS_OK)
        rc = ks_cli_fail(cmd, "creating the %" PRIu32 " blocks: %s", o.blocks, ks_status_str(st));
    else
        rc = drive(cmd, c, req, &s, o.check, &wall);
    uint64_t accesses = s.off[s.steps];
    stream_free(&s);
    if (rc == 0 && ks_cache_stats(c)->accesses != accesses)
        rc = ks_cli_fail(cmd, "the manager counted %" PRIu64 " accesses, the stream has %" PRIu64,
                         ks_cache_stats(c)->accesses, accesses);
    if (rc == 0 && lp.failed)
        rc = ks_cli_fail(cmd, "%s: evict: %s", o.lua, lp.err);
    if (rc == 0)
        rc = report(cmd, &o, c, accesses, wall);
    ks_cache_free(c);
    ks_luapolicy_fini(&lp);
    return rc;
}

const struct ks_cli_cmd ks_bench_cache_cmd = {
    .name = "bench cache",
    .summary = "Measure the cache manager's speed and memory on a synthetic access stream",
    .about =
        "One request of N blocks (131072 bytes each) fills L1, then L2, then L3;\n"
        "the tiers hold round(l1 * N), round(l2 * N) and round(l3 * N) pages\n"
        "(defaults 1/16, 1/4, 1). The manager demotes only into free pages, so the\n"
        "tiers together need free pages for misses to be served.\n"
        "\n"
        "The stream, generated from --seed before the clock starts:\n"
        "  - 16 topic centres, uniform over the blocks; each step, with probability\n"
        "    1/64, one centre jumps to a uniform block (the working set drifts);\n"
        "  - K slots each hold a block; each step a slot keeps it with probability\n"
        "    0.9, else redraws: with probability 0.7 a block within 64 of a random\n"
        "    centre, otherwise a uniform block (long-range retrieval);\n"
        "  - a step accesses the distinct blocks of its slots (at most K), with\n"
        "    random positive attention masses summing to 1;\n"
        "  - belady is told each access's next-use step.\n"
        "Each step: ks_cache_step, ks_cache_access, ks_cache_plan with no byte\n"
        "budget, then every batch confirmed in order. Only that loop is timed.\n"
        "\n"
        "Prints the settings, accesses, wall_s, accesses_per_s (block accesses per\n"
        "wall second), bytes_per_block (manager memory after the run / N),\n"
        "hit_rate_l1 and every statistic of the manager.\n",
    .run = run,
};
