// trace_stats_cmd.c - `kvstrata trace stats TRACE.h5 [--json]`: what a cache designer needs from a trace.
//
// Loads the trace whole (ks_trace_load checks it), computes tracestats.h's
// figures and prints them as one flat JSON object (--json) or as the same
// keys in a table with a note each. A file that cannot be read or breaks
// the schema is refused with "FILE: reason" on stderr, exit 1, and nothing
// on stdout; NaN figures (no eligible selection) print as null.
#include "trace_stats_cmd.h"

#include <stdio.h>

#include "json.h"
#include "status.h"
#include "trace.h"
#include "tracestats.h"

struct out {
    json_t *fig, *notes;
    int err;
};

static void put_num(struct out *o, const char *key, double v, const char *note)
{
    o->err |= ks_json_set_num(o->fig, key, v);
    o->err |= ks_json_set_str(o->notes, key, note);
}

static void put_real(struct out *o, const char *key, double v, const char *note)
{
    o->err |= ks_json_set_real(o->fig, key, v);
    o->err |= ks_json_set_str(o->notes, key, note);
}

static void put(struct out *o, const char *key, json_t *v, const char *note)
{
    o->err |= !v || json_object_set_new(o->fig, key, v) != 0;
    o->err |= ks_json_set_str(o->notes, key, note);
}

// Reuse-distance histogram: {"1": n, "2": n, "3-4": n, "5-8": n, ...}.
static json_t *histogram(const struct ks_tracestats *s)
{
    json_t *h = json_object();
    for (uint32_t k = 0; h && k < s->hist_buckets; k++) {
        char key[48];
        if (k <= 1)
            snprintf(key, sizeof key, "%u", k + 1);
        else
            snprintf(key, sizeof key, "%llu-%llu", (1ULL << (k - 1)) + 1, 1ULL << k);
        if (json_object_set_new(h, key, json_integer((json_int_t)s->reuse_hist[k])) != 0) {
            json_decref(h);
            return NULL;
        }
    }
    return h;
}

static json_t *series(const struct ks_tracestats_ws *ws)
{
    json_t *a = json_array();
    for (uint32_t i = 0; a && i < ws->points; i++)
        if (json_array_append_new(a, json_pack("[I, f]", (json_int_t)ws->step[i], ws->value[i])) != 0) {
            json_decref(a);
            return NULL;
        }
    return a;
}

static json_t *per_layer(const struct ks_tracestats *s)
{
    json_t *a = json_array();
    for (uint32_t l = 0; a && l < s->layers; l++) {
        const struct ks_tracestats_layer *x = &s->layer[l];
        json_t *o = json_object();
        if (!o || ks_json_set_int(o, "layer", l) || ks_json_set_num(o, "mean_selected", x->mean_selected) ||
            ks_json_set_real(o, "overlap", x->overlap) || ks_json_set_real(o, "new_share", x->new_share) ||
            ks_json_set_real(o, "persistence", x->persistence) || ks_json_set_real(o, "neighbour", x->neighbour) ||
            ks_json_set_real(o, "adjacent", x->adjacent)) {
            json_decref(o);
            json_decref(a);
            return NULL;
        }
        if (json_array_append_new(a, o) != 0) { // steals o either way
            json_decref(a);
            return NULL;
        }
    }
    return a;
}

// The report for people: the flat figures as a table with notes, then the
// histogram, the series and the layers as columns.
static int print_text(const json_t *fig, const json_t *notes, const struct ks_tracestats *s)
{
    json_t *flat = json_object();
    const char *key;
    json_t *v;
    int err = !flat;
    json_object_foreach((json_t *)fig, key, v)
        if (!err && !json_is_object(v) && !json_is_array(v))
            err = json_object_set(flat, key, v) != 0;
    err = err || ks_json_print_table(stdout, flat, notes) != 0;
    json_decref(flat);
    if (err)
        return -1;
    printf("\nreuse distance (steps since the stream last selected the block; %llu cold):\n",
           (unsigned long long)s->cold);
    for (uint32_t k = 0; k < s->hist_buckets; k++) {
        char range[48];
        if (k <= 1)
            snprintf(range, sizeof range, "%u", k + 1);
        else
            snprintf(range, sizeof range, "%llu-%llu", (1ULL << (k - 1)) + 1, 1ULL << k);
        printf("  %-12s %llu\n", range, (unsigned long long)s->reuse_hist[k]);
    }
    for (int k = 0; k < KS_TRACESTATS_WS; k++) {
        const struct ks_tracestats_ws *ws = &s->ws[k];
        printf("\nworking set over %u steps, by step (mean over the (request, layer) streams):\n", ws->window);
        if (!ws->points)
            printf("  (no stream has %u steps)\n", ws->window);
        for (uint32_t i = 0; i < ws->points; i++)
            printf("  step %-7u %.1f\n", ws->step[i], ws->value[i]);
    }
    printf("\nper layer (overlap: |S(s-1) n S(s)| / |S(s)|; persistence: mean run of steps a block stays selected;\n"
           "adjacent: |S_{l-1}(s) n S_l(s)| / |S_l(s)|, with the layer below at the same step):\n"
           "  %-6s %14s %9s %10s %12s %10s %9s\n",
           "layer", "mean_selected", "overlap", "new_share", "persistence", "neighbour", "adjacent");
    for (uint32_t l = 0; l < s->layers; l++)
        printf("  %-6u %14.2f %9.4f %10.4f %12.3f %10.4f %9.4f\n", l, s->layer[l].mean_selected,
               s->layer[l].overlap, s->layer[l].new_share, s->layer[l].persistence, s->layer[l].neighbour,
               s->layer[l].adjacent);
    return fflush(stdout) == 0 && !ferror(stdout) ? 0 : -1;
}

static int report(const struct ks_cli_cmd *cmd, const char *path, const struct ks_trace *t,
                  const struct ks_tracestats *s, int json)
{
    struct out o = {json_object(), json_object(), 0};
    if (!o.fig || !o.notes) {
        json_decref(o.fig);
        json_decref(o.notes);
        return ks_cli_fail(cmd, "out of memory");
    }
    char key[64], note[160];
    o.err |= ks_json_set_str(o.fig, "file", path);
    o.err |= ks_json_set_str(o.fig, "source", t->meta.source);
    put_num(&o, "requests", s->requests, "requests in the trace");
    put_num(&o, "layers", s->layers, "layers");
    put_num(&o, "block_size", s->block_size, "tokens per block");
    put_num(&o, "records", (double)s->records, "(request, step, layer) records");
    put_num(&o, "steps", (double)s->steps, "decode steps, all requests");
    put_num(&o, "selections", (double)s->selections, "selected blocks, all records");
    put_num(&o, "max_blocks", s->max_blocks, "largest context, blocks");
    put_num(&o, "mean_selected", s->mean_selected, "blocks selected per record");
    put_num(&o, "min_selected", s->min_selected, "fewest blocks selected by a record");
    put_num(&o, "max_selected", s->max_selected, "most blocks selected by a record");
    put_num(&o, "cold", (double)s->cold, "selections of a block their (request, layer) never selected before");
    for (int k = 0; k < KS_TRACESTATS_WINDOWS; k++) {
        uint32_t w = ks_tracestats_window[k];
        snprintf(key, sizeof key, "reuse_%u", w);
        snprintf(note, sizeof note, "of selections at steps >= %u: block also selected in one of the previous %u steps",
                 w, w);
        put_real(&o, key, s->reuse[k], note);
    }
    put(&o, "reuse_distance", histogram(s),
        "non-cold selections by steps since the stream last selected the block");
    put_real(&o, "neighbour", s->neighbour, "P(block b+1 selected at step s+1 | b selected at s)");
    put_real(&o, "neighbour_new", s->neighbour_new, "the same, counting only b+1 not selected at s");
    put_real(&o, "adjacent", s->adjacent,
             "of a layer's selections (layers 1 and up), the share the layer below selected at the same step");
    for (int k = 0; k < KS_TRACESTATS_WS; k++) {
        const struct ks_tracestats_ws *ws = &s->ws[k];
        snprintf(key, sizeof key, "working_set_%u", ws->window);
        snprintf(note, sizeof note, "distinct blocks a (request, layer) selected over %u steps, mean", ws->window);
        put_real(&o, key, ws->mean, note);
        snprintf(key, sizeof key, "working_set_%u_series", ws->window);
        put(&o, key, series(ws), "[step, mean over streams] at evenly spread steps");
    }
    put_real(&o, "mass_total", s->mass_total, "mean attention mass of a record's selection");
    for (int k = 0; k < KS_TRACESTATS_TOP; k++) {
        snprintf(key, sizeof key, "mass_top%u", ks_tracestats_top[k]);
        snprintf(note, sizeof note, "mean share of a record's mass in its %u heaviest blocks", ks_tracestats_top[k]);
        put_real(&o, key, s->mass_top[k], note);
    }
    for (int k = 0; k < KS_TRACESTATS_OPT; k++) {
        int pct = (int)(ks_tracestats_opt_fraction[k] * 100 + 0.5);
        snprintf(key, sizeof key, "opt_l1_%dpct", pct);
        snprintf(note, sizeof note, "(layer, block) entries of L1: %d%% of mean_selected x layers", pct);
        put_num(&o, key, s->opt_capacity[k], note);
        snprintf(key, sizeof key, "opt_hit_%dpct", pct);
        snprintf(note, sizeof note, "Belady (OPT) hit rate of each request's accesses with that L1");
        put_real(&o, key, s->opt_hit[k], note);
    }
    put(&o, "per_layer", per_layer(s),
        "per layer: mean_selected, overlap, new_share, persistence, neighbour, adjacent");
    int rc = o.err ? -1 : json ? ks_json_print(stdout, o.fig) : print_text(o.fig, o.notes, s);
    json_decref(o.fig);
    json_decref(o.notes);
    return rc == 0 ? KS_EXIT_OK : ks_cli_fail(cmd, "cannot write the report");
}

static int run(const struct ks_cli_cmd *cmd, int argc, char **argv)
{
    const char *path = NULL;
    int json = 0;
    const struct ks_cli_opt opts[] = {
        {.name = "trace", .kind = KS_CLI_ARG, .out = &path, .arg = "TRACE.h5"},
        {.name = "json", .kind = KS_CLI_FLAG, .out = &json, .help = "print one JSON object on stdout"},
    };
    int status;
    if (!ks_cli_parse(cmd, opts, sizeof opts / sizeof opts[0], argc, argv, &status))
        return status;
    char err[1024];
    struct ks_trace *t = ks_trace_load(path, err, sizeof err);
    if (!t)
        return ks_cli_fail(cmd, "%s", err);
    struct ks_tracestats s;
    int st = ks_tracestats_compute(t, &s);
    int rc = st == KS_OK ? report(cmd, path, t, &s, json) : ks_cli_fail(cmd, "%s: %s", path, ks_status_str(st));
    if (st == KS_OK)
        ks_tracestats_fini(&s);
    ks_trace_free(t);
    return rc;
}

const struct ks_cli_cmd ks_trace_stats_cmd = {
    .name = "trace stats",
    .summary = "Summarise an access trace: reuse, locality, adjacent layers, working sets, mass, OPT hit rates",
    .about =
        "Reads TRACE.h5 whole, checks it, and reports (definitions in sim/trace/tracestats.h):\n"
        "  reuse_W       of the selections at steps >= W, the fraction whose block the\n"
        "                same (request, layer) also selected in one of the previous W\n"
        "                steps (W = 1, 4, 16, 256)\n"
        "  reuse_distance  steps since the block's previous selection, in buckets\n"
        "                1, 2, 3-4, 5-8, ...; first selections count as cold\n"
        "  neighbour     P(b+1 selected at the next step | b selected now);\n"
        "                neighbour_new counts only b+1 not selected now\n"
        "  adjacent      of the blocks layer l selects at a step (l >= 1), the share\n"
        "                layer l-1 also selects at that step, pooled over layers\n"
        "                1 .. layers-1 (null with one layer)\n"
        "  working_set_W distinct blocks selected over W steps (16, 256), mean and series\n"
        "  mass_topK     share of a record's mass in its K heaviest blocks (1, 8, 32)\n"
        "  opt_hit_P     Belady hit rate of each request's (layer, block) accesses with\n"
        "                an L1 of P% of mean_selected x layers entries (25, 50, 100, 200)\n"
        "  per_layer     mean_selected, overlap (R(1)), new_share, persistence,\n"
        "                neighbour and adjacent (null for layer 0) of each layer\n"
        "A figure with nothing to measure (e.g. reuse_256 of a shorter trace) is null.\n"
        "A file that is not a valid trace: 'FILE: reason' on stderr, exit status 1.\n",
    .run = run,
};
