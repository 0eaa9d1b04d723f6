// validate_cmd.c - `kvstrata validate`: the runtime (kernels/runtime/runtime.h) and
// the simulator on the same scenario, seed and profile, side by side.
//
// The comparison is sim/study/validate.h's: identical cache decisions (a
// difference fails the command), then the simulator's times against the
// runtime's with relative errors and goals. This file parses the options,
// measures the kernel table when asked and prints (text or --json).
#define _POSIX_C_SOURCE 200809L // isatty

#include "validate_cmd.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <unistd.h>

#include "bench_kernels_cmd.h"
#include "device.h"
#include "fs.h"
#include "json.h"
#include "runtime.h"
#include "scenario_cmd.h"
#include "status.h"
#include "validate.h"

enum { MAX_SETS = 256, ERR_LEN = 1 << 16 };

static const char *const devices[] = {"cpu", "gpu", NULL};

static int add_row(json_t *rows, const struct ks_validate_row *w)
{
    json_t *o = json_object();
    if (!o)
        return -1;
    int e = ks_json_set_str(o, "metric", w->key);
    e |= ks_json_set_num(o, "simulator", w->sim);
    e |= ks_json_set_num(o, "runtime", w->real);
    double r = ks_validate_rel(w->sim, w->real);
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
static void print_rows(const struct ks_validate_row *rows, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const struct ks_validate_row *w = &rows[i];
        double r = ks_validate_rel(w->sim, w->real);
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
    struct ks_validate_kernels k;
    int st = ks_validate_kernels_plan(sc, &k, err, len);
    if (st != KS_OK)
        return st;
    struct ks_bench_shape sh = {.kv_heads = k.kv_heads, .q_heads = k.q_heads, .head_dim = k.head_dim,
                                .block_size = k.block_size, .context = k.context, .batch = k.batch,
                                .repeat = k.repeat, .seed = k.seed};
    if (ks_bench_kernel_table(&sh, k.blocks, k.n, k.seconds, err, len) != 0)
        return KS_EINVAL;
    return ks_validate_kernels_install(sc, &k, err, len);
}

// A rerun's rows, or why it did not run, as an object (a new reference in
// *out, NULL on error); 0 or -1.
static int in_run_json(const struct ks_validate_in_run *ir, json_t **out)
{
    json_t *arr = json_array(), *o = json_object();
    int e = !arr || !o;
    for (size_t i = 0; !e && i < ir->n_rows; i++)
        e |= add_row(arr, &ir->rows[i]);
    if (!e)
        e |= ir->ok ? json_object_set(o, "rows", arr) : ks_json_set_str(o, "error", ir->err);
    json_decref(arr);
    if (e) {
        json_decref(o);
        o = NULL;
    }
    *out = o;
    return e ? -1 : 0;
}

// The --json report (also made, and checked, for the text one); NULL on error.
static json_t *report_json(const struct ks_scenario *sc, int device, const struct ks_validate *v, const char *host_cpu)
{
    const struct ks_runtime_extra *x = &v->x;
    const struct ks_run_result *real = &v->real, *sim = &v->sim;
    json_t *o = json_object(), *arr = json_array(), *in_o = NULL, *st_o = NULL;
    int e = !o || !arr;
    for (size_t i = 0; !e && i < v->n_rows; i++)
        e |= add_row(arr, &v->rows[i]);
    if (!e)
        e |= in_run_json(&v->in_run, &in_o) | in_run_json(&v->in_steps, &st_o);
    if (!e) {
        // the simulator with this run's kernel speed (validate.h)
        e |= ks_json_set_num(o, "in_run_kernel_s_per_block", v->per_block);
        e |= json_object_set(o, "with_runtime_kernel_speed", in_o);
        e |= json_object_set(o, "with_runtime_step_speeds", st_o);
    }
    if (!e) {
        e |= ks_json_set_str(o, "scenario", sc->name);
        e |= ks_json_set_str(o, "device", devices[device]);
        e |= ks_json_set_num(o, "seed", (double)sc->seed);
        e |= ks_json_set_str(o, "profile", sc->platform.profile);
        e |= sc->platform.profile_cpu ? ks_json_set_str(o, "profile_cpu", sc->platform.profile_cpu)
                                      : json_object_set_new(o, "profile_cpu", json_null());
        e |= ks_json_set_str(o, "host_cpu", host_cpu);
        e |= json_object_set(o, "rows", arr);
        e |= ks_json_set_bool(o, "hit_rates_identical", v->same);
        e |= ks_json_set_num(o, "runtime_kernel_launches", (double)x->kernel_launches);
        e |= ks_json_set_num(o, "runtime_reads", (double)x->reads);
        e |= ks_json_set_num(o, "runtime_reads_inflight", (double)x->reads_inflight);
        e |= ks_json_set_num(o, "runtime_reads_scratch", (double)x->reads_scratch);
        e |= ks_json_set_num(o, "runtime_stale_refused", (double)x->stale_refused);
        e |= ks_json_set_num(o, "runtime_table_refreshed", (double)x->table_refreshed);
        e |= ks_json_set_num(o, "runtime_copies_ahead", (double)x->copies_ahead);
        e |= ks_json_set_num(o, "runtime_table_uploads", (double)x->table_uploads);
        e |= ks_json_set_num(o, "runtime_table_uploads_skipped", (double)x->table_uploads_skipped);
        e |= ks_json_set_num(o, "runtime_paused_s", x->paused);
        e |= ks_json_set_num(o, "runtime_kernel_s", x->kernel_seconds);
        e |= ks_json_set_num(o, "runtime_step_kernel_p10_s_per_block", x->step_kernel_p10);
        e |= ks_json_set_num(o, "runtime_step_kernel_p50_s_per_block", x->step_kernel_p50);
        e |= ks_json_set_num(o, "runtime_step_kernel_p90_s_per_block", x->step_kernel_p90);
        e |= ks_json_set_num(o, "runtime_step_kernel_p99_s_per_block", x->step_kernel_p99);
        e |= ks_json_set_num(o, "runtime_busy_s", real->busy);
        e |= ks_json_set_num(o, "runtime_stall_s", real->stall);
        e |= ks_json_set_num(o, "sim_busy_s", sim->busy);
        e |= ks_json_set_num(o, "sim_stall_s", sim->stall);
        e |= ks_json_set_num(o, "runtime_wall_s", real->wall_s);
    }
    json_decref(arr);
    json_decref(in_o);
    json_decref(st_o);
    if (e) {
        json_decref(o);
        return NULL;
    }
    return o;
}

static void print_text(const struct ks_scenario *sc, int device, const struct ks_validate *v, const char *host_cpu)
{
    const struct ks_runtime_extra *x = &v->x;
    const struct ks_run_result *real = &v->real, *sim = &v->sim;
    printf("%s (seed %llu, device %s)\n", sc->name, (unsigned long long)sc->seed, devices[device]);
    printf("profile %s, measured on %s; this machine: %s\n", sc->platform.profile,
           sc->platform.profile_cpu ? sc->platform.profile_cpu : "a CPU it does not name", host_cpu);
    printf("%-22s %16s %16s %10s  %s\n", "metric", "simulator", "runtime", "error", "");
    print_rows(v->rows, v->n_rows);
    printf("runtime: %llu kernel launches, %llu block reads (%llu in flight, %llu via scratch), "
           "%llu stale reads refused, %llu table entries located afresh (their block had moved), "
           "%llu needed batches started before the step reached their layer, clock paused %.2fs, %.1fs wall\n",
           (unsigned long long)x->kernel_launches, (unsigned long long)x->reads,
           (unsigned long long)x->reads_inflight, (unsigned long long)x->reads_scratch,
           (unsigned long long)x->stale_refused, (unsigned long long)x->table_refreshed,
           (unsigned long long)x->copies_ahead, x->paused, real->wall_s);
    printf("decode time: simulator %.3fs computing + %.3fs stalled; runtime %.3fs kernel + %.3fs other "
           "work + %.3fs stalled\n",
           sim->busy, sim->stall, x->kernel_seconds, real->busy - x->kernel_seconds, real->stall);
    printf("runtime kernel speed step by step, us per block read: P10 %.3g, P50 %.3g, P90 %.3g, P99 %.3g "
           "(the simulator's is one figure)\n",
           1e6 * x->step_kernel_p10, 1e6 * x->step_kernel_p50, 1e6 * x->step_kernel_p90, 1e6 * x->step_kernel_p99);
    if (v->in_run.ok) {
        printf("\nthe simulator again, charging the kernel this run's speed (%.3g us per block read: "
               "its kernel time then equals the runtime's %.3fs):\n",
               1e6 * v->per_block, x->kernel_seconds);
        print_rows(v->in_run.rows, v->in_run.n_rows);
    } else {
        printf("\nthe simulator with this run's kernel speed: not run (%s)\n", v->in_run.err);
    }
    if (v->in_steps.ok) {
        printf("\nthe simulator again, charging each decode step what the runtime's kernel took per block "
               "read in that step:\n");
        print_rows(v->in_steps.rows, v->in_steps.n_rows);
    } else {
        printf("\nthe simulator with this run's step-by-step kernel speed: not run (%s)\n", v->in_steps.err);
    }
}

static int validate(const struct ks_cli_cmd *cmd, int argc, char **argv)
{
    const char *file = NULL, *dir = "/var/tmp", *out = NULL, *seed_text = NULL;
    const char *sets[MAX_SETS];
    struct ks_cli_strings set = {.v = sets, .cap = MAX_SETS};
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
    char why[KS_KERNEL_ERR_LEN] = "";
    if (device == 1 && ks_device_count(why, sizeof why) <= 0)
        return ks_cli_fail(cmd, "--device gpu: no GPU answers here (%s); --device cpu runs the runtime on this CPU",
                           why);
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
    char host_cpu[256];
    if (ks_validate_other_machine(sc, host_cpu, sizeof host_cpu) == 1)
        fprintf(stderr,
                "kvstrata %s: warning: profile %s was measured on %s, this machine is %s: its figures are likely not "
                "this machine's (results/fidelity/2026-12-06_xeon/: another CPU's put the simulator 14-52%% off); "
                "measure this one (kvstrata calib host, kvstrata bench kernels)\n",
                cmd->name, sc->platform.profile, sc->platform.profile_cpu, host_cpu);
    struct ks_validate v;
    struct ks_validate_params vp = {.dir = dir, .progress = isatty(STDERR_FILENO), .gpu = device == 1};
    if ((st = ks_validate_run(sc, &vp, &v, err, sizeof err)) != KS_OK) {
        ks_scenario_free(sc);
        return ks_cli_fail(cmd, "%s: %s", file, err);
    }
    int rc = KS_EXIT_OK;
    if (out && ks_validate_write(out, sc, &v, err, sizeof err) != KS_OK)
        rc = ks_cli_fail(cmd, "%s", err);
    json_t *o = report_json(sc, device, &v, host_cpu);
    int e = !o;
    if (!e && rc == KS_EXIT_OK) {
        if (json)
            e |= ks_json_print(stdout, o);
        else
            print_text(sc, device, &v, host_cpu);
    }
    json_decref(o);
    uint64_t stale = v.x.stale_refused;
    int same = v.same;
    ks_validate_fini(&v);
    ks_scenario_free(sc);
    if (e && rc == KS_EXIT_OK)
        rc = ks_cli_fail(cmd, "cannot write the report");
    if (rc == KS_EXIT_OK && !same)
        rc = ks_cli_fail(cmd, "%s: the runtime and the simulator made different cache decisions (a bug)", file);
    if (rc == KS_EXIT_OK && stale > 0)
        rc = ks_cli_fail(cmd, "%s: the runtime read %llu blocks from pages their migration had left (a bug: the "
                         "reading rule did not hold)", file, (unsigned long long)stale);
    return rc;
}

const struct ks_cli_cmd ks_validate_cmd = {
    .name = "validate",
    .summary = "Run a scenario on the real runtime and in the simulator; compare them",
    .about = "Runs SCENARIO.lua twice with the same seed and profile: on the real runtime\n"
             "(--device cpu: RAM arenas for L1 and L2, an O_DIRECT file in --dir for L3,\n"
             "migration threads, the reference attention kernels; --device gpu: L1 in\n"
             "device memory, L2 pinned, a CUDA stream per migration lane, the CUDA\n"
             "kernel; first run on an H200 on 2026-12-04) and in the simulator.\n"
             "Prints them side by side: accesses, hit rates per tier, migrated bytes,\n"
             "steps and tokens (identical by construction: the same cache manager sees\n"
             "the same accesses; a difference fails the command), then ITL mean/P50/P99,\n"
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
             "this machine: scenarios/validation/ use devvm_cpu_runtime, this project's\n"
             "VM as an AMD EPYC; on it as an Intel Xeon, --set\n"
             "platform.profile=devvm_xeon_cpu_runtime (results/fidelity/2026-12-06_xeon/:\n"
             "the other CPU's figures put its ITL P50 14-52% off). On another\n"
             "machine, measure it first (kvstrata calib host, kvstrata bench kernels).\n"
             "The report names the CPU the profile was measured on (its `cpu`, which\n"
             "calib host and calib gpu write) and this machine's (JSON: profile,\n"
             "profile_cpu, host_cpu); when they differ, a warning on stderr says so.\n",
    .run = validate,
};
