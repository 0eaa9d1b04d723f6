// bench_cache_cmd.c - `kvstrata bench cache`: one cache manager driven by a
// synthetic access stream, timed, its memory and statistics reported.
//
// The benchmark (the setup, the stream, the timed loop) is cachebench.h's;
// this file parses the options, shows the progress line on a terminal and
// prints the settings, the timing and every statistic of the manager.
#define _POSIX_C_SOURCE 200809L // isatty

#include "bench_cache_cmd.h"

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <unistd.h>

#include "cachebench.h"
#include "json.h"

static const char *const policy_names[] = {"heat", "lru", "lfu", "belady", "random", NULL};
static const enum ks_evict_policy policy_of[] = {KS_EVICT_HEAT, KS_EVICT_LRU, KS_EVICT_LFU, KS_EVICT_BELADY,
                                                 KS_EVICT_RANDOM};

struct settings {
    struct ks_cachebench_params p;
    int policy; // index into policy_names
    int json;
};

// The progress line on a terminal, at most four times a second.
struct progress {
    int started; // the timed loop began: the line is to be cleared
    double shown; // seconds into the loop when last shown
};

static void progress_show(void *ud, uint32_t done, uint32_t total, double elapsed)
{
    struct progress *p = ud;
    p->started = 1;
    if (elapsed - p->shown < 0.25)
        return;
    p->shown = elapsed;
    fprintf(stderr, "\rbench cache: %3.0f%%  %.0f steps/s ", 100.0 * done / total, elapsed > 0 ? done / elapsed : 0.0);
    fflush(stderr);
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

static int report(const struct ks_cli_cmd *cmd, const struct settings *s, const struct ks_cachebench *b)
{
    const struct ks_cachebench_params *o = &s->p;
    const struct ks_cache *c = b->cache;
    uint64_t accesses = b->accesses;
    double wall = b->wall;
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
    FIG(ks_json_set_str, "policy", o->lua ? "lua" : policy_names[s->policy], "eviction policy");
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
    int rc = g.err ? -1 : s->json ? ks_json_print(stdout, g.fig) : ks_json_print_table(stdout, g.fig, g.notes);
    json_decref(g.fig);
    json_decref(g.notes);
    return rc == 0 ? KS_EXIT_OK : ks_cli_fail(cmd, "cannot write the report");
}

static int run(const struct ks_cli_cmd *cmd, int argc, char **argv)
{
    struct ks_cache_params dflt;
    ks_cache_params_default(&dflt);
    struct settings s = {.p = {.blocks = 1u << 20, .topk = 64, .steps = 10000, .samples = dflt.evict_samples,
                               .window = dflt.prefetch_window, .seed = 1, .l1 = 1.0 / 16, .l2 = 1.0 / 4, .l3 = 1}};
    struct ks_cachebench_params *o = &s.p;
    const struct ks_cli_opt opts[] = {
        {.name = "blocks", .kind = KS_CLI_U32, .out = &o->blocks, .arg = "N", .help = "blocks in the request",
         .min = 1, .max = (UINT32_C(1) << 31) - KS_CHUNK},
        {.name = "topk", .kind = KS_CLI_U32, .out = &o->topk, .arg = "K",
         .help = "attention slots per step (at most --blocks)", .min = 1},
        {.name = "steps", .kind = KS_CLI_U32, .out = &o->steps, .arg = "S", .help = "decode steps", .min = 1,
         .max = KS_NONE - 1},
        {.name = "policy", .kind = KS_CLI_CHOICE, .out = &s.policy, .help = "eviction policy",
         .choices = policy_names},
        {.name = "lua", .kind = KS_CLI_STRING, .out = &o->lua, .arg = "FILE.lua",
         .help = "evict by the function `evict` of the table FILE.lua returns (its cost against the built-in "
                 "policies); replaces --policy",
         .hide_default = 1},
        {.name = "samples", .kind = KS_CLI_U32, .out = &o->samples, .arg = "S",
         .help = "blocks sampled per eviction victim; 0 = exact scan (belady is always exact)"},
        {.name = "l1", .kind = KS_CLI_REAL, .out = &o->l1, .arg = "FRACTION",
         .help = "L1 size as a fraction of the blocks", .fmax = 1},
        {.name = "l2", .kind = KS_CLI_REAL, .out = &o->l2, .arg = "FRACTION",
         .help = "L2 size as a fraction of the blocks", .fmax = 1},
        {.name = "l3", .kind = KS_CLI_REAL, .out = &o->l3, .arg = "FRACTION",
         .help = "L3 size as a fraction of the blocks", .fmax = 4},
        {.name = "window", .kind = KS_CLI_U32, .out = &o->window, .arg = "W",
         .help = "prefetch window, blocks after an accessed block", .max = 1024},
        {.name = "seed", .kind = KS_CLI_U64, .out = &o->seed, .arg = "N",
         .help = "seed of the stream and of eviction sampling"},
        {.name = "check", .kind = KS_CLI_FLAG, .out = &o->check,
         .help = "check the manager's invariants every 1000 steps and at the end"},
        {.name = "json", .kind = KS_CLI_FLAG, .out = &s.json, .help = "print one JSON object on stdout"},
    };
    int status;
    if (!ks_cli_parse(cmd, opts, sizeof opts / sizeof opts[0], argc, argv, &status))
        return status;
    if (o->topk > o->blocks)
        return ks_cli_usage_error(cmd, "--topk %" PRIu32 " exceeds --blocks %" PRIu32, o->topk, o->blocks);
    double pages[KS_TIERS];
    ks_cachebench_pages(o, pages);
    if (pages[KS_L1] < 1)
        return ks_cli_usage_error(cmd, "--l1 %g leaves L1 empty: round(l1 * blocks) must be at least 1", o->l1);
    if (pages[KS_L1] + pages[KS_L2] + pages[KS_L3] < o->blocks)
        return ks_cli_usage_error(cmd, "--l1 %g, --l2 %g and --l3 %g together hold fewer than the %" PRIu32 " blocks",
                                  o->l1, o->l2, o->l3, o->blocks);
    if (pages[KS_L1] > KS_PAGE_MAX || pages[KS_L2] > KS_PAGE_MAX || pages[KS_L3] > KS_PAGE_MAX)
        return ks_cli_usage_error(cmd, "a tier would exceed %u pages", KS_PAGE_MAX);
    o->evict = policy_of[s.policy];
    struct progress prog = {0};
    if (isatty(STDERR_FILENO)) {
        o->progress = progress_show;
        o->ud = &prog;
    }
    static struct ks_cachebench b;
    static char err[2048];
    int rc = ks_cachebench_run(&b, o, err, sizeof err) == KS_OK ? KS_EXIT_OK : KS_EXIT_FAIL;
    if (prog.started)
        fputs("\r\033[K", stderr);
    if (rc != KS_EXIT_OK)
        ks_cli_fail(cmd, "%s", err);
    else
        rc = report(cmd, &s, &b);
    ks_cachebench_fini(&b);
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
