// validate_cmd.c - `kvstrata validate`: the runtime (kernels/runtime/runtime.h) and
// the simulator on the same scenario, seed and profile, side by side.
//
// Both make the same cache-manager calls with the same accesses, so their
// hit rates and migrated blocks must be identical; a difference is a bug and
// the command fails. Times (TPOT mean/P50/P99, stall fraction) are the
// simulator's predictions against what the runtime measured, with relative
// errors and the goals (TPOT P50 within 5%, P99 within 10%).
#define _POSIX_C_SOURCE 200809L // fork, pipe, waitpid

#include "validate_cmd.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench_kernels.h"
#include "device.h"
#include "engine.h"
#include "fs.h"
#include "json.h"
#include "run_cmd.h"
#include "runtime.h"
#include "scenario_cmd.h"
#include "status.h"

enum { MAX_SETS = 256, ERR_LEN = 1 << 16 };

#define GOAL_P50 0.05
#define GOAL_P99 0.10

static double ratio(double a, double b)
{
    return b > 0 ? a / b : 0;
}

// Relative error of the prediction: (sim - runtime) / runtime; 0 when both are 0.
static double rel(double sim, double real)
{
    if (real == 0)
        return sim == 0 ? 0 : INFINITY;
    return (sim - real) / real;
}

struct row {
    const char *key;
    double sim, real;
    int exact;   // must be identical (same code, same accesses)
    double goal; // largest |relative error| accepted; 0: reported only
};

static int add_row(json_t *rows, const struct row *w)
{
    json_t *o = json_object();
    if (!o)
        return -1;
    int e = ks_json_set_str(o, "metric", w->key);
    e |= ks_json_set_num(o, "simulator", w->sim);
    e |= ks_json_set_num(o, "runtime", w->real);
    double r = rel(w->sim, w->real);
    e |= isfinite(r) ? ks_json_set_num(o, "rel_error", r) : json_object_set_new(o, "rel_error", json_null());
    if (w->exact)
        e |= ks_json_set_bool(o, "identical", w->sim == w->real);
    if (w->goal > 0) {
        e |= ks_json_set_num(o, "goal", w->goal);
        e |= ks_json_set_bool(o, "goal_met", isfinite(r) && fabs(r) <= w->goal);
    }
    e |= json_array_append_new(rows, o);
    return e;
}

// The rows as a text table's lines: metric, both figures, the relative
// error, and whether it is identical (exact rows) or meets its goal.
static void print_rows(const struct row *rows, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const struct row *w = &rows[i];
        double r = rel(w->sim, w->real);
        char note[64] = "";
        if (w->exact)
            snprintf(note, sizeof note, "%s", w->sim == w->real ? "identical" : "DIFFERENT");
        else if (w->goal > 0)
            snprintf(note, sizeof note, "goal %.0f%%: %s", 100 * w->goal,
                     isfinite(r) && fabs(r) <= w->goal ? "met" : "missed");
        printf("%-22s %16.6g %16.6g %9.2f%%  %s\n", w->key, w->sim, w->real, 100 * r, note);
    }
}

// Gives the scenario a kernel-time table measured now, on this machine, for
// its head shape (4..128 blocks at batch 8; the profile's table is not read,
// so its shape may differ from the scenario's): a CPU whose speed drifts over
// minutes is then compared with a table of the same minute.
static int measure_kernels(struct ks_scenario *sc, char *err, size_t len)
{
    struct ks_kernel_time *kt = &sc->platform.kernel_time;
    static const uint32_t def[] = {4, 8, 16, 32, 64, 128};
    uint32_t ctx_blocks = sc->model.max_context / sc->cache.block_size, blocks[32];
    size_t n = 0;
    const uint32_t *from = kt->n ? kt->blocks : def;
    size_t from_n = kt->n ? kt->n : sizeof def / sizeof def[0];
    for (size_t i = 0; i < from_n && n < 32; i++)
        if (from[i] >= 1 && from[i] <= ctx_blocks)
            blocks[n++] = from[i];
    if (n < 2) {
        snprintf(err, len, "model.max_context holds fewer than two of the table's block counts");
        return KS_EINVAL;
    }
    struct ks_bench_shape sh = {.kv_heads = sc->model.kv_heads, .q_heads = sc->model.q_heads,
                                .head_dim = sc->model.head_dim, .block_size = sc->cache.block_size,
                                .context = ctx_blocks * sc->cache.block_size, .batch = kt->n ? kt->batch : 8,
                                .repeat = 9, .seed = sc->seed};
    double sec[32];
    if (ks_bench_kernel_table(&sh, blocks, n, sec, err, len) != 0)
        return KS_EINVAL;
    uint32_t *b = malloc(n * sizeof *b);
    double *t = malloc(n * sizeof *t);
    char *src = malloc(256);
    if (!b || !t || !src) {
        free(b);
        free(t);
        free(src);
        snprintf(err, len, "out of memory");
        return KS_ENOMEM;
    }
    memcpy(b, blocks, n * sizeof *b);
    memcpy(t, sec, n * sizeof *t);
    snprintf(src, 256, "kvstrata validate --measure-kernels: the reference sparse kernel timed just before the run "
                       "(batch %u, median of 9 samples)", sh.batch);
    free(kt->blocks);
    free(kt->seconds);
    free(kt->source);
    *kt = (struct ks_kernel_time){.n = (uint32_t)n, .batch = sh.batch, .blocks = b, .seconds = t, .source = src};
    return KS_OK;
}

// What the second simulation (below) sends back.
struct in_run {
    int ok;
    double tpot_mean, tpot_p50, tpot_p99, stall_fraction, decode_seconds;
    char err[256];
};

// The simulator once more, charging the attention kernel what the runtime's
// kernel took in this very run: its kernel seconds over the blocks it read,
// per block read (a one-point kernel_time table: c * k per sequence and
// layer), instead of the profile's table. On a machine whose speed drifts
// between the profile's measurement and the run this separates the error of
// the kernel-time figure from the error of the rest of the model (copies,
// overlap, stall, the runtime's other work, the step's structure): the
// simulator's total kernel time then equals the runtime's by construction.
// With `steps` (n of them) it charges each decode step what the runtime's
// kernel took per block read in that same step (validate's third
// comparison): the machine's speed changes within a run too, and this
// separates those changes from the rest of the model. SimGrid runs once per
// process, so this runs in a child process, started before the parent's
// own simulation; *child is its pid and *fd the pipe it answers on.
static int in_run_start(const struct ks_scenario *sc, double per_block, const double *steps, size_t n, pid_t *child,
                        int *fd)
{
    int p[2];
    if (pipe(p) != 0)
        return KS_EIO;
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        close(p[0]);
        close(p[1]);
        return KS_EIO;
    }
    if (pid > 0) {
        close(p[1]);
        *child = pid;
        *fd = p[0];
        return KS_OK;
    }
    close(p[0]);
    struct in_run r = {0};
    struct ks_scenario *s = (struct ks_scenario *)sc; // the child's own copy of the parent's memory
    struct ks_kernel_time *kt = &s->platform.kernel_time;
    static uint32_t one = 1;
    static double sec;
    static char src[] = "kvstrata validate: the runtime's kernel seconds per block read, this run";
    sec = per_block;
    *kt = (struct ks_kernel_time){.n = 1, .batch = 1, .blocks = &one, .seconds = &sec, .source = src,
                                  .steps = steps, .n_steps = (uint32_t)n};
    struct ks_run_result res;
    if (ks_engine_run(s, &res, r.err, sizeof r.err) == KS_OK) {
        r.ok = 1;
        r.tpot_mean = ks_hist_mean(res.tpot);
        r.tpot_p50 = ks_hist_quantile(res.tpot, 0.5);
        r.tpot_p99 = ks_hist_quantile(res.tpot, 0.99);
        r.stall_fraction = ratio(res.stall, res.stall + res.busy);
        r.decode_seconds = res.sim_time;
    }
    ssize_t w = write(p[1], &r, sizeof r);
    _exit(w == (ssize_t)sizeof r ? 0 : 1);
}

// The rows of a second or third simulation against the runtime's run: how
// many (0 when it did not run).
#define IN_RUN_ROWS 5
static size_t in_run_rows(const struct in_run *r, const struct ks_run_result *real, struct row *out)
{
    const struct row rows[IN_RUN_ROWS] = {
        {"tpot_mean", r->tpot_mean, ks_hist_mean(real->tpot), 0, 0},
        {"tpot_p50", r->tpot_p50, ks_hist_quantile(real->tpot, 0.5), 0, GOAL_P50},
        {"tpot_p99", r->tpot_p99, ks_hist_quantile(real->tpot, 0.99), 0, GOAL_P99},
        {"stall_fraction", r->stall_fraction, ratio(real->stall, real->stall + real->busy), 0, 0},
        {"decode_seconds", r->decode_seconds, real->sim_time, 0, 0},
    };
    memcpy(out, rows, sizeof rows);
    return r->ok ? IN_RUN_ROWS : 0;
}

// The child's answer; KS_OK with *r filled, else a status with r->err set.
static int in_run_finish(pid_t child, int fd, struct in_run *r)
{
    memset(r, 0, sizeof *r);
    ssize_t got = 0, n;
    while (got < (ssize_t)sizeof *r && (n = read(fd, (char *)r + got, sizeof *r - (size_t)got)) > 0)
        got += n;
    close(fd);
    int status = 0;
    while (waitpid(child, &status, 0) < 0 && errno == EINTR)
        ;
    if (got != (ssize_t)sizeof *r) {
        snprintf(r->err, sizeof r->err, "the second simulation ended without an answer (exit status %d)",
                 WIFEXITED(status) ? WEXITSTATUS(status) : -1);
        r->ok = 0;
    }
    return r->ok ? KS_OK : KS_EIO;
}

static int validate(const struct ks_cli_cmd *cmd, int argc, char **argv)
{
    const char *file = NULL, *dir = "/var/tmp", *out = NULL, *seed_text = NULL;
    const char *sets[MAX_SETS];
    struct ks_cli_strings set = {.v = sets, .cap = MAX_SETS};
    static const char *const devices[] = {"cpu", "gpu", NULL};
    int device = 0, json = 0, measure = 0;
    const struct ks_cli_opt opts[] = {
        {.name = "scenario", .kind = KS_CLI_ARG, .out = &file, .arg = "SCENARIO.lua"},
        {.name = "device", .kind = KS_CLI_CHOICE, .out = &device, .choices = devices,
         .help = "where the runtime runs: cpu (RAM arenas, reference kernels) or gpu (CUDA)"},
        {.name = "set", .kind = KS_CLI_STRINGS, .out = &set, .arg = "PATH=VALUE",
         .help = "override a field of the scenario (repeatable)"},
        {.name = "seed", .kind = KS_CLI_STRING, .out = &seed_text, .arg = "N",
         .help = "random seed (overrides the scenario's)", .hide_default = 1},
        {.name = "dir", .kind = KS_CLI_STRING, .out = &dir, .arg = "DIR",
         .help = "folder of the runtime's L3 file (disk-backed; O_DIRECT)"},
        {.name = "output", .kind = KS_CLI_STRING, .out = &out, .arg = "DIR", .short_name = 'o',
         .help = "write DIR/NAME_sim.h5 and DIR/NAME_runtime.h5 (the layout of `run`)", .hide_default = 1},
        {.name = "measure-kernels", .kind = KS_CLI_FLAG, .out = &measure,
         .help = "time the reference kernel for the scenario's head shape now and use that table (the "
                 "profile's kernel_time, whatever its shape, is not read)"},
        {.name = "json", .kind = KS_CLI_FLAG, .out = &json, .help = "print one JSON object on stdout"},
    };
    int status;
    if (!ks_cli_parse(cmd, opts, sizeof opts / sizeof opts[0], argc, argv, &status))
        return status;
    if (device == 1 && ks_device_count() <= 0)
        return ks_cli_fail(cmd, "--device gpu: no GPU answers here (%s); --device cpu runs the runtime on this CPU",
                           ks_device_error());
    static char err[ERR_LEN];
    struct ks_scenario *sc = NULL;
    int st = ks_scenario_cmd_load_seed(cmd, file, sets, set.n, seed_text, measure, &sc);
    if (st != KS_EXIT_OK)
        return st;
    if (!ks_runtime_supports(sc, err, sizeof err)) {
        ks_scenario_free(sc);
        return ks_cli_fail(cmd, "%s: the runtime cannot run this scenario: %s", file, err);
    }
    if (out && ks_fs_mkdirs(out, 0777, NULL, 0) != KS_OK) {
        ks_scenario_free(sc);
        return ks_cli_fail(cmd, "-o %s: cannot make the folder", out);
    }
    if (measure && (st = measure_kernels(sc, err, sizeof err)) != KS_OK) {
        ks_scenario_free(sc);
        return ks_cli_fail(cmd, "--measure-kernels: %s", err);
    }
    // the runtime first, on a quiet process; then the simulator
    struct ks_run_result real, sim;
    struct ks_runtime_extra x;
    struct ks_runtime_params rp = {.dir = dir, .progress = isatty(STDERR_FILENO), .gpu = device == 1};
    if ((st = ks_runtime_run(sc, &rp, &real, &x, err, sizeof err)) != KS_OK) {
        ks_runtime_extra_fini(&x);
        ks_scenario_free(sc);
        return ks_cli_fail(cmd, "%s: runtime: %s", file, err);
    }
    // the second and third simulations (in_run_start) work beside the first
    pid_t child = -1, child_steps = -1;
    int fd = -1, fd_steps = -1;
    double per_block = x.reads ? x.kernel_seconds / (double)x.reads : 0;
    if (per_block > 0 && in_run_start(sc, per_block, NULL, 0, &child, &fd) != KS_OK)
        child = -1;
    if (per_block > 0 &&
        in_run_start(sc, per_block, x.step_kernel, x.n_step_kernel, &child_steps, &fd_steps) != KS_OK)
        child_steps = -1;
    st = ks_engine_run(sc, &sim, err, sizeof err);
    struct in_run ir = {.ok = 0, .err = "the runtime read no block"}, is = ir;
    if (child > 0)
        in_run_finish(child, fd, &ir);
    else if (per_block > 0)
        snprintf(ir.err, sizeof ir.err, "cannot start a second process");
    if (child_steps > 0)
        in_run_finish(child_steps, fd_steps, &is);
    else if (per_block > 0)
        snprintf(is.err, sizeof is.err, "cannot start a third process");
    ks_runtime_extra_fini(&x);
    if (st != KS_OK) {
        ks_run_result_fini(&real);
        ks_run_result_fini(&sim);
        ks_scenario_free(sc);
        return ks_cli_fail(cmd, "%s: simulator: %s", file, err);
    }
    const struct ks_cache_stats *a = &sim.cache, *b = &real.cache;
    double acc_a = (double)a->accesses, acc_b = (double)b->accesses;
    const struct row rows[] = {
        {"accesses", acc_a, acc_b, 1, 0},
        {"hit_rate_l1", ratio((double)a->found[KS_L1], acc_a), ratio((double)b->found[KS_L1], acc_b), 1, 0},
        {"hit_rate_l2", ratio((double)a->found[KS_L2], acc_a), ratio((double)b->found[KS_L2], acc_b), 1, 0},
        {"hit_rate_l3", ratio((double)a->found[KS_L3], acc_a), ratio((double)b->found[KS_L3], acc_b), 1, 0},
        {"migrated_bytes_l1_l2", (double)a->mig_bytes[KS_L1][KS_L2], (double)b->mig_bytes[KS_L1][KS_L2], 1, 0},
        {"migrated_bytes_l2_l1", (double)a->mig_bytes[KS_L2][KS_L1], (double)b->mig_bytes[KS_L2][KS_L1], 1, 0},
        {"migrated_bytes_l2_l3", (double)a->mig_bytes[KS_L2][KS_L3], (double)b->mig_bytes[KS_L2][KS_L3], 1, 0},
        {"migrated_bytes_l3_l1", (double)a->mig_bytes[KS_L3][KS_L1], (double)b->mig_bytes[KS_L3][KS_L1], 1, 0},
        {"steps", (double)sim.steps, (double)real.steps, 1, 0},
        {"table_rebuilds", (double)sim.table_rebuilds, (double)real.table_rebuilds, 1, 0},
        {"outside_reads", (double)sim.outside_reads, (double)real.outside_reads, 1, 0},
        {"tokens", (double)sim.tokens, (double)real.tokens, 1, 0},
        {"tpot_mean", ks_hist_mean(sim.tpot), ks_hist_mean(real.tpot), 0, 0},
        {"tpot_p50", ks_hist_quantile(sim.tpot, 0.5), ks_hist_quantile(real.tpot, 0.5), 0, GOAL_P50},
        {"tpot_p99", ks_hist_quantile(sim.tpot, 0.99), ks_hist_quantile(real.tpot, 0.99), 0, GOAL_P99},
        {"stall_fraction", ratio(sim.stall, sim.stall + sim.busy), ratio(real.stall, real.stall + real.busy), 0, 0},
        {"copy_bandwidth", ratio((double)sim.copy_bytes, sim.copy_seconds),
         ratio((double)real.copy_bytes, real.copy_seconds), 0, 0},
        {"decode_seconds", sim.sim_time, real.sim_time, 0, 0},
    };
    size_t n_rows = sizeof rows / sizeof rows[0];
    struct row in_rows[IN_RUN_ROWS], step_rows[IN_RUN_ROWS];
    size_t n_in = in_run_rows(&ir, &real, in_rows), n_steps = in_run_rows(&is, &real, step_rows);
    int same = 1;
    for (size_t i = 0; i < n_rows; i++)
        if (rows[i].exact && rows[i].sim != rows[i].real)
            same = 0;
    int rc = KS_EXIT_OK;
    if (out) {
        char path[4096];
        const struct ks_run_result *rs[2] = {&sim, &real};
        const char *tag[2] = {"sim", "runtime"};
        for (int i = 0; i < 2 && rc == KS_EXIT_OK; i++) {
            struct ks_run_summary s = {.fig = json_object(), .notes = json_object()};
            snprintf(path, sizeof path, "%s/%s_%s.h5", out, sc->name, tag[i]);
            if (s.fig && s.notes)
                ks_run_summarise(&s, sc, rs[i]);
            if (!s.fig || !s.notes || s.err || ks_run_write(path, &s, rs[i], err, sizeof err) != KS_OK)
                rc = ks_cli_fail(cmd, "%s", err[0] ? err : "cannot write the results");
            json_decref(s.fig);
            json_decref(s.notes);
        }
    }
    json_t *o = json_object(), *arr = json_array(), *in_arr = json_array(), *in_o = json_object();
    json_t *st_arr = json_array(), *st_o = json_object();
    int e = !o || !arr || !in_arr || !in_o || !st_arr || !st_o;
    for (size_t i = 0; !e && i < n_rows; i++)
        e |= add_row(arr, &rows[i]);
    for (size_t i = 0; !e && i < n_in; i++)
        e |= add_row(in_arr, &in_rows[i]);
    for (size_t i = 0; !e && i < n_steps; i++)
        e |= add_row(st_arr, &step_rows[i]);
    if (!e) {
        // the simulator with this run's kernel speed (in_run_start)
        e |= ks_json_set_num(o, "in_run_kernel_s_per_block", per_block);
        if (ir.ok)
            e |= json_object_set(in_o, "rows", in_arr);
        else
            e |= ks_json_set_str(in_o, "error", ir.err);
        e |= json_object_set(o, "with_runtime_kernel_speed", in_o);
        if (is.ok)
            e |= json_object_set(st_o, "rows", st_arr);
        else
            e |= ks_json_set_str(st_o, "error", is.err);
        e |= json_object_set(o, "with_runtime_step_speeds", st_o);
    }
    if (!e) {
        e |= ks_json_set_str(o, "scenario", sc->name);
        e |= ks_json_set_str(o, "device", devices[device]);
        e |= ks_json_set_num(o, "seed", (double)sc->seed);
        e |= json_object_set(o, "rows", arr);
        e |= ks_json_set_bool(o, "hit_rates_identical", same);
        e |= ks_json_set_num(o, "runtime_kernel_launches", (double)x.kernel_launches);
        e |= ks_json_set_num(o, "runtime_reads", (double)x.reads);
        e |= ks_json_set_num(o, "runtime_reads_inflight", (double)x.reads_inflight);
        e |= ks_json_set_num(o, "runtime_reads_scratch", (double)x.reads_scratch);
        e |= ks_json_set_num(o, "runtime_stale_refused", (double)x.stale_refused);
        e |= ks_json_set_num(o, "runtime_table_refreshed", (double)x.table_refreshed);
        e |= ks_json_set_num(o, "runtime_table_uploads", (double)x.table_uploads);
        e |= ks_json_set_num(o, "runtime_table_uploads_skipped", (double)x.table_uploads_skipped);
        e |= ks_json_set_num(o, "runtime_paused_s", x.paused);
        e |= ks_json_set_num(o, "runtime_kernel_s", x.kernel_seconds);
        e |= ks_json_set_num(o, "runtime_step_kernel_p10_s_per_block", x.step_kernel_p10);
        e |= ks_json_set_num(o, "runtime_step_kernel_p50_s_per_block", x.step_kernel_p50);
        e |= ks_json_set_num(o, "runtime_step_kernel_p90_s_per_block", x.step_kernel_p90);
        e |= ks_json_set_num(o, "runtime_step_kernel_p99_s_per_block", x.step_kernel_p99);
        e |= ks_json_set_num(o, "runtime_busy_s", real.busy);
        e |= ks_json_set_num(o, "runtime_stall_s", real.stall);
        e |= ks_json_set_num(o, "sim_busy_s", sim.busy);
        e |= ks_json_set_num(o, "sim_stall_s", sim.stall);
        e |= ks_json_set_num(o, "runtime_wall_s", real.wall_s);
    }
    if (!e && rc == KS_EXIT_OK) {
        if (json) {
            e |= ks_json_print(stdout, o);
        } else {
            printf("%s (seed %llu, device %s)\n", sc->name, (unsigned long long)sc->seed, devices[device]);
            printf("%-22s %16s %16s %10s  %s\n", "metric", "simulator", "runtime", "error", "");
            print_rows(rows, n_rows);
            printf("runtime: %llu kernel launches, %llu block reads (%llu in flight, %llu via scratch), "
                   "%llu stale reads refused, %llu table entries located afresh (their block had moved), "
                   "clock paused %.2fs, %.1fs wall\n",
                   (unsigned long long)x.kernel_launches, (unsigned long long)x.reads,
                   (unsigned long long)x.reads_inflight, (unsigned long long)x.reads_scratch,
                   (unsigned long long)x.stale_refused, (unsigned long long)x.table_refreshed, x.paused,
                   real.wall_s);
            printf("decode time: simulator %.3fs computing + %.3fs stalled; runtime %.3fs kernel + %.3fs other "
                   "work + %.3fs stalled\n",
                   sim.busy, sim.stall, x.kernel_seconds, real.busy - x.kernel_seconds, real.stall);
            printf("runtime kernel speed step by step, us per block read: P10 %.3g, P50 %.3g, P90 %.3g, P99 %.3g "
                   "(the simulator's is one figure)\n",
                   1e6 * x.step_kernel_p10, 1e6 * x.step_kernel_p50, 1e6 * x.step_kernel_p90,
                   1e6 * x.step_kernel_p99);
            if (ir.ok) {
                printf("\nthe simulator again, charging the kernel this run's speed (%.3g us per block read: "
                       "its kernel time then equals the runtime's %.3fs):\n",
                       1e6 * per_block, x.kernel_seconds);
                print_rows(in_rows, n_in);
            } else {
                printf("\nthe simulator with this run's kernel speed: not run (%s)\n", ir.err);
            }
            if (is.ok) {
                printf("\nthe simulator again, charging each decode step what the runtime's kernel took per block "
                       "read in that step:\n");
                print_rows(step_rows, n_steps);
            } else {
                printf("\nthe simulator with this run's step-by-step kernel speed: not run (%s)\n", is.err);
            }
        }
    }
    json_decref(o);
    json_decref(arr);
    json_decref(in_arr);
    json_decref(st_arr);
    json_decref(st_o);
    json_decref(in_o);
    ks_run_result_fini(&real);
    ks_run_result_fini(&sim);
    ks_scenario_free(sc);
    if (e && rc == KS_EXIT_OK)
        rc = ks_cli_fail(cmd, "cannot write the report");
    if (rc == KS_EXIT_OK && !same)
        rc = ks_cli_fail(cmd, "%s: the runtime and the simulator made different cache decisions (a bug)", file);
    if (rc == KS_EXIT_OK && x.stale_refused > 0)
        rc = ks_cli_fail(cmd, "%s: the runtime read %llu blocks from pages their migration had left (a bug: the "
                         "reading rule did not hold)", file, (unsigned long long)x.stale_refused);
    return rc;
}

const struct ks_cli_cmd ks_validate_cmd = {
    .name = "validate",
    .summary = "Run a scenario on the real runtime and in the simulator; compare them",
    .about = "Runs SCENARIO.lua twice with the same seed and profile: on the real runtime\n"
             "(--device cpu: RAM arenas for L1 and L2, an O_DIRECT file in --dir for L3,\n"
             "migration threads, the reference attention kernels; --device gpu: L1 in\n"
             "device memory, L2 pinned, a CUDA stream per migration lane, the CUDA\n"
             "kernel; never run on a GPU so far) and in the simulator.\n"
             "Prints them side by side: accesses, hit rates per tier, migrated bytes,\n"
             "steps and tokens (identical by construction: the same cache manager sees\n"
             "the same accesses; a difference fails the command), then TPOT mean/P50/P99,\n"
             "stall fraction and copy bandwidth, with the simulator's relative error against the\n"
             "runtime (goals: P50 within 5%, P99 within 10%; missed goals are reported,\n"
             "not failed). Then the same times from the simulator run once more with\n"
             "the kernel charged what the runtime's kernel took in this run, per block\n"
             "read (JSON: with_runtime_kernel_speed): on a machine whose speed drifts,\n"
             "this tells the kernel-time figure's error from the rest of the model's.\n"
             "It also prints the quantiles of the runtime's kernel speed over its decode\n"
             "steps (each step's kernel seconds over its block reads; JSON\n"
             "runtime_step_kernel_p10_s_per_block ... p99): how much the machine alone\n"
             "moves the step time, which no fixed figure predicts; and the simulator\n"
             "a third time, charging each decode step what the runtime's kernel took\n"
             "per block read in that same step (JSON: with_runtime_step_speeds).\n"
             "The runtime supports one node and one GPU, closed arrivals with\n"
             "workload.requests, single-turn requests, colocated prefill, fp16 KV\n"
             "(runtime.h lists it all). The scenario's profile should be measured on\n"
             "this machine (calib/profiles/devvm_cpu_runtime.lua for this project's VM).\n",
    .run = validate,
};
