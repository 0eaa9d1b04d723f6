// scenario_cmd.c - `kvstrata scenario check`: the resolved scenario, or its errors.
//
// Output: one line per field ("path  value  # origin") in schema order, or
// with --json one object whose keys are the dotted field paths (numbers in
// base units, strings as written, null for an optional field left out), plus
// "file", "unit" (path -> base unit) and "origin" (path -> {from, source,
// kind}). Bad input: the errors on stderr, nothing on stdout, exit 2.
#include "scenario_cmd.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "engine.h"
#include "json.h"
#include "scenario.h"
#include "status.h"
#include "units.h"

enum { MAX_SETS = 256, ERR_LEN = 1 << 16 };

struct show {
    json_t *values, *notes, *units, *origins;
    int err;
};

// A whole count written in decimal, exactly: a JSON integer up to 2^63 - 1,
// its text above (as the run's summary shows a seed).
static json_t *exact_count(const char *text)
{
    errno = 0;
    unsigned long long v = strtoull(text, NULL, 10);
    return errno == 0 && v <= INT64_MAX ? json_integer((json_int_t)v) : json_string(text);
}

static int add_item(const struct ks_scenario_item *it, void *ud)
{
    struct show *s = ud;
    const struct ks_scenario_origin *o = it->origin;
    if (s->notes) { // text
        char note[1024];
        if (o->source)
            snprintf(note, sizeof note, "%s: %s [%s]", o->from, o->source, o->kind ? o->kind : "?");
        else
            snprintf(note, sizeof note, "%s", o->from ? o->from : "?");
        s->err |= ks_json_set_str(s->values, it->path, it->text);
        s->err |= ks_json_set_str(s->notes, it->path, note);
        return 0;
    }
    if (!it->is_set)
        s->err |= json_object_set_new(s->values, it->path, json_null());
    else if (it->is_number && !it->unit[0] && it->text[0] && !it->text[strspn(it->text, "0123456789")])
        s->err |= json_object_set_new(s->values, it->path, exact_count(it->text)); // a seed beyond 2^53
    else if (it->is_number)
        s->err |= ks_json_set_num(s->values, it->path, it->number);
    else
        s->err |= ks_json_set_str(s->values, it->path, it->text);
    if (it->is_number)
        s->err |= ks_json_set_str(s->units, it->path, it->unit);
    json_t *org = json_object();
    if (!org)
        return s->err = -1;
    s->err |= ks_json_set_str(org, "from", o->from ? o->from : "?");
    if (o->source) {
        s->err |= ks_json_set_str(org, "source", o->source);
        s->err |= ks_json_set_str(org, "kind", o->kind ? o->kind : "?");
    }
    s->err |= json_object_set_new(s->origins, it->path, org);
    return 0;
}

// One figure the architecture gives (arch.h): in the table with its unit,
// in JSON in base units with its unit and origin "derived".
static void add_derived(struct show *s, const char *path, double v, enum ks_unit unit, const char *unit_name,
                        const char *note)
{
    if (s->notes) {
        char text[64];
        ks_units_format(v, unit, text, sizeof text);
        s->err |= ks_json_set_str(s->values, path, text);
        s->err |= ks_json_set_str(s->notes, path, note);
        return;
    }
    s->err |= ks_json_set_num(s->values, path, v);
    s->err |= ks_json_set_str(s->units, path, unit_name);
    json_t *org = json_object();
    if (!org) {
        s->err = -1;
        return;
    }
    s->err |= ks_json_set_str(org, "from", note);
    s->err |= json_object_set_new(s->origins, path, org);
}

static void add_arch(struct show *s, const struct ks_scenario *sc)
{
    const struct ks_arch *a = &sc->model.arch;
    const char *how = sc->model.weights_given ? "derived from model.weight_bytes" : "derived from the architecture";
    add_derived(s, "derived.params", a->params, KS_UNIT_COUNT, "", how);
    add_derived(s, "derived.active_params", a->active_params, KS_UNIT_COUNT, "",
                "derived: the weights one token uses (all but the routed experts it is not sent to)");
    add_derived(s, "derived.weight_bytes", a->weight_bytes, KS_UNIT_BYTES, "B", how);
    add_derived(s, "derived.kv_bytes_per_token", (double)a->kv_token_bytes * sc->model.layers, KS_UNIT_BYTES, "B",
                "derived: one token's KV, all layers");
    add_derived(s, "derived.index_bytes_per_token", (double)a->index_token_bytes * sc->model.layers, KS_UNIT_BYTES,
                "B", "derived: one token's index keys, all layers (model.indexer; resident in HBM)");
    if (sc->sparse.summaries != KS_SUMMARIES_NONE)
        add_derived(s, "derived.summary_bytes_per_token", a->summary_token_bytes * sc->model.layers, KS_UNIT_BYTES,
                    "B", "derived: one token's share of its block's page summaries on one GPU, all layers "
                    "(sparse.summaries; resident in HBM)");
}

static int load(const struct ks_cli_cmd *cmd, const char *file, const char *const *sets, size_t n_sets,
                int no_kernel_time, struct ks_scenario **out)
{
    static char err[ERR_LEN];
    struct stat sb; // NOTE: before the loader opens it: reading a FIFO would block
    if (file && stat(file, &sb) == 0 && !S_ISREG(sb.st_mode)) {
        fflush(stdout);
        fprintf(stderr, "%s: is %s, not a regular file\nkvstrata %s: %s is not a valid scenario\n", file,
                S_ISDIR(sb.st_mode) ? "a folder" : S_ISFIFO(sb.st_mode) ? "a FIFO" : "a device or socket", cmd->name,
                file);
        return KS_EXIT_USAGE;
    }
    struct ks_scenario_params p = {.sets = sets, .n_sets = n_sets, .no_kernel_time = no_kernel_time};
    int st = ks_scenario_load(file, &p, out, err, sizeof err);
    if (st == KS_ENOMEM)
        return ks_cli_fail(cmd, "%s", err);
    if (st != KS_OK) {
        fflush(stdout);
        fprintf(stderr, "%s\nkvstrata %s: %s is not a valid scenario\n", err, cmd->name, file);
        return KS_EXIT_USAGE;
    }
    return KS_EXIT_OK;
}

int ks_scenario_cmd_load(const struct ks_cli_cmd *cmd, const char *file, const char *const *sets, size_t n_sets,
                         struct ks_scenario **out)
{
    return load(cmd, file, sets, n_sets, 0, out);
}

int ks_scenario_cmd_load_seed(const struct ks_cli_cmd *cmd, const char *file, const char *const *sets,
                              size_t n_sets, const char *seed_text, int no_kernel_time, struct ks_scenario **out)
{
    if (!seed_text)
        return load(cmd, file, sets, n_sets, no_kernel_time, out);
    uint64_t seed;
    char why[128], seed_set[64];
    if (ks_cli_parse_u64(seed_text, 0, UINT64_MAX, &seed, why, sizeof why) != 0)
        return ks_cli_usage_error(cmd, "--seed %s: %s", seed_text, why);
    snprintf(seed_set, sizeof seed_set, "seed=%llu", (unsigned long long)seed);
    const char **all = malloc((n_sets + 1) * sizeof *all);
    if (!all)
        return ks_cli_fail(cmd, "out of memory");
    if (n_sets)
        memcpy(all, sets, n_sets * sizeof *all);
    all[n_sets] = seed_set;
    int st = load(cmd, file, all, n_sets + 1, no_kernel_time, out);
    free(all);
    return st;
}

static int run_check(const struct ks_cli_cmd *cmd, int argc, char **argv)
{
    const char *file = NULL;
    const char *sets[MAX_SETS];
    struct ks_cli_strings set = {.v = sets, .cap = MAX_SETS};
    int json = 0;
    const struct ks_cli_opt opts[] = {
        {.name = "scenario", .kind = KS_CLI_ARG, .out = &file, .arg = "SCENARIO.lua"},
        {.name = "set", .kind = KS_CLI_STRINGS, .out = &set, .arg = "PATH=VALUE",
         .help = "override a field of the scenario (repeatable, applied in order)"},
        {.name = "json", .kind = KS_CLI_FLAG, .out = &json, .help = "print one JSON object on stdout"},
    };
    int status;
    if (!ks_cli_parse(cmd, opts, sizeof opts / sizeof opts[0], argc, argv, &status))
        return status;
    struct ks_scenario *sc = NULL;
    int rc0 = ks_scenario_cmd_load(cmd, file, sets, set.n, &sc);
    if (rc0 != KS_EXIT_OK)
        return rc0;
    static char err[4096];
    if (ks_engine_check(sc, err, sizeof err) != KS_OK) { // what run would refuse before simulating
        ks_scenario_free(sc);
        fprintf(stderr, "%s\nkvstrata %s: %s is not a valid scenario\n", err, cmd->name, file);
        return KS_EXIT_USAGE;
    }
    struct show s = {.values = json_object()};
    if (json) {
        s.units = json_object();
        s.origins = json_object();
    } else {
        s.notes = json_object();
    }
    int rc = -1;
    if (s.values && (s.notes || (s.units && s.origins))) {
        s.err |= ks_json_set_str(s.values, "file", file);
        if (s.notes)
            s.err |= ks_json_set_str(s.notes, "file", "the scenario");
        ks_scenario_foreach(sc, add_item, &s);
        add_arch(&s, sc);
        if (json) {
            s.err |= json_object_set(s.values, "unit", s.units);
            s.err |= json_object_set(s.values, "origin", s.origins);
        }
        if (!s.err)
            rc = json ? ks_json_print(stdout, s.values) : ks_json_print_table(stdout, s.values, s.notes);
    }
    json_decref(s.values);
    json_decref(s.notes);
    json_decref(s.units);
    json_decref(s.origins);
    ks_scenario_free(sc);
    return rc == 0 ? KS_EXIT_OK : ks_cli_fail(cmd, "cannot write the report");
}

const struct ks_cli_cmd ks_scenario_check_cmd = {
    .name = "scenario check",
    .summary = "Load and validate a scenario; show every field resolved",
    .about = "Runs SCENARIO.lua (a Lua file that returns a table; it may require \"kvstrata\"),\n"
             "applies the --set overrides (PATH is a field such as cache.block_size or\n"
             "platform.ssd.read_bw; VALUE reads as a number, true/false, or else a string\n"
             "such as 7GBps or 85%), merges the platform profile (calib/profiles/NAME.lua or\n"
             "an inline table; the scenario's own figures win), fills the defaults and checks\n"
             "everything. Nothing is simulated.\n"
             "\n"
             "Prints each field with its value and unit and where it came from (file and\n"
             "line, --set, default, or the profile with the figure's source and kind). With\n"
             "--json: one object whose keys are the field paths (values in base units:\n"
             "bytes, bytes/s, seconds, fractions), with \"unit\" and \"origin\" objects.\n"
             "Then what the model's architecture gives (derived.*): parameters, those one\n"
             "token uses, weight bytes, and the KV and index-key bytes of one token.\n"
             "\n"
             "Bad input (unknown field, wrong type or unit, negative or inconsistent value,\n"
             "L1 too small for one step): every error as FILE:LINE: field.path: reason on\n"
             "stderr, nothing on stdout, exit status 2.\n",
    .run = run_check,
};
