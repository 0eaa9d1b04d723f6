// trace_record_cmd.c - `kvstrata trace record`: a trace from synthetic
// attention run through the kernels (sim/workload/recorder.h), or, for
// sparse.policy = "dsa", from the selection module (sim/workload/selrecord.h).
#define _POSIX_C_SOURCE 200809L // isatty, sigaction

#include "trace_record_cmd.h"

#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "bench_kernels_cmd.h"
#include "json.h"
#include "recorder.h"
#include "results.h"
#include "scenario_cmd.h"
#include "selrecord.h"
#include "status.h"

#define MAX_SETS 64

static volatile sig_atomic_t stopped; // the signal that asked the recording to stop, 0: none

static void on_signal(int sig)
{
    stopped = sig;
}

static int stop_asked(void *arg)
{
    (void)arg;
    return stopped != 0;
}

static void show_progress(void *arg, uint32_t done, uint32_t total, double seconds)
{
    (void)arg;
    fprintf(stderr, "\rtrace record: %u of %u requests, %.1fs ", done, total, seconds);
}

static int run_record(const struct ks_cli_cmd *cmd, int argc, char **argv)
{
    const char *file = NULL, *out = NULL;
    const char *sets[MAX_SETS];
    struct ks_cli_strings set = {.v = sets, .cap = MAX_SETS};
    uint32_t requests = 2, steps = 64;
    // -1: not given (preset: the scenario's sparse.preset; backend: auto)
    int preset = -1, json = 0, backend = -1;
    const struct ks_cli_opt opts[] = {
        {.name = "scenario", .kind = KS_CLI_ARG, .out = &file, .arg = "SCENARIO.lua"},
        {.name = "output", .kind = KS_CLI_STRING, .out = &out, .arg = "TRACE.h5", .short_name = 'o',
         .help = "trace file to write (required)", .hide_default = 1},
        {.name = "set", .kind = KS_CLI_STRINGS, .out = &set, .arg = "PATH=VALUE",
         .help = "override a field of the scenario (repeatable, applied in order)"},
        {.name = "requests", .kind = KS_CLI_U32, .out = &requests, .arg = "N",
         .help = "requests to record (prompt lengths from the scenario's workload)", .min = 1, .max = 1u << 20},
        {.name = "steps", .kind = KS_CLI_U32, .out = &steps, .arg = "N", .help = "decode steps per request",
         .min = 1, .max = 1u << 20},
        {.name = "preset", .kind = KS_CLI_CHOICE, .out = &preset,
         .help = "synthetic attention: how fast the query moves (sim/workload/synth.h); default: the scenario's "
                 "sparse.preset; refused for sparse.policy dsa",
         .choices = ks_recorder_presets, .hide_default = 1},
        {.name = "backend", .kind = KS_CLI_CHOICE, .out = &backend,
         .help = "kernels to run: auto (cuda when a GPU answers, else ref), ref (the C references on the CPU), "
                 "cuda; default auto; refused for sparse.policy dsa (no kernels run)",
         .choices = ks_bench_backend_names, .hide_default = 1},
        {.name = "json", .kind = KS_CLI_FLAG, .out = &json, .help = "print one JSON object on stdout"},
    };
    int status;
    if (!ks_cli_parse(cmd, opts, sizeof opts / sizeof opts[0], argc, argv, &status))
        return status;
    if (!out)
        return ks_cli_usage_error(cmd, "-o TRACE.h5 is required");
    struct ks_scenario *sc = NULL;
    int rc = ks_scenario_cmd_load(cmd, file, sets, set.n, &sc);
    if (rc != KS_EXIT_OK)
        return rc;
    int model = ks_selrecord_supports(sc); // the selection module's model: no synthetic attention, no kernels
    if (model && (preset >= 0 || backend >= 0)) {
        ks_scenario_free(sc);
        return ks_cli_usage_error(cmd,
                                  "%s: sparse.policy is dsa, whose selections are recorded from its model without "
                                  "synthetic attention or kernels: --%s does not apply",
                                  file, preset >= 0 ? "preset" : "backend");
    }
    int cuda = model ? 0 : ks_bench_backend(cmd, backend < 0 ? KS_BENCH_AUTO : backend); // before anything is written
    if (cuda < 0) {
        ks_scenario_free(sc);
        return KS_EXIT_FAIL;
    }
    static char err[1024];
    const char *inputs[] = {file, sc->file, sc->sparse.file, sc->sparse.fit, sc->platform.profile_file,
                            sc->workload.arrival.file, sc->workload.prompt_tokens.file,
                            sc->workload.output_tokens.file};
    if (ks_results_check_target(out, inputs, sizeof inputs / sizeof inputs[0], err, sizeof err) != KS_OK) {
        ks_scenario_free(sc);
        return ks_cli_fail(cmd, "%s", err);
    }
    int tty = isatty(STDERR_FILENO);
    struct ks_recorder_params p = {.sc = sc, .path = out, .requests = requests, .steps = steps, .preset = preset,
                                   .cuda = cuda, .progress = tty ? show_progress : NULL, .stop = stop_asked};
    // SIGINT and SIGTERM stop the recording after its current request's
    // layer (dsa: its step) and, during the write, after it; nothing is left under -o
    struct sigaction sa = {.sa_handler = on_signal, .sa_flags = SA_RESTART};
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    struct ks_recorder_stats rs;
    int st;
    if (model) {
        struct ks_selrecord_params mp = {.sc = sc, .path = out, .requests = requests, .steps = steps,
                                         .progress = p.progress, .stop = stop_asked};
        st = ks_selrecord_run(&mp, &rs, err, sizeof err);
    } else {
        struct ks_recorder *r = ks_recorder_new(&p, err, sizeof err);
        if (!r) {
            ks_scenario_free(sc);
            return ks_cli_fail(cmd, "%s: %s", file, err);
        }
        st = ks_recorder_run(r, &rs, err, sizeof err);
        ks_recorder_free(r);
    }
    if (tty)
        fputs("\r\033[K", stderr);
    ks_scenario_free(sc);
    if (st == KS_OK && stopped) { // it came during the write: the trace goes too
        unlink(out);
        snprintf(err, sizeof err, "interrupted while writing the trace");
        st = KS_ESTATE;
    }
    if (st != KS_OK && stopped)
        return ks_cli_fail(cmd, "%s by %s; no trace written", err, stopped == SIGINT ? "SIGINT" : "SIGTERM");
    if (st != KS_OK)
        return ks_cli_fail(cmd, "%s", err);
    json_t *o = json_object();
    int e = !o;
    if (o) {
        e |= ks_json_set_str(o, "trace", out);
        e |= ks_json_set_str(o, "source", rs.source);
        e |= ks_json_set_int(o, "requests", requests);
        e |= ks_json_set_int(o, "steps", steps);
        e |= ks_json_set_int(o, "layers", rs.layers);
        e |= ks_json_set_int(o, "records", (int64_t)rs.records);
        e |= ks_json_set_num(o, "mean_selected", rs.records ? (double)rs.selected / (double)rs.records : 0);
        e |= ks_json_set_str(o, "backend", model ? "none" : cuda ? "cuda" : "ref");
        if (!model) // a model's records carry kernel_time -1: not measured
            e |= ks_json_set_num(o, "kernel_time_mean", rs.records ? rs.kernel_seconds / (double)rs.records : 0);
        e |= ks_json_set_num(o, "wall_s", rs.wall_s);
    }
    int prc = e ? -1 : json ? ks_json_print(stdout, o) : ks_json_print_table(stdout, o, NULL);
    json_decref(o);
    return prc == 0 ? KS_EXIT_OK : ks_cli_fail(cmd, "cannot write the report");
}

const struct ks_cli_cmd ks_trace_record_cmd = {
    .name = "trace record",
    .summary = "Record an access trace from synthetic attention run through the kernels, or from the dsa model",
    .about = "Draws prompt lengths from the scenario's workload and, for each request, runs\n"
             "--steps decode steps of synthetic attention (the scenario's sparse.preset,\n"
             "--preset winning when given, with sparse.topic_switch and retrieval_prob\n"
             "where the scenario gives them) through the kernels (--backend: the CUDA kernels\n"
             "on device memory when a GPU answers, else the C references): block\n"
             "summaries, Quest scoring with sink, window and top-k (sparse.sink_blocks,\n"
             "window_blocks, budget_tokens / block_size) and the\n"
             "block-sparse decode kernel, whose access report gives each selected block's\n"
             "attention mass. Model shape and block size come from the scenario. Writes\n"
             "TRACE.h5 whole or not at all (schema in results/README.md). Each record's\n"
             "kernel_time is the seconds of the block-sparse decode kernel that gave it,\n"
             "one call for one sequence (batch 1) and one layer over its selected blocks:\n"
             "ks_sparse_decode_ref on the CPU (ref), or ks_sparse_decode_cuda from an\n"
             "idle device until it is idle again, launch included (cuda); summaries,\n"
             "selection and the synthetic generator are not timed. --backend cuda without\n"
             "a GPU fails and writes nothing. Cost grows with layers x steps x selected\n"
             "blocks: a 32-layer, 32K-token request takes minutes for 64 steps (ref).\n"
             "\n"
             "With sparse.policy = \"dsa\" no attention is synthesised and no kernel runs:\n"
             "each record is the selection (blocks and masses) that the dsa model returns\n"
             "to a run through the selection module (sim/workload/selrecord.h), for the\n"
             "same request ids (workload order), prompt lengths and decode steps, the\n"
             "context being prompt + step + 1 tokens; kernel_time is -1 (not measured)\n"
             "and --preset and --backend are refused. Replaying it (sparse.policy =\n"
             "\"trace\") selects what the dsa run selects for requests 0 .. N-1 decoding\n"
             "at most --steps steps (cache.evict = \"belady\" needs the replay). Records\n"
             "are streamed to the writer; the file image (compressed) is held in memory\n"
             "until it is written. GLM-5.1 (78 layers), 32K prompt, 2048 tokens of\n"
             "block_size 1: one request of 128 steps is 20M selected entries, 87 MB on\n"
             "disk, recorded in about 6 s.\n",
    .run = run_record,
};
