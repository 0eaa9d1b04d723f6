// run_cmd.c - `kvstrata run`: simulate a scenario, print its summary, write
// its HDF5 result (the summary and the file: sim/study/runfile.h).

#include "run_cmd.h"

#include <jansson.h>
#include <stdio.h>

#include "engine.h"
#include "fs.h"
#include "json.h"
#include "runfile.h"
#include "scenario.h"
#include "scenario_cmd.h"
#include "status.h"

enum { MAX_SETS = 256, ERR_LEN = 1 << 16 };

static int run(const struct ks_cli_cmd *cmd, int argc, char **argv)
{
    const char *file = NULL, *out = NULL;
    const char *sets[MAX_SETS];
    struct ks_cli_strings set = {.v = sets, .cap = MAX_SETS};
    int json = 0;
    const char *seed_text = NULL;
    const struct ks_cli_opt opts[] = {
        {.name = "scenario", .kind = KS_CLI_ARG, .out = &file, .arg = "SCENARIO.lua"},
        {.name = "set", .kind = KS_CLI_STRINGS, .out = &set, .arg = "PATH=VALUE",
         .help = "override a field of the scenario (repeatable, applied in order)"},
        {.name = "seed", .kind = KS_CLI_STRING, .out = &seed_text, .arg = "N",
         .help = "random seed (overrides the scenario's)", .hide_default = 1},
        {.name = "output", .kind = KS_CLI_STRING, .out = &out, .arg = "OUT.h5", .short_name = 'o',
         .help = "result file (default: results/NAME.h5)", .hide_default = 1},
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
        ks_fs_mkdirs("results", 0777, NULL, 0); // a failure shows when the file is made
        snprintf(path, sizeof path, "results/%s.h5", sc->name);
    }
    struct ks_run_result r;
    st = ks_engine_run(sc, &r, err, sizeof err);
    if (st != KS_OK) {
        ks_run_result_fini(&r);
        ks_scenario_free(sc);
        return ks_cli_fail(cmd, "%s: %s", file, err);
    }
    struct ks_run_summary s = {.fig = json_object(), .notes = json_object()};
    int rc = -1;
    if (s.fig && s.notes) {
        ks_run_summarise(&s, sc, &r);
        if (!s.err && (st = ks_run_write(path, &s, &r, err, sizeof err)) != KS_OK) {
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
             "SimGrid until its duration or its last request. One node or a cluster; per GPU\n"
             "a decode engine (continuous batching, admission bounded by L1), a cache\n"
             "manager, and a staging pool of migration lanes.\n"
             "\n"
             "Prints the summary (throughput, TTFT and TPOT mean/P50/P99, hit rate per\n"
             "tier, stall fraction, prefetch accuracy, migrated bytes, SLO) and writes the\n"
             "result file: /summary (the same keys, as attributes) and /requests (one\n"
             "record per request). The same scenario and seed give the same summary,\n"
             "wall_s aside. A run that fails leaves no result file.\n",
    .run = run,
};
