// plan_cmd.c - `kvstrata plan`: the smallest platform or the largest
// load that meets a scenario's SLO, by bisection over one monotone field.
//
// The plan file and the search are slo.h's; each point runs as its own
// `kvstrata run` process (point.h), writing DIR/plan-NNN.h5. This file
// parses the options and prints the answer, every point simulated and the
// margin at the answer.
#define _POSIX_C_SOURCE 200809L // isatty

#include "plan_cmd.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "json.h"
#include "slo.h"
#include "status.h"

// One line per point on a terminal: a run can take minutes.
static void show_point(void *ud, size_t k, const char *field, double x)
{
    (void)ud;
    fprintf(stderr, "plan: point %zu simulated, %s = %g\n", k, field, x);
}

static int print_plan(const char *file, const struct ks_slo_plan *p, const struct ks_slo_result *r, int json)
{
    const char *none = p->largest ? "even the smallest value misses the SLO" : "even the largest value misses the SLO";
    json_t *o = json_object(), *list = json_array();
    int e = !o || !list;
    e |= ks_json_set_str(o, "plan", file) | ks_json_set_str(o, "field", p->field);
    e |= ks_json_set_str(o, "goal", p->largest ? "largest" : "smallest");
    e |= json_object_set_new(o, "found", json_boolean(r->found));
    if (r->found) {
        e |= ks_json_set_real(o, "answer", r->answer);
        e |= ks_json_set_real(o, "margin", r->pts[r->at].s.margin);
    } else {
        e |= json_object_set_new(o, "answer", json_null());
        e |= ks_json_set_str(o, "why", none);
    }
    for (size_t i = 0; i < r->n && list; i++) {
        const struct ks_point_summary *s = &r->pts[i].s;
        json_t *q = json_object();
        e |= !q || ks_json_set_real(q, "value", r->pts[i].x) || json_object_set_new(q, "met", json_boolean(s->met)) ||
             ks_json_set_real(q, "margin", s->margin);
        for (size_t k = 0; q && k < s->n; k++)
            e |= ks_json_set_real(q, s->name[k], s->fig[k]);
        e |= !q || ks_json_set_real(q, "output_throughput", s->throughput) || json_array_append_new(list, q);
    }
    e |= json_object_set_new(o, "points", list);
    int rc;
    if (e) {
        rc = -1;
    } else if (json) {
        rc = ks_json_print(stdout, o);
    } else {
        printf("plan %s: %s %s meeting the SLO of %s\n", file, p->largest ? "largest" : "smallest", p->field, p->base);
        if (r->found)
            printf("answer  %s = %g (margin %.1f%% on the tightest objective)\n", p->field, r->answer,
                   100 * r->pts[r->at].s.margin);
        else
            printf("answer  none: %s\n", none);
        const struct ks_point_summary *first = &r->pts[0].s; // every point judges the same objectives
        printf("%-14s %-5s %9s", "value", "met", "margin");
        for (size_t k = 0; r->n && k < first->n; k++)
            printf(" %12s", first->name[k]);
        printf(" %14s\n", "tokens/s");
        for (size_t i = 0; i < r->n; i++) {
            const struct ks_point_summary *s = &r->pts[i].s;
            printf("%-14g %-5s %8.1f%%", r->pts[i].x, s->met ? "yes" : "no", 100 * s->margin);
            for (size_t k = 0; k < s->n; k++)
                printf(" %12.6g", s->fig[k]);
            printf(" %14.6g\n", s->throughput);
        }
        rc = fflush(stdout) == 0 ? 0 : -1;
    }
    json_decref(o);
    return rc;
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
    static struct ks_slo_plan p;
    static struct ks_slo_result r;
    static char err[8192], dbuf[4096];
    memset(&p, 0, sizeof p);
    int st = ks_slo_load(file, &p, err, sizeof err);
    if (st != KS_OK) {
        ks_slo_fini(&p);
        fprintf(stderr, "%s\n", err);
        return st == KS_ENOMEM ? KS_EXIT_FAIL : KS_EXIT_USAGE;
    }
    if (!dir) {
        const char *b = strrchr(file, '/');
        b = b ? b + 1 : file;
        snprintf(dbuf, sizeof dbuf, "results/plan-%.*s", (int)(strcspn(b, ".")), b);
        dir = dbuf;
    }
    struct ks_slo_params sp = {.dir = dir, .progress = isatty(STDERR_FILENO) ? show_point : NULL};
    st = ks_slo_search(&p, &sp, &r, err, sizeof err);
    ks_slo_fini(&p); // the sets only: the report below still reads the field and the SLO
    if (st != KS_OK)
        return ks_cli_fail(cmd, "%s", err);
    return print_plan(file, &p, &r, json) == 0 ? KS_EXIT_OK : ks_cli_fail(cmd, "cannot write the report");
}

const struct ks_cli_cmd ks_plan_cmd = {
    .name = "plan",
    .summary = "Find the smallest platform or the largest load that meets a scenario's SLO",
    .about = "PLAN.lua returns {base = SCENARIO, set = {path = value, ...}, search = {field =\n"
             "PATH, from = A, to = B, goal = \"smallest\" | \"largest\", tolerance = 0.05}}.\n"
             "The SLO is the scenario's slo on the run's figures (ttft, tpot, itl, e2el:\n"
             "_mean or _p99); a point meets it when its summary's slo_met is true. \"smallest\"\n"
             "finds the smallest value of the field that meets it, assuming more never\n"
             "hurts (nodes, GPUs, DRAM, drives); \"largest\" the largest value that still\n"
             "meets it, assuming more never helps (an arrival rate). Bisection stops\n"
             "within tolerance (default 0.05) x the value, or at 1 for whole-number\n"
             "bounds (values stay whole then). Every point runs as its own\n"
             "kvstrata run process and writes DIR/plan-NNN.h5 and .json. Prints the\n"
             "answer, the margin on the tightest objective at the answer, and every point.\n",
    .run = run_plan,
};
