// run_cmd.c - `kvstrata run`: simulate a scenario, print its summary, write
// its HDF5 result (the summary and the file: sim/study/runfile.h).

#define _POSIX_C_SOURCE 200809L // sigaction, unlink

#include "run_cmd.h"

#include <inttypes.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine.h"
#include "fs.h"
#include "json.h"
#include "results.h"
#include "runfile.h"
#include "scenario.h"
#include "scenario_cmd.h"
#include "status.h"

enum { MAX_SETS = 256, ERR_LEN = 1 << 16 };

static void on_signal(int sig)
{
    ks_engine_stop(sig); // only a flag: the engine stops at its next step
}

// SIGINT and SIGTERM stop the simulation at its next step (and, during the
// write, are handled after it); the run then leaves no result.
static void catch_signals(void)
{
    struct sigaction sa = {.sa_handler = on_signal, .sa_flags = SA_RESTART};
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
}

// The files the run reads, which -o must not replace.
static int check_output(const struct ks_scenario *sc, const char *path, char *err, size_t len)
{
    enum { FIXED = 7 };
    const char **inputs = malloc((FIXED + sc->n_included) * sizeof *inputs);
    if (!inputs) {
        snprintf(err, len, "out of memory");
        return KS_ENOMEM;
    }
    const char *fixed[FIXED] = {sc->file, sc->sparse.file, sc->sparse.fit, sc->platform.profile_file,
                                sc->workload.arrival.file, sc->workload.prompt_tokens.file,
                                sc->workload.output_tokens.file};
    memcpy(inputs, fixed, sizeof fixed);
    for (size_t i = 0; i < sc->n_included; i++)
        inputs[FIXED + i] = sc->included[i];
    int rc = ks_results_check_target(path, inputs, FIXED + sc->n_included, err, len);
    free(inputs);
    return rc;
}

static int run(const struct ks_cli_cmd *cmd, int argc, char **argv)
{
    const char *file = NULL, *out = NULL;
    const char *sets[MAX_SETS];
    struct ks_cli_strings set = {.v = sets, .cap = MAX_SETS};
    int json = 0;
    const char *seed_text = NULL;
    uint32_t threads = ks_engine_threads_default();
    const struct ks_cli_opt opts[] = {
        {.name = "scenario", .kind = KS_CLI_ARG, .out = &file, .arg = "SCENARIO.lua"},
        {.name = "set", .kind = KS_CLI_STRINGS, .out = &set, .arg = "PATH=VALUE",
         .help = "override a field of the scenario (repeatable, applied in order)"},
        {.name = "seed", .kind = KS_CLI_STRING, .out = &seed_text, .arg = "N",
         .help = "random seed, 0 to 2^64 - 1 (overrides the scenario's)", .hide_default = 1},
        {.name = "output", .kind = KS_CLI_STRING, .out = &out, .arg = "OUT.h5", .short_name = 'o',
         .help = "result file (default: results/NAME.h5)", .hide_default = 1},
        {.name = "threads", .kind = KS_CLI_U32, .out = &threads, .arg = "N", .min = 1, .max = 1024,
         .help = "threads, the simulation's own included (default: the online CPUs, at most 4)",
         .hide_default = 1},
        {.name = "json", .kind = KS_CLI_FLAG, .out = &json, .help = "print one JSON object on stdout"},
    };
    int status;
    if (!ks_cli_parse(cmd, opts, sizeof opts / sizeof opts[0], argc, argv, &status))
        return status;
    static char err[ERR_LEN];
    struct ks_scenario *sc = NULL;
    int st = ks_scenario_cmd_load_seed(cmd, file, sets, set.n, seed_text, 0, &sc);
    if (st != KS_EXIT_OK)
        return st;
    static char path[4096];
    if (out) {
        snprintf(path, sizeof path, "%s", out);
    } else {
        char name[256];
        ks_results_safe_name(sc->name, name, sizeof name); // a scenario's name never leaves results/
        ks_fs_mkdirs("results", 0777, NULL, 0); // a failure shows when the file is made
        snprintf(path, sizeof path, "results/%s.h5", name);
    }
    if (check_output(sc, path, err, sizeof err) != KS_OK) {
        ks_scenario_free(sc);
        return ks_cli_fail(cmd, "%s", err);
    }
    catch_signals();
    struct ks_run_result r;
    st = ks_engine_run(sc, threads, &r, err, sizeof err);
    if (st != KS_OK) {
        ks_run_result_fini(&r);
        ks_scenario_free(sc);
        return ks_cli_fail(cmd, "%s: %s", file, err);
    }
    if (r.truncated)
        fprintf(stderr, "run: %s: the duration limit (%g s) ended the run: %llu of %llu requests finished\n", file,
                sc->duration, (unsigned long long)r.finished, (unsigned long long)sc->workload.requests);
    struct ks_scenario sampled;
    uint32_t stands_for = ks_scenario_sampled(sc, &sampled);
    if (stands_for > 1)
        fprintf(stderr, "run: %s: detail.nodes: %" PRIu32 " of the %" PRIu32 " nodes simulated; the sums over the "
                "GPUs are theirs times %" PRIu32 ", the distributions theirs\n", file, sampled.platform.nodes,
                sc->platform.nodes, stands_for);
    if (stands_for > 1 && sc->router == KS_ROUTER_LEAST_LOADED && sc->workload.arrival.kind == KS_ARRIVAL_POISSON)
        fprintf(stderr, "run: %s: detail.nodes: the least-loaded router balanced random arrivals over the sampled "
                "nodes' GPUs only, so TTFT and TPOT may come out above the whole cluster's (README, detail.nodes)\n",
                file);
    struct ks_run_summary s = {.fig = json_object(), .notes = json_object()};
    int rc = -1;
    if (s.fig && s.notes) {
        ks_run_summarise(&s, sc, &r);
        if (!s.err && (st = ks_run_write(path, &s, sc, &r, err, sizeof err)) == KS_OK && ks_engine_stopped()) {
            unlink(path); // a signal during the write: an interrupted run leaves no result
            snprintf(err, sizeof err, "%s: interrupted while writing; no result", path);
            st = KS_ESTATE;
        }
        if (st != KS_OK) {
            json_decref(s.fig);
            json_decref(s.notes);
            ks_run_result_fini(&r);
            ks_scenario_free(sc);
            return ks_cli_fail(cmd, "%s", err);
        }
        s.err |= ks_json_set_str(s.fig, "result", path);
        s.err |= ks_json_set_str(s.notes, "result", "HDF5 result file");
        if (!s.err)
            rc = json ? ks_json_print(stdout, s.fig) : ks_json_print_table(stdout, s.fig, s.notes);
    }
    json_decref(s.fig);
    json_decref(s.notes);
    ks_run_result_fini(&r);
    ks_scenario_free(sc);
    return rc == 0 ? KS_EXIT_OK : ks_cli_fail(cmd, "cannot write the report");
}

const struct ks_cli_cmd ks_run_cmd = {
    .name = "run",
    .summary = "Simulate a scenario; print its summary and write its HDF5 result",
    .about = "Loads and checks SCENARIO.lua as `scenario check` does, then simulates it on\n"
             "SimGrid until its duration, or, with workload.requests, until they have all\n"
             "finished (the duration is then a limit: reaching it sets truncated = 1 and\n"
             "says on stderr how many finished). One node or a cluster; per GPU\n"
             "a decode engine (continuous batching, admission bounded by L1), a cache\n"
             "manager, and a staging pool of migration lanes.\n"
             "\n"
             "Prints the summary (throughput and goodput; TTFT, TPOT per request, ITL and\n"
             "end-to-end latency, each mean/P50/P90/P99; hit rate per tier, stall fraction,\n"
             "prefetch accuracy, migrated bytes, SLO) and writes the\n"
             "result file: /summary (the same keys, as attributes) and /requests (one\n"
             "record per request). The same scenario and seed give the same summary,\n"
             "wall_s aside. A run that fails leaves no result file, and so does a run\n"
             "stopped by SIGINT or SIGTERM (it stops at the next decode step). -o must\n"
             "name a regular file or nothing, and none of the run's inputs (the scenario\n"
             "and the files it includes, a trace it replays or fits, its profile, its\n"
             "arrival or length traces).\n"
             "\n"
             "--threads N: the simulation itself runs on one thread (SimGrid's actors take\n"
             "turns). With N > 1 and a sparse policy that draws each request's selections\n"
             "from its own state (topk, retrieval, model, dsa), N - 1 workers draw every\n"
             "GPU's next decode step's selections while its current step runs (but the\n"
             "model's of requests all in L1, which wait: cache.accounting), and\n"
             "attention ranks in lockstep (parallel.ranks) hand them each decode step's\n"
             "cache work (selections, accesses, plan), so that the ranks beginning a step\n"
             "together prepare theirs side by side; the other policies (window, stride,\n"
             "random, dense, mixed, trace) use one thread whatever N. Elsewhere (GPUs on\n"
             "their own, whose steps seldom start at one instant; detail.gpus' followers)\n"
             "the cache manager stays on the simulation's thread, as do the Lua cache\n"
             "policies and the statistics. The summary and the result file's records are\n"
             "the same for any N (wall_s aside).\n",
    .run = run,
};
