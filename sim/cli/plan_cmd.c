// plan_cmd.c - `kvstrata plan`: the smallest platform or the largest
// load that meets a scenario's SLO, by bisection over one monotone field.
//
// A plan file is Lua returning a table:
//   base   = "../scenarios/doc_qa_128k.lua",  -- relative to the plan file
//   set    = {["duration"] = "60s"},           -- optional: fixed overrides (dotted paths, scalar values)
//   search = {field = "platform.nodes", from = 1, to = 16, goal = "smallest"},
//            -- or {field = "workload.arrival.rate", from = 0.5, to = 64, goal = "largest",
//            --     tolerance = 0.05}  (stop when the interval is within tolerance x its top;
//            --     integer bounds keep the values whole and stop at an interval of 1 at most)
// The SLO is the scenario's `slo` (tpot_p99, tpot_mean, ttft_p99; at least
// one): a point meets it when every objective set holds. "smallest" assumes
// that more of the field never hurts (nodes, GPUs, DRAM, drives) and finds
// the smallest value that meets the SLO; "largest" assumes that more of it
// never helps (arrival rate) and finds the largest value that still meets
// it. Each point runs as its own `kvstrata run` process (SimGrid initialises
// once per process), writing DIR/plan-NNN.h5; the answer, every point
// simulated and the margin at the answer are printed.
#define _POSIX_C_SOURCE 200809L // posix_spawn, realpath

#include "plan_cmd.h"

#include <fcntl.h>
#include <math.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fs.h"
#include "json.h"
#include "luatab.h"
#include "scenario.h"
#include "status.h"

extern char **environ;

#define MAX_SETS 64
#define MAX_POINTS 64

struct plan {
    char base[4096];
    char *sets[MAX_SETS + 1]; // "path=value"; the searched field is appended per point
    size_t n_sets;
    char field[256];
    double from, to, tolerance;
    int integer, largest;
    struct ks_scenario_slo slo;
};

struct point {
    double x;
    int met, ok;
    double tpot_p99, tpot_mean, ttft_p99, throughput;
};

static int plan_error(char *err, size_t len, const char *file, const char *fmt, const char *a)
{
    char why[512];
    snprintf(why, sizeof why, fmt, a);
    snprintf(err, len, "%s: %s", file, why);
    return KS_EINVAL;
}

static int scalar(const struct ks_luatab *n, char *buf, size_t len)
{
    if (n->type == KS_LUATAB_STRING)
        snprintf(buf, len, "%s", n->s);
    else if (n->type == KS_LUATAB_INT)
        snprintf(buf, len, "%lld", (long long)n->i);
    else if (n->type == KS_LUATAB_REAL)
        snprintf(buf, len, "%.17g", n->d);
    else if (n->type == KS_LUATAB_BOOL)
        snprintf(buf, len, "%s", n->b ? "true" : "false");
    else
        return -1;
    return 0;
}

static int number(const struct ks_luatab *t, const char *key, double *out)
{
    const struct ks_luatab *n = ks_luatab_get(t, key);
    if (!n || (n->type != KS_LUATAB_INT && n->type != KS_LUATAB_REAL) || !isfinite(n->d))
        return -1;
    *out = n->d;
    return 0;
}

// Reads the plan file and its base scenario's SLO.
static int load_plan(const char *file, struct plan *p, char *err, size_t len)
{
    struct ks_luatab *t = NULL;
    int st = ks_luatab_load(file, NULL, &t, err, len);
    if (st != KS_OK)
        return st;
    st = KS_EINVAL;
    const struct ks_luatab *base = ks_luatab_get(t, "base"), *set = ks_luatab_get(t, "set"),
                           *search = ks_luatab_get(t, "search");
    for (const struct ks_luatab *ch = t->child; ch; ch = ch->next)
        if (strcmp(ch->key, "base") != 0 && strcmp(ch->key, "set") != 0 && strcmp(ch->key, "search") != 0) {
            plan_error(err, len, file, "unknown field '%s'; a plan has base, set and search", ch->key);
            goto out;
        }
    if (!base || base->type != KS_LUATAB_STRING || !base->s[0]) {
        plan_error(err, len, file, "%s", "base: the scenario to plan for, a file name");
        goto out;
    }
    const char *slash = strrchr(file, '/');
    int dl = base->s[0] == '/' || !slash ? 0 : (int)(slash - file) + 1;
    snprintf(p->base, sizeof p->base, "%.*s%s", dl, file, base->s);
    for (const struct ks_luatab *ch = set && set->type == KS_LUATAB_TABLE ? set->child : NULL; ch; ch = ch->next) {
        char v[512];
        if (p->n_sets == MAX_SETS || scalar(ch, v, sizeof v) != 0) {
            plan_error(err, len, file, "set.%s: a dotted field path with a number or string (at most 64)", ch->key);
            goto out;
        }
        size_t n = strlen(ch->key) + strlen(v) + 2;
        if (!(p->sets[p->n_sets] = malloc(n))) {
            st = KS_ENOMEM;
            goto out;
        }
        snprintf(p->sets[p->n_sets++], n, "%s=%s", ch->key, v);
    }
    if (set && set->type != KS_LUATAB_TABLE) {
        plan_error(err, len, file, "%s", "set: a table of field = value");
        goto out;
    }
    const struct ks_luatab *f = search ? ks_luatab_get(search, "field") : NULL,
                           *g = search ? ks_luatab_get(search, "goal") : NULL;
    if (!search || search->type != KS_LUATAB_TABLE || !f || f->type != KS_LUATAB_STRING || !g ||
        g->type != KS_LUATAB_STRING || number(search, "from", &p->from) != 0 || number(search, "to", &p->to) != 0) {
        plan_error(err, len, file, "%s",
                   "search: {field = \"platform.nodes\", from = N, to = M, goal = \"smallest\" or \"largest\"}");
        goto out;
    }
    snprintf(p->field, sizeof p->field, "%s", f->s);
    p->largest = strcmp(g->s, "largest") == 0;
    if (!p->largest && strcmp(g->s, "smallest") != 0) {
        plan_error(err, len, file, "search.goal: '%s' is neither \"smallest\" nor \"largest\"", g->s);
        goto out;
    }
    const struct ks_luatab *fr = ks_luatab_get(search, "from"), *to = ks_luatab_get(search, "to");
    p->integer = fr->type == KS_LUATAB_INT && to->type == KS_LUATAB_INT;
    p->tolerance = 0.05;
    if (ks_luatab_get(search, "tolerance") && (number(search, "tolerance", &p->tolerance) != 0 ||
                                               !(p->tolerance > 0 && p->tolerance < 1))) {
        plan_error(err, len, file, "%s", "search.tolerance: a share of the value, between 0 and 1");
        goto out;
    }
    if (!(p->from < p->to) || p->from < 0) {
        plan_error(err, len, file, "%s", "search: from must be below to, and not negative");
        goto out;
    }
    // the base with the fixed overrides and the field at `from` must be valid, and have an SLO
    char xs[320];
    snprintf(xs, sizeof xs, "%s=%.17g", p->field, p->from);
    p->sets[p->n_sets] = xs;
    struct ks_scenario_params sp = {.sets = (const char *const *)p->sets, .n_sets = p->n_sets + 1};
    struct ks_scenario *sc = NULL;
    char why[4096];
    if (ks_scenario_load(p->base, &sp, &sc, why, sizeof why) != KS_OK) {
        snprintf(err, len, "%s: the base scenario with its overrides is not valid:\n%s", file, why);
        p->sets[p->n_sets] = NULL;
        goto out;
    }
    p->sets[p->n_sets] = NULL;
    p->slo = sc->slo;
    ks_scenario_free(sc);
    if (p->slo.tpot_p99 <= 0 && p->slo.tpot_mean <= 0 && p->slo.ttft_p99 <= 0) {
        plan_error(err, len, file, "%s", "the base scenario sets no slo (tpot_p99, tpot_mean or ttft_p99)");
        goto out;
    }
    st = KS_OK;
out:
    ks_luatab_free(t);
    return st;
}

static double get(const json_t *o, const char *key)
{
    const json_t *v = json_object_get(o, key);
    return json_is_number(v) ? json_number_value(v) : NAN;
}

// Runs the base at x as its own process; fills pt.
static int simulate(const struct plan *p, const char *exe, const char *dir, size_t k, double x, struct point *pt,
                    char *err, size_t len)
{
    char h5[4200], js[4200], xs[320];
    snprintf(h5, sizeof h5, "%s/plan-%03zu.h5", dir, k);
    snprintf(js, sizeof js, "%s/plan-%03zu.json", dir, k);
    snprintf(xs, sizeof xs, "%s=%.17g", p->field, x);
    const char *argv[4 + 2 * (MAX_SETS + 1) + 4];
    size_t a = 0;
    argv[a++] = exe;
    argv[a++] = "run";
    argv[a++] = p->base;
    for (size_t i = 0; i < p->n_sets; i++) {
        argv[a++] = "--set";
        argv[a++] = p->sets[i];
    }
    argv[a++] = "--set";
    argv[a++] = xs;
    argv[a++] = "-o";
    argv[a++] = h5;
    argv[a++] = "--json";
    argv[a] = NULL;
    posix_spawn_file_actions_t fa;
    pid_t pid = -1;
    if (posix_spawn_file_actions_init(&fa) != 0)
        return KS_ENOMEM;
    if (posix_spawn_file_actions_addopen(&fa, STDOUT_FILENO, js, O_WRONLY | O_CREAT | O_TRUNC, 0644) != 0 ||
        posix_spawn(&pid, exe, &fa, NULL, (char *const *)argv, environ) != 0)
        pid = -1;
    posix_spawn_file_actions_destroy(&fa);
    int ws = 0;
    if (pid < 0 || waitpid(pid, &ws, 0) < 0 || !WIFEXITED(ws) || WEXITSTATUS(ws) != 0) {
        snprintf(err, len, "the run at %s = %g failed (its messages are above; its output %s)", p->field, x, js);
        return KS_EINVAL;
    }
    json_error_t je;
    if (isatty(STDERR_FILENO)) // progress: one line per point, a run can take minutes
        fprintf(stderr, "plan: point %zu simulated, %s = %g\n", k, p->field, x);
    json_t *o = json_load_file(js, 0, &je);
    if (!o) {
        snprintf(err, len, "%s: %s", js, je.text);
        return KS_EINVAL;
    }
    *pt = (struct point){.x = x, .ok = 1, .tpot_p99 = get(o, "tpot_p99"), .tpot_mean = get(o, "tpot_mean"),
                         .ttft_p99 = get(o, "ttft_p99"), .throughput = get(o, "throughput_tokens")};
    json_decref(o);
    // an objective with no measure (no request reached a second token) is not met
    pt->met = (p->slo.tpot_p99 <= 0 || pt->tpot_p99 <= p->slo.tpot_p99) &&
              (p->slo.tpot_mean <= 0 || pt->tpot_mean <= p->slo.tpot_mean) &&
              (p->slo.ttft_p99 <= 0 || pt->ttft_p99 <= p->slo.ttft_p99);
    return KS_OK;
}

// The smallest share by which the point beats its objectives (negative: misses).
static double margin(const struct plan *p, const struct point *pt)
{
    double m = INFINITY;
    if (p->slo.tpot_p99 > 0)
        m = fmin(m, (p->slo.tpot_p99 - pt->tpot_p99) / p->slo.tpot_p99);
    if (p->slo.tpot_mean > 0)
        m = fmin(m, (p->slo.tpot_mean - pt->tpot_mean) / p->slo.tpot_mean);
    if (p->slo.ttft_p99 > 0)
        m = fmin(m, (p->slo.ttft_p99 - pt->ttft_p99) / p->slo.ttft_p99);
    return m;
}

static int run_plan(const struct ks_cli_cmd *cmd, int argc, char **argv)
{
    const char *file = NULL, *dir = NULL;
    int json = 0;
    const struct ks_cli_opt opts[] = {
        {.name = "plan", .kind = KS_CLI_ARG, .out = &file, .arg = "PLAN.lua"},
        {.name = "output", .kind = KS_CLI_STRING, .out = &dir, .arg = "DIR", .short_name = 'o',
         .help = "folder for each point's result (default: results/plan-<plan name>)", .hide_default = 1},
        {.name = "json", .kind = KS_CLI_FLAG, .out = &json, .help = "print one JSON object on stdout"},
    };
    int status;
    if (!ks_cli_parse(cmd, opts, sizeof opts / sizeof opts[0], argc, argv, &status))
        return status;
    static struct plan p;
    static char err[8192], exe[4096], dbuf[4096];
    memset(&p, 0, sizeof p);
    int st = load_plan(file, &p, err, sizeof err);
    if (st != KS_OK) {
        for (size_t i = 0; i < p.n_sets; i++)
            free(p.sets[i]);
        fprintf(stderr, "%s\n", err);
        return st == KS_ENOMEM ? KS_EXIT_FAIL : KS_EXIT_USAGE;
    }
    if (!dir) {
        const char *b = strrchr(file, '/');
        b = b ? b + 1 : file;
        snprintf(dbuf, sizeof dbuf, "results/plan-%.*s", (int)(strcspn(b, ".")), b);
        dir = dbuf;
    }
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0 || (ks_fs_mkdirs(dir, 0755, NULL, 0) != KS_OK || access(dir, W_OK) != 0)) {
        for (size_t i = 0; i < p.n_sets; i++)
            free(p.sets[i]);
        return ks_cli_fail(cmd, "%s", n <= 0 ? "cannot find the kvstrata program" : "cannot create the output folder");
    }
    exe[n] = '\0';
    struct point pts[MAX_POINTS];
    size_t k = 0;
    double lo = p.from, hi = p.to;
    // the ends first: the answer must lie between them
    st = simulate(&p, exe, dir, k, lo, &pts[k], err, sizeof err);
    k += st == KS_OK;
    int lo_met = st == KS_OK && pts[0].met;
    if (st == KS_OK) {
        st = simulate(&p, exe, dir, k, hi, &pts[k], err, sizeof err);
        k += st == KS_OK;
    }
    int hi_met = st == KS_OK && pts[1].met;
    int found = 0;
    double answer = NAN;
    size_t at = 0;
    if (st == KS_OK) {
        if (!p.largest && lo_met) {
            found = 1, answer = lo, at = 0;
        } else if (p.largest && hi_met) {
            found = 1, answer = hi, at = 1;
        } else if ((!p.largest && hi_met) || (p.largest && lo_met)) {
            size_t ilo = 0, ihi = 1; // the points at lo and hi
            for (;;) {
                double w = hi - lo;
                if (w <= p.tolerance * hi || (p.integer && w <= 1))
                    break;
                if (k == MAX_POINTS) {
                    snprintf(err, sizeof err, "no answer within %d points", MAX_POINTS);
                    st = KS_EINVAL;
                    break;
                }
                double mid = p.integer ? floor((lo + hi) / 2) : (lo + hi) / 2;
                if ((st = simulate(&p, exe, dir, k, mid, &pts[k], err, sizeof err)) != KS_OK)
                    break;
                // smallest: met values sit above; largest: below
                int up = pts[k].met != p.largest;
                if (up)
                    hi = mid, ihi = k;
                else
                    lo = mid, ilo = k;
                k++;
            }
            found = st == KS_OK;
            at = p.largest ? ilo : ihi;
            answer = pts[at].x;
        }
    }
    for (size_t i = 0; i < p.n_sets; i++)
        free(p.sets[i]);
    if (st != KS_OK)
        return ks_cli_fail(cmd, "%s", err);
    json_t *o = json_object(), *list = json_array();
    int e = !o || !list;
    e |= ks_json_set_str(o, "plan", file) | ks_json_set_str(o, "field", p.field);
    e |= ks_json_set_str(o, "goal", p.largest ? "largest" : "smallest");
    e |= json_object_set_new(o, "found", json_boolean(found));
    if (found) {
        e |= ks_json_set_real(o, "answer", answer);
        e |= ks_json_set_real(o, "margin", margin(&p, &pts[at]));
    } else {
        e |= json_object_set_new(o, "answer", json_null());
        e |= ks_json_set_str(o, "why", p.largest ? "even the smallest value misses the SLO"
                                                 : "even the largest value misses the SLO");
    }
    for (size_t i = 0; i < k && list; i++) {
        json_t *q = json_object();
        e |= !q || ks_json_set_real(q, "value", pts[i].x) || json_object_set_new(q, "met", json_boolean(pts[i].met)) ||
             ks_json_set_real(q, "tpot_p99", pts[i].tpot_p99) || ks_json_set_real(q, "tpot_mean", pts[i].tpot_mean) ||
             ks_json_set_real(q, "ttft_p99", pts[i].ttft_p99) ||
             ks_json_set_real(q, "throughput_tokens", pts[i].throughput) || json_array_append_new(list, q);
    }
    e |= json_object_set_new(o, "points", list);
    int rc;
    if (e) {
        rc = -1;
    } else if (json) {
        rc = ks_json_print(stdout, o);
    } else {
        printf("plan %s: %s %s meeting the SLO of %s\n", file, p.largest ? "largest" : "smallest", p.field, p.base);
        if (found)
            printf("answer  %s = %g (margin %.1f%% on the tightest objective)\n", p.field, answer,
                   100 * margin(&p, &pts[at]));
        else
            printf("answer  none: %s\n", p.largest ? "even the smallest value misses the SLO"
                                                   : "even the largest value misses the SLO");
        printf("%-14s %-5s %12s %12s %12s %14s\n", "value", "met", "tpot_p99", "tpot_mean", "ttft_p99", "tokens/s");
        for (size_t i = 0; i < k; i++)
            printf("%-14g %-5s %12.6g %12.6g %12.6g %14.6g\n", pts[i].x, pts[i].met ? "yes" : "no", pts[i].tpot_p99,
                   pts[i].tpot_mean, pts[i].ttft_p99, pts[i].throughput);
        rc = fflush(stdout) == 0 ? 0 : -1;
    }
    json_decref(o);
    return rc == 0 ? KS_EXIT_OK : ks_cli_fail(cmd, "cannot write the report");
}

const struct ks_cli_cmd ks_plan_cmd = {
    .name = "plan",
    .summary = "Find the smallest platform or the largest load that meets a scenario's SLO",
    .about = "PLAN.lua returns {base = SCENARIO, set = {path = value, ...}, search = {field =\n"
             "PATH, from = A, to = B, goal = \"smallest\" | \"largest\", tolerance = 0.05}}.\n"
             "The SLO is the scenario's slo (tpot_p99, tpot_mean, ttft_p99). \"smallest\"\n"
             "finds the smallest value of the field that meets it, assuming more never\n"
             "hurts (nodes, GPUs, DRAM, drives); \"largest\" the largest value that still\n"
             "meets it, assuming more never helps (an arrival rate). Bisection stops\n"
             "within tolerance (default 0.05) x the value, or at 1 for whole-number\n"
             "bounds (values stay whole then). Every point runs as its own\n"
             "kvstrata run process and writes DIR/plan-NNN.h5 and .json. Prints the\n"
             "answer, the margin on the tightest objective at the answer, and every point.\n",
    .run = run_plan,
};
