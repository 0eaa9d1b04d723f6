// trace_model_cmd.c - `kvstrata trace model`: fits the access model to a
// trace and writes a trace of the same shape drawn from the model, so that
// `kvstrata trace stats` can compare the two (the model is what
// sparse.policy = "model" runs on).
#include "trace_model_cmd.h"

#include <math.h>
#include <stdio.h>

#include "accessmodel.h"
#include "json.h"
#include "results.h"
#include "status.h"
#include "trace.h"
#include "tracestats.h"

static int run_model(const struct ks_cli_cmd *cmd, int argc, char **argv)
{
    const char *file = NULL, *out = NULL;
    uint64_t seed = 1;
    int json = 0;
    const struct ks_cli_opt opts[] = {
        {.name = "trace", .kind = KS_CLI_ARG, .out = &file, .arg = "TRACE.h5"},
        {.name = "output", .kind = KS_CLI_STRING, .out = &out, .arg = "OUT.h5", .short_name = 'o',
         .help = "trace to write, drawn from the model (required)", .hide_default = 1},
        {.name = "seed", .kind = KS_CLI_U64, .out = &seed, .arg = "N", .help = "seed of the draws", .max = UINT64_MAX},
        {.name = "json", .kind = KS_CLI_FLAG, .out = &json, .help = "print one JSON object on stdout"},
    };
    int status;
    if (!ks_cli_parse(cmd, opts, sizeof opts / sizeof opts[0], argc, argv, &status))
        return status;
    if (!out)
        return ks_cli_usage_error(cmd, "-o OUT.h5 is required");
    static char err[1024];
    const char *inputs[] = {file}; // the trace it fits: -o must not overwrite it
    if (ks_results_check_target(out, inputs, 1, err, sizeof err) != KS_OK)
        return ks_cli_fail(cmd, "%s", err);
    struct ks_trace *src = ks_trace_load(file, err, sizeof err);
    if (!src)
        return ks_cli_fail(cmd, "%s", err);
    struct ks_accessmodel *m = ks_accessmodel_fit(src, NULL, err, sizeof err);
    int st = m ? ks_accessmodel_write(m, src, seed, out, err, sizeof err) : KS_EINVAL;
    struct ks_trace *gen = st == KS_OK ? ks_trace_load(out, err, sizeof err) : NULL;
    struct ks_tracestats a = {0}, b = {0};
    if (gen && (ks_tracestats_compute(src, &a) != KS_OK || ks_tracestats_compute(gen, &b) != KS_OK)) {
        snprintf(err, sizeof err, "out of memory computing the statistics");
        st = KS_ENOMEM;
    }
    int rc = KS_EXIT_OK;
    if (!m || st != KS_OK || !gen) {
        rc = ks_cli_fail(cmd, "%s", err);
    } else {
        json_t *o = json_object(), *notes = json_object();
        int e = !o || !notes;
        static const char *const names[] = {"reuse_1", "reuse_4", "reuse_16", "reuse_256"};
        e |= ks_json_set_str(o, "source", file) | ks_json_set_str(o, "model_trace", out);
        for (int i = 0; i < 4; i++) {
            char k[64];
            double x = a.reuse[i], y = b.reuse[i];
            snprintf(k, sizeof k, "%s_source", names[i]);
            e |= ks_json_set_real(o, k, x);
            snprintf(k, sizeof k, "%s_model", names[i]);
            e |= ks_json_set_real(o, k, y);
            snprintf(k, sizeof k, "%s_error", names[i]);
            e |= ks_json_set_real(o, k, x > 0 ? (y - x) / x : NAN);
            e |= ks_json_set_str(notes, k, "relative: (model - source) / source");
        }
        e |= ks_json_set_str(notes, "model_trace", "drawn from the model fitted to the source");
        rc = e ? -1 : json ? ks_json_print(stdout, o) : ks_json_print_table(stdout, o, notes);
        json_decref(o);
        json_decref(notes);
        rc = rc == 0 ? KS_EXIT_OK : ks_cli_fail(cmd, "cannot write the report");
    }
    ks_tracestats_fini(&a);
    ks_tracestats_fini(&b);
    ks_trace_free(gen);
    ks_accessmodel_free(m);
    ks_trace_free(src);
    return rc;
}

const struct ks_cli_cmd ks_trace_model_cmd = {
    .name = "trace model",
    .summary = "Fit the access model to a trace and write a trace drawn from it",
    .about = "Fits the statistical access model (sim/workload/accessmodel.h; what sparse.policy =\n"
             "\"model\" runs on) to TRACE.h5, writes OUT.h5 with the same requests, steps and\n"
             "contexts drawn from the model, and prints the reuse fractions of both (as\n"
             "`trace stats` defines them) with the model's relative error.\n",
    .run = run_model,
};
