// sweep_cmd.c - `kvstrata sweep`: run every point of a sweep as its own
// process, resume what an earlier run left, merge the summaries.
//
// The sweep file is sweep.h's; running its points in the output folder, the
// manifest, the commands file and the Slurm script are sweeprun.h's (which
// also lists what the folder holds); merging is sweep_merge.h's. This file
// parses the options and prints: the plan of a dry run, the progress line
// and failed points on stderr, the outcome as a table or JSON.
#define _POSIX_C_SOURCE 200809L // isatty

#include "sweep_cmd.h"

#include <jansson.h>
#include <stdio.h>
#include <unistd.h>

#include "clock.h"
#include "json.h"
#include "status.h"
#include "sweep.h"
#include "sweep_merge.h"
#include "sweeprun.h"

enum { ERR_LEN = 1 << 16, SHOW_BAD_POINTS = 5, PATH_LEN = 4096 };

static int report(const struct ks_cli_cmd *cmd, json_t *o, int json)
{
    int rc = json ? ks_json_print(stdout, o) : ks_json_print_table(stdout, o, NULL);
    json_decref(o);
    return rc == 0 ? KS_EXIT_OK : ks_cli_fail(cmd, "cannot write the report");
}

// Merges dir's points as the manifest lists them into o; the missing ones
// are named on stderr. KS_EXIT_OK, or KS_EXIT_FAIL after a message.
static int merge_into(const struct ks_cli_cmd *cmd, const char *dir, const json_t *m, json_t *o, size_t *missing)
{
    static char err[ERR_LEN];
    struct ks_sweep_merged mg;
    if (ks_sweep_merge(dir, m, &mg, err, sizeof err) != KS_OK)
        return ks_cli_fail(cmd, "%s", err);
    *missing = json_array_size(mg.missing);
    char path[PATH_LEN];
    int e = ks_json_set_int(o, "merged", (int64_t)mg.rows);
    e |= ks_json_set_int(o, "missing", (int64_t)*missing);
    snprintf(path, sizeof path, "%s/summary.h5", dir);
    e |= ks_json_set_str(o, "summary_h5", path);
    snprintf(path, sizeof path, "%s/summary.csv", dir);
    e |= ks_json_set_str(o, "summary_csv", path);
    if (*missing) {
        fprintf(stderr, "kvstrata sweep: %zu of %zu points have no complete result in %s/points:", *missing,
                *missing + mg.rows, dir);
        for (size_t i = 0; i < *missing && i < 20; i++)
            fprintf(stderr, " %s", json_string_value(json_array_get(mg.missing, i)));
        fprintf(stderr, "%s\n", *missing > 20 ? " ..." : "");
        e |= json_object_set(o, "missing_ids", mg.missing);
    }
    json_decref(mg.missing);
    return e ? ks_cli_fail(cmd, "out of memory") : KS_EXIT_OK;
}

static int run_merge(const struct ks_cli_cmd *cmd, const char *dir_arg, int json)
{
    static char err[ERR_LEN];
    json_t *m;
    if (ks_sweeprun_manifest_read(dir_arg, &m, err, sizeof err) != KS_OK)
        return ks_cli_usage_error(cmd, "--merge %s: %s; is it a sweep's folder?", dir_arg, err);
    int lock = -1; // a sweep writing into the folder would change what is merged
    if (ks_sweeprun_lock(dir_arg, &lock, err, sizeof err) != KS_OK) {
        json_decref(m);
        return ks_cli_fail(cmd, "%s", err);
    }
    json_t *o = json_object();
    size_t missing = 0;
    int rc = o ? KS_EXIT_OK : ks_cli_fail(cmd, "out of memory");
    const json_t *name = json_object_get(m, "name");
    if (rc == KS_EXIT_OK) {
        int e = ks_json_set_str(o, "name", json_is_string(name) ? json_string_value(name) : "");
        e |= ks_json_set_str(o, "dir", dir_arg);
        e |= ks_json_set_int(o, "points", (int64_t)json_array_size(json_object_get(m, "points")));
        rc = e ? ks_cli_fail(cmd, "out of memory") : merge_into(cmd, dir_arg, m, o, &missing);
    }
    json_decref(m);
    close(lock);
    close(lock);
    if (rc != KS_EXIT_OK) {
        json_decref(o);
        return rc;
    }
    rc = report(cmd, o, json);
    return rc == KS_EXIT_OK && missing ? KS_EXIT_FAIL : rc;
}

static int dry_run(const struct ks_cli_cmd *cmd, const struct ks_sweeprun *r, int json)
{
    if (!json) {
        for (size_t i = 0; i < r->s->n_points; i++) {
            const struct ks_sweep_point *p = &r->s->points[i];
            printf("%s", p->id);
            for (size_t j = 0; j < p->n_sets; j++)
                printf(" %s", p->sets[j]);
            printf("\n    %s\n", r->line[i]);
        }
        return fflush(stdout) == 0 ? KS_EXIT_OK : ks_cli_fail(cmd, "cannot write the report");
    }
    json_t *o = json_object(), *list = json_array();
    int e = !o || !list;
    e |= ks_json_set_str(o, "name", r->s->name);
    e |= ks_json_set_str(o, "base", r->base);
    e |= ks_json_set_str(o, "dir", r->dir);
    e |= ks_json_set_int(o, "points", (int64_t)r->s->n_points);
    for (size_t i = 0; i < r->s->n_points && !e; i++) {
        const struct ks_sweep_point *p = &r->s->points[i];
        json_t *pt = json_object(), *sets = json_array();
        e |= !pt || !sets;
        e |= ks_json_set_str(pt, "id", p->id);
        for (size_t j = 0; j < p->n_sets; j++)
            e |= json_array_append_new(sets, json_string(p->sets[j]));
        e |= json_object_set_new(pt, "settings", sets);
        e |= ks_json_set_str(pt, "command", r->line[i]);
        e |= json_array_append_new(list, pt);
    }
    e |= json_object_set_new(o, "plan", list);
    if (e) {
        json_decref(o);
        return ks_cli_fail(cmd, "out of memory");
    }
    return report(cmd, o, 1);
}

// What the command shows while the points run, on stderr.
struct show {
    const struct ks_cli_cmd *cmd;
    int progress; // stderr is a terminal: a progress line
};

static void show_event(void *ud, const struct ks_sweeprun *r, const struct ks_sweeprun_event *ev)
{
    const struct show *sh = ud;
    switch (ev->kind) {
    case KS_SWEEPRUN_EV_PROGRESS:
        if (sh->progress) {
            long t = (long)(ks_clock_mono() - r->t0);
            fprintf(stderr, "\r\033[Ksweep %s: %zu/%zu points done, %zu failed, %ld:%02ld elapsed%s", r->s->name,
                    ev->done, r->s->n_points, r->failed, t / 60, t % 60, ev->final ? "\n" : "");
            fflush(stderr);
        }
        break;
    case KS_SWEEPRUN_EV_FAILED:
        if (sh->progress)
            fputs("\r\033[K", stderr);
        fprintf(stderr, "kvstrata sweep: point %s failed (%s %d)%s%s; stderr in %s\n", r->s->points[ev->point].id,
                ev->signaled ? "signal" : "exit", ev->status, ev->tail[0] ? ": " : "", ev->tail, ev->err_path);
        break;
    case KS_SWEEPRUN_EV_NOSTART:
        ks_cli_fail(sh->cmd, "point %s: %s", r->s->points[ev->point].id, ev->why);
        break;
    }
}

// Runs the points (or only writes the Slurm script) and reports. An exit
// status, after a message when it is not KS_EXIT_OK.
static int run_sweep(const struct ks_cli_cmd *cmd, struct ks_sweeprun *r, int emit_slurm, unsigned jobs, int json)
{
    static char err[ERR_LEN];
    if (ks_sweeprun_resume(r, err, sizeof err) != KS_OK || ks_sweeprun_write_commands(r, err, sizeof err) != KS_OK ||
        ks_sweeprun_write_manifest(r, err, sizeof err) != KS_OK)
        return ks_cli_fail(cmd, "%s", err);
    json_t *o = json_object();
    if (!o)
        return ks_cli_fail(cmd, "out of memory");
    char path[PATH_LEN];
    int e = ks_json_set_str(o, "name", r->s->name);
    e |= ks_json_set_str(o, "dir", r->dir);
    e |= ks_json_set_int(o, "points", (int64_t)r->s->n_points);
    if (emit_slurm) {
        if (ks_sweeprun_write_slurm(r, path, sizeof path, err, sizeof err) != KS_OK) {
            json_decref(o);
            return ks_cli_fail(cmd, "%s", err);
        }
        e |= ks_json_set_int(o, "complete", (int64_t)r->n_reused);
        e |= ks_json_set_str(o, "slurm", path);
        snprintf(path, sizeof path, "%s/commands.txt", r->dir);
        e |= ks_json_set_str(o, "commands", path);
        if (e) {
            json_decref(o);
            return ks_cli_fail(cmd, "out of memory");
        }
        return report(cmd, o, json);
    }
    struct show sh = {.cmd = cmd, .progress = isatty(STDERR_FILENO)};
    int sig = 0, st = ks_sweeprun_run(r, jobs, show_event, &sh, &sig, err, sizeof err);
    if (st != KS_OK)
        ks_cli_fail(cmd, "%s", err);
    int written = ks_sweeprun_write_manifest(r, err, sizeof err) == KS_OK;
    if (!written)
        ks_cli_fail(cmd, "%s", err);
    if (!written || st != KS_OK) {
        json_decref(o);
        return KS_EXIT_FAIL;
    }
    if (sig > 0) {
        json_decref(o);
        fprintf(stderr, "kvstrata sweep: stopped by signal %d after %zu points; rerun to resume\n", sig, r->ran);
        return 128 + sig;
    }
    e |= ks_json_set_int(o, "ran", (int64_t)r->ran);
    e |= ks_json_set_int(o, "skipped", (int64_t)r->n_reused);
    e |= ks_json_set_int(o, "failed", (int64_t)r->failed);
    e |= ks_json_set_real(o, "wall_s", ks_clock_mono() - r->t0);
    snprintf(path, sizeof path, "%s/sweep.json", r->dir);
    e |= ks_json_set_str(o, "manifest", path);
    json_t *m = ks_sweeprun_manifest(r);
    size_t missing = 0;
    int rc = e || !m ? ks_cli_fail(cmd, "out of memory") : merge_into(cmd, r->dir, m, o, &missing);
    json_decref(m);
    if (rc != KS_EXIT_OK) {
        json_decref(o);
        return rc;
    }
    rc = report(cmd, o, json);
    if (rc == KS_EXIT_OK && r->failed)
        fprintf(stderr, "kvstrata sweep: %zu of %zu points failed\n", r->failed, r->s->n_points);
    return rc == KS_EXIT_OK && (r->failed || missing) ? KS_EXIT_FAIL : rc;
}

static int run(const struct ks_cli_cmd *cmd, int argc, char **argv)
{
    const char *file = "", *dir = NULL, *merge = NULL;
    uint32_t jobs = 0, threads = 0;
    int dry = 0, json = 0, emit = 0;
    static const char *const emits[] = {"none", "slurm", NULL};
    const struct ks_cli_opt opts[] = {
        {.name = "sweep", .kind = KS_CLI_ARG, .out = &file, .arg = "SWEEP.lua"},
        {.name = "jobs", .kind = KS_CLI_U32, .out = &jobs, .arg = "N", .short_name = 'j', .min = 1, .max = 4096,
         .help = "points run at once (default: the online CPUs)", .hide_default = 1},
        {.name = "threads", .kind = KS_CLI_U32, .out = &threads, .arg = "N", .min = 1, .max = 1024,
         .help = "each point's `run --threads` (default: 1, the points running --jobs at a time)",
         .hide_default = 1},
        {.name = "output", .kind = KS_CLI_STRING, .out = &dir, .arg = "DIR", .short_name = 'o',
         .help = "output folder (default: results/NAME)", .hide_default = 1},
        {.name = "dry-run", .kind = KS_CLI_FLAG, .out = &dry, .help = "print the points and their commands; run nothing"},
        {.name = "emit", .kind = KS_CLI_CHOICE, .out = &emit, .choices = emits,
         .help = "slurm: write DIR/sweep.slurm, a job array; run nothing"},
        {.name = "merge", .kind = KS_CLI_STRING, .out = &merge, .arg = "DIR",
         .help = "merge the complete points of DIR into its summary; run nothing", .hide_default = 1},
        {.name = "json", .kind = KS_CLI_FLAG, .out = &json, .help = "print one JSON object on stdout"},
    };
    int status;
    if (!ks_cli_parse(cmd, opts, sizeof opts / sizeof opts[0], argc, argv, &status))
        return status;
    if (merge) {
        if (file[0] || dir || jobs || threads || dry || emit)
            return ks_cli_usage_error(cmd, "--merge DIR takes no sweep file and no other option but --json");
        return run_merge(cmd, merge, json);
    }
    if (!file[0])
        return ks_cli_usage_error(cmd, "missing SWEEP.lua");
    if (dry && emit)
        return ks_cli_usage_error(cmd, "--dry-run and --emit exclude each other");
    if (!threads)
        threads = 1;
    if (!jobs) {
        long cpus = sysconf(_SC_NPROCESSORS_ONLN);
        jobs = cpus > 0 ? (uint32_t)(cpus < 4096 ? cpus : 4096) : 1;
    }
    static char err[ERR_LEN];
    struct ks_sweep *s = NULL;
    int st = ks_sweep_load(file, &s, err, sizeof err);
    if (st == KS_ENOMEM)
        return ks_cli_fail(cmd, "%s", err);
    if (st != KS_OK) {
        fprintf(stderr, "%s\nkvstrata %s: %s is not a valid sweep\n", err, cmd->name, file);
        return KS_EXIT_USAGE;
    }
    st = ks_sweep_check(s, SHOW_BAD_POINTS, err, sizeof err);
    if (st != KS_OK) {
        fprintf(stderr, "%s\nkvstrata %s: %s: nothing was run\n", err, cmd->name, file);
        ks_sweep_free(s);
        return st == KS_ENOMEM ? KS_EXIT_FAIL : KS_EXIT_USAGE;
    }
    char dflt[PATH_LEN];
    if (!dir) {
        snprintf(dflt, sizeof dflt, "results/%s", s->name);
        dir = dflt;
    }
    struct ks_sweeprun r;
    int rc;
    if (ks_sweeprun_init(&r, s, dir, dry, threads, err, sizeof err) != KS_OK)
        rc = ks_cli_fail(cmd, "%s", err);
    else
        rc = dry ? dry_run(cmd, &r, json) : run_sweep(cmd, &r, emit == 1, jobs, json);
    ks_sweeprun_fini(&r);
    ks_sweep_free(s);
    return rc;
}

const struct ks_cli_cmd ks_sweep_cmd = {
    .name = "sweep",
    .summary = "Run a scenario over a grid of settings, each point its own process; merge the summaries",
    .about =
        "SWEEP.lua returns a table:\n"
        "  name   = \"l1_share\",           optional; default: the file's name\n"
        "  base   = \"../default.lua\",     the scenario, relative to the sweep file's folder\n"
        "  set    = {duration = \"10s\"},   optional: overrides for every point\n"
        "  axes   = {{field = \"cache.l1\", values = {\"50%\", \"75%\", \"100%\"}}, ...},\n"
        "                                 optional: the Cartesian product, first axis outermost\n"
        "  points = function(add) add{[\"cache.evict\"] = \"lru\"} end,\n"
        "                                 optional: more variants after the product (or a\n"
        "                                 list of tables of field = value)\n"
        "  seeds  = {1, 2, 3},            optional: every variant once per seed (0 to\n"
        "                                 2^64 - 1; a string above 2^63 - 1)\n"
        "A field is any path `run --set` takes; a value is a number, a string (\"85%\",\n"
        "\"7GBps\") or a boolean; a table value stands for its fields. A point applies\n"
        "set, the axes, the variant, the seed, in that order.\n"
        "\n"
        "Every point is checked first (a bad field or value: exit 2, nothing run). Then\n"
        "each point runs as\n"
        "`kvstrata run BASE --set ... -o DIR/points/ID.h5 --threads T --json` (T from\n"
        "--threads, 1 by default), N at a time, its report in DIR/points/ID.json and,\n"
        "when it fails, its stderr in DIR/points/ID.err. An id (p0007-1a2b3c4d) is the point's index and a hash\n"
        "of the resolved point (its settings, the base file's bytes, every field it\n"
        "resolves to). A rerun skips the points whose result is complete (the .h5\n"
        "opens and its /summary matches the .json) and runs the rest, so an\n"
        "interrupted sweep loses nothing it finished, and editing the base runs every\n"
        "point again. A sweep locks DIR/sweep.lock while it writes into DIR: a second\n"
        "sweep into DIR refuses and runs nothing. DIR/sweep.json lists every point\n"
        "with its settings and status; DIR/commands.txt holds each point's command.\n"
        "At the end DIR/summary.h5 (dataset /summary) and DIR/summary.csv hold one row\n"
        "per complete point: its id, its value of each swept field, and every numeric\n"
        "figure of its summary. Exit status 1 when a point failed (the others still run).\n"
        "\n"
        "--emit slurm writes DIR/sweep.slurm, a job array whose task i runs line i + 1 of\n"
        "DIR/commands.txt; afterwards `kvstrata sweep --merge DIR` merges what the\n"
        "tasks finished and names the points still missing (exit status 1 if any).\n",
    .run = run,
};
