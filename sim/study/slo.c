// slo.c - the SLO search behind `kvstrata plan` (see slo.h).
//
// The search simulates the two ends first: the answer must lie between
// them. When they disagree it bisects, keeping one end that meets the SLO
// and one that misses it, until the interval is within tolerance x its top
// (or 1 for whole-number bounds). Point k writes DIR/plan-NNN.h5 and .json.
#define _POSIX_C_SOURCE 200809L // access

#include "slo.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fs.h"
#include "luatab.h"
#include "point.h"
#include "runfile.h"
#include "scenario.h"
#include "status.h"

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

int ks_slo_load(const char *file, struct ks_slo_plan *p, char *err, size_t len)
{
    struct ks_luatab *t = NULL;
    int st = ks_luatab_load(file, ks_scenario_lua_dirs(), &t, err, len);
    if (st != KS_OK)
        return st;
    st = KS_EINVAL;
    const struct ks_luatab *base = ks_luatab_get(t, "base"), *set = ks_luatab_get(t, "set"),
                           *search = ks_luatab_get(t, "search");
    if (ks_scenario_file_kind(t) == KS_FILE_SCENARIO) {
        plan_error(err, len, file, "%s",
                   "is a scenario, not a plan: a plan names its scenario, {base = \"SCENARIO.lua\", set = {...}, "
                   "search = {...}} (kvstrata plan --help; scenarios/plans/)");
        goto out;
    }
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
        if (p->n_sets == KS_SLO_MAX_SETS || scalar(ch, v, sizeof v) != 0) {
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
    if (!ks_run_slo_set(&p->slo)) {
        plan_error(err, len, file, "%s",
                   "the base scenario sets no slo on the run's figures (ttft, tpot, itl or e2el: _mean or _p99)");
        goto out;
    }
    st = KS_OK;
out:
    ks_luatab_free(t);
    return st;
}

void ks_slo_fini(struct ks_slo_plan *p)
{
    for (size_t i = 0; i < p->n_sets; i++)
        free(p->sets[i]);
    p->n_sets = 0;
}

// Runs the base with the field at x as point k; fills pt.
static int simulate(const struct ks_slo_plan *p, const struct ks_slo_params *sp, const char *exe, size_t k, double x,
                    struct ks_slo_point *pt, char *err, size_t len)
{
    char h5[4200], js[4200], xs[320];
    snprintf(h5, sizeof h5, "%s/plan-%03zu.h5", sp->dir, k);
    snprintf(js, sizeof js, "%s/plan-%03zu.json", sp->dir, k);
    snprintf(xs, sizeof xs, "%s=%.17g", p->field, x);
    const char *sets[KS_SLO_MAX_SETS + 1];
    for (size_t i = 0; i < p->n_sets; i++)
        sets[i] = p->sets[i];
    sets[p->n_sets] = xs;
    struct ks_point pp = {.exe = exe, .base = p->base, .sets = sets, .n_sets = p->n_sets + 1, .h5 = h5};
    int code = 0;
    if (ks_point_run(&pp, &(struct ks_point_io){.out = js, .mode = 0644}, &code, err, len) != KS_OK || code != 0) {
        snprintf(err, len, "the run at %s = %g failed (its messages are above; its output %s)", p->field, x, js);
        return KS_EINVAL;
    }
    if (sp->progress)
        sp->progress(sp->ud, k, p->field, x);
    *pt = (struct ks_slo_point){.x = x};
    return ks_point_summary_read(js, &pt->s, err, len) == KS_OK ? KS_OK : KS_EINVAL;
}

// Bisects between the points r->pts[0] (at from) and r->pts[1] (at to),
// which disagree; fills the answer.
static int bisect(const struct ks_slo_plan *p, const struct ks_slo_params *sp, const char *exe,
                  struct ks_slo_result *r, char *err, size_t len)
{
    double lo = p->from, hi = p->to;
    size_t ilo = 0, ihi = 1; // the points at lo and hi
    int st = KS_OK;
    for (;;) {
        double w = hi - lo;
        if (w <= p->tolerance * hi || (p->integer && w <= 1))
            break;
        if (r->n == KS_SLO_MAX_POINTS) {
            snprintf(err, len, "no answer within %d points", KS_SLO_MAX_POINTS);
            st = KS_EINVAL;
            break;
        }
        double mid = p->integer ? floor((lo + hi) / 2) : (lo + hi) / 2;
        if ((st = simulate(p, sp, exe, r->n, mid, &r->pts[r->n], err, len)) != KS_OK)
            break;
        // smallest: met values sit above; largest: below
        int up = r->pts[r->n].s.met != p->largest;
        if (up)
            hi = mid, ihi = r->n;
        else
            lo = mid, ilo = r->n;
        r->n++;
    }
    r->found = st == KS_OK;
    r->at = p->largest ? ilo : ihi;
    r->answer = r->pts[r->at].x;
    return st;
}

int ks_slo_search(const struct ks_slo_plan *p, const struct ks_slo_params *sp, struct ks_slo_result *r, char *err,
                  size_t len)
{
    memset(r, 0, sizeof *r);
    r->answer = NAN;
    char *exe = ks_point_self_exe();
    if (!exe || ks_fs_mkdirs(sp->dir, 0755, NULL, 0) != KS_OK || access(sp->dir, W_OK) != 0) {
        snprintf(err, len, "%s", !exe ? "cannot find the kvstrata program" : "cannot create the output folder");
        free(exe);
        return KS_EIO;
    }
    // the ends first: the answer must lie between them
    int st = simulate(p, sp, exe, r->n, p->from, &r->pts[r->n], err, len);
    r->n += st == KS_OK;
    if (st == KS_OK) {
        st = simulate(p, sp, exe, r->n, p->to, &r->pts[r->n], err, len);
        r->n += st == KS_OK;
    }
    if (st == KS_OK) {
        int lo_met = r->pts[0].s.met, hi_met = r->pts[1].s.met;
        if (!p->largest && lo_met) {
            r->found = 1, r->answer = p->from, r->at = 0;
        } else if (p->largest && hi_met) {
            r->found = 1, r->answer = p->to, r->at = 1;
        } else if ((!p->largest && hi_met) || (p->largest && lo_met)) {
            st = bisect(p, sp, exe, r, err, len);
        }
    }
    free(exe);
    return st;
}
