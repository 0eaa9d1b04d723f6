// compare.c - the page of a report: one run, or several against the first
// (see compare.h).
//
// Everything shown comes from the runs' summaries as read back from their
// files; units and groups come from runfile.h's table, so this file knows no
// key beyond the few the headline and the verdicts name. The page needs
// nothing from the network (no external style, script or font) and reads
// on a phone: tables scroll sideways inside their own box, images shrink.

#include "compare.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "atomicfile.h"
#include "runfile.h"
#include "status.h"

// ---- words ---------------------------------------------------------------------

// Text appended to a caller's buffer, cut at its end.
struct text {
    char *buf;
    size_t len, used;
};

__attribute__((format(printf, 2, 3))) static void put(struct text *t, const char *fmt, ...)
{
    if (t->used >= t->len)
        return;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(t->buf + t->used, t->len - t->used, fmt, ap);
    va_end(ap);
    if (n > 0)
        t->used += (size_t)n;
}

static double num_of(const json_t *fig, const char *key)
{
    const json_t *v = json_object_get(fig, key);
    return json_is_number(v) ? json_number_value(v) : json_is_boolean(v) ? json_is_true(v) : NAN;
}

// fig's key in its unit; "n/a" when fig lacks it (a file of an older version).
static const char *shown(const json_t *fig, const char *key, char *buf, size_t len)
{
    const json_t *v = json_object_get(fig, key);
    if (!v)
        snprintf(buf, len, "n/a");
    else
        ks_run_format(key, v, buf, len);
    return buf;
}

// An objective's name in words: "tpot_p99" -> "TPOT P99", "ttft_mean" ->
// "TTFT mean", "e2el" -> "E2EL".
static void objective_words(const char *name, char *buf, size_t len)
{
    size_t i = 0;
    for (; name[i] && name[i] != '_' && i + 1 < len; i++)
        buf[i] = (char)(name[i] >= 'a' && name[i] <= 'z' ? name[i] - 'a' + 'A' : name[i]);
    buf[i] = '\0';
    const char *stat = name[i] == '_' ? name + i + 1 : "";
    if (stat[0] == 'p')
        snprintf(buf + i, len - i, " P%s", stat + 1);
    else if (stat[0])
        snprintf(buf + i, len - i, " %s", stat);
}

void ks_compare_objective(const json_t *fig, const char *name, char *buf, size_t len)
{
    char words[64], key[96], limit[64], value[64], by[64];
    objective_words(name, words, sizeof words);
    snprintf(key, sizeof key, "slo_%s", name);
    shown(fig, key, limit, sizeof limit);
    snprintf(key, sizeof key, "slo_margin_%s", name);
    double margin = num_of(fig, key);
    struct text t = {buf, len, 0};
    put(&t, "%s <= %s: ", words, limit);
    if (isnan(margin)) {
        put(&t, "not measured, missed");
        return;
    }
    json_t *size = json_real(fabs(margin)); // "missed by 12%", not "by -12%"
    ks_run_format(key, size, by, sizeof by);
    json_decref(size);
    put(&t, "%s, %s by %s", shown(fig, name, value, sizeof value), margin >= 0 ? "met" : "missed", by);
}

// The objectives on the run's figures (slo_margin_NAME), met and set.
static void objectives_count(const json_t *fig, int *met, int *set)
{
    const char *key;
    const json_t *v;
    *met = *set = 0;
    json_object_foreach((json_t *)fig, key, v)
        if (strncmp(key, "slo_margin_", 11) == 0) {
            ++*set;
            *met += json_number_value(v) >= 0 && json_is_number(v);
        }
}

// What held requests back for want of HBM: the figures ks_run_bound's
// capacity rule reads, those that are not 0.
static void capacity_words(const json_t *fig, struct text *t)
{
    double misses = num_of(fig, "misses_unplanned"), retracted = num_of(fig, "retracted");
    double waiting = num_of(fig, "requests_arrived") - num_of(fig, "requests_admitted");
    const char *sep = " (";
    if (misses > 0)
        put(t, "%s%.0f misses found no page", sep, misses), sep = ", ";
    if (retracted > 0)
        put(t, "%s%.0f requests retracted", sep, retracted), sep = ", ";
    if (waiting > 0)
        put(t, "%s%.0f of %.0f requests still waiting for admission at the end", sep, waiting,
            num_of(fig, "requests_arrived")), sep = ", ";
    if (sep[0] == ',')
        put(t, ")");
}

void ks_compare_headline(const json_t *fig, char *buf, size_t len)
{
    struct text t = {buf, len, 0};
    char a[64], b[64];
    if (len)
        buf[0] = '\0';
    if (json_object_size(fig) == 0) {
        put(&t, "The result holds no summary figures.");
        return;
    }
    put(&t, "Output %s", shown(fig, "output_throughput", a, sizeof a));
    if (num_of(fig, "tokens") == 0)
        put(&t, ": no output token was produced");
    else
        put(&t, "; TPOT P50 %s, P99 %s", shown(fig, "tpot_p50", a, sizeof a), shown(fig, "tpot_p99", b, sizeof b));
    int met, set;
    objectives_count(fig, &met, &set);
    if (set && met == set && num_of(fig, "slo_met") == 1)
        put(&t, "; objectives met (%d of %d)", met, set);
    else if (set)
        put(&t, "; objectives missed (%d of %d met)", met, set);
    put(&t, ". L1 hit rate %s, %s of GPU time stalled waiting for blocks; ", shown(fig, "hit_rate_l1", a, sizeof a),
        shown(fig, "stall_fraction", b, sizeof b));
    struct ks_run_limit l = ks_run_bound(fig);
    put(&t, "bounded by %s", ks_run_bound_text(l.bound));
    if (l.capacity) {
        put(&t, ", and by HBM capacity");
        capacity_words(fig, &t);
    }
    put(&t, ".");
}

void ks_compare_change(double a, double b, char *buf, size_t len)
{
    if (isnan(a) || isnan(b))
        snprintf(buf, len, "%s", "");
    else if (a == b)
        snprintf(buf, len, "=");
    else if (a == 0)
        snprintf(buf, len, "from 0");
    else
        snprintf(buf, len, "%+.1f%%", (b - a) / fabs(a) * 100);
}

void ks_compare_html_text(FILE *f, const char *s)
{
    for (; *s; s++)
        fputs(*s == '<' ? "&lt;" : *s == '>' ? "&gt;" : *s == '&' ? "&amp;" : *s == '"' ? "&quot;" : (char[]){*s, 0},
              f);
}

// ---- the page --------------------------------------------------------------------

static const char style[] =
    "body{font-family:sans-serif;max-width:1000px;margin:auto;padding:0 8px;line-height:1.4}"
    ".scroll{overflow-x:auto}table{border-collapse:collapse}"
    "td,th{padding:2px 8px;border-bottom:1px solid #ddd;text-align:left;vertical-align:top}"
    "td.v{text-align:right;white-space:nowrap}.headline{font-size:1.15em}"
    "img{max-width:100%;height:auto}";

static const struct {
    const char *group, *title;
} group_titles[] = {{"load", "Load"},       {"latency", "Latency"},         {"objectives", "Objectives"},
                    {"cache", "Cache"},     {"migration", "Migration"},     {"compute", "Compute"},
                    {"simulation", "The simulation"}, {"other", "Other"}};

static const char *group_title(const char *g)
{
    for (size_t i = 0; i < sizeof group_titles / sizeof group_titles[0]; i++)
        if (strcmp(group_titles[i].group, g) == 0)
            return group_titles[i].title;
    return g;
}

// A key's note as the page shows it: without a leading "seconds, ", since
// the value carries its unit.
static const char *note_of(const struct ks_compare_run *runs, size_t n, const char *key)
{
    for (size_t r = 0; r < n; r++) {
        const char *s = json_string_value(json_object_get(runs[r].notes, key));
        if (s)
            return strncmp(s, "seconds, ", 9) == 0 ? s + 9 : s;
    }
    return "";
}

// Every key of the runs' figures, each once, in the page's order: by group
// rank (runfile.c's table), then by name. NULL when out of memory.
static int by_rank(const void *a, const void *b)
{
    const char *x = *(const char *const *)a, *y = *(const char *const *)b;
    int rx = ks_run_key_kind(x).rank, ry = ks_run_key_kind(y).rank;
    return rx != ry ? (rx > ry) - (rx < ry) : strcmp(x, y);
}

static const char **all_keys(const struct ks_compare_run *runs, size_t n, size_t *n_keys)
{
    size_t cap = 0;
    for (size_t r = 0; r < n; r++)
        cap += json_object_size(runs[r].fig);
    const char **keys = malloc((cap ? cap : 1) * sizeof *keys);
    *n_keys = 0;
    for (size_t r = 0; keys && r < n; r++) {
        const char *key;
        const json_t *v;
        json_object_foreach((json_t *)runs[r].fig, key, v)
        {
            int seen = 0;
            for (size_t q = 0; q < r && !seen; q++)
                seen = json_object_get(runs[q].fig, key) != NULL;
            if (!seen)
                keys[(*n_keys)++] = key;
        }
    }
    if (keys)
        qsort(keys, *n_keys, sizeof *keys, by_rank);
    return keys;
}

static void cell(FILE *f, const char *cls, const char *text)
{
    fprintf(f, "<td%s%s%s>", cls ? " class=\"" : "", cls ? cls : "", cls ? "\"" : "");
    ks_compare_html_text(f, text);
    fputs("</td>", f);
}

// One row: the key, its value in each run (and the change against the
// first), its note.
static void summary_row(FILE *f, const struct ks_compare_run *runs, size_t n, const char *key)
{
    char v[256];
    fputs("<tr>", f);
    cell(f, NULL, key);
    const json_t *ref = json_object_get(runs[0].fig, key);
    for (size_t r = 0; r < n; r++) {
        const json_t *x = json_object_get(runs[r].fig, key);
        if (x)
            ks_run_format(key, x, v, sizeof v);
        else
            snprintf(v, sizeof v, "absent");
        cell(f, "v", v);
        if (r > 0) {
            ks_compare_change(json_is_number(ref) ? json_number_value(ref) : NAN,
                              json_is_number(x) ? json_number_value(x) : NAN, v, sizeof v);
            cell(f, "v", v);
        }
    }
    cell(f, NULL, note_of(runs, n, key));
    fputs("</tr>\n", f);
}

static void summary_tables(FILE *f, const struct ks_compare_run *runs, size_t n, const char **keys, size_t n_keys)
{
    fputs("<h2>Summary</h2>\n", f);
    if (n > 1)
        fputs("<p>Each figure of each run; after each run after the first, its change against the first: "
              "(run - first) / first.</p>\n", f);
    for (size_t g = 0; ks_run_groups[g]; g++) {
        size_t rows = 0;
        for (size_t k = 0; k < n_keys; k++)
            rows += strcmp(ks_run_key_kind(keys[k]).group, ks_run_groups[g]) == 0;
        if (rows == 0)
            continue;
        fprintf(f, "<h3>%s</h3>\n<div class=\"scroll\"><table>\n<tr><th>figure</th>", group_title(ks_run_groups[g]));
        for (size_t r = 0; r < n; r++) {
            fputs("<th>", f);
            ks_compare_html_text(f, n > 1 ? runs[r].label : "value");
            fputs(r > 0 ? "</th><th>change</th>" : "</th>", f);
        }
        fputs("<th>description</th></tr>\n", f);
        for (size_t k = 0; k < n_keys; k++)
            if (strcmp(ks_run_key_kind(keys[k]).group, ks_run_groups[g]) == 0)
                summary_row(f, runs, n, keys[k]);
        fputs("</table></div>\n", f);
    }
}

// A run's headline and the verdict on each of its objectives.
static void run_words(FILE *f, const struct ks_compare_run *run, int several)
{
    char line[2048];
    ks_compare_headline(run->fig, line, sizeof line);
    fputs("<p class=\"headline\">", f);
    if (several) {
        fputs("<b>", f);
        ks_compare_html_text(f, run->label);
        fputs("</b>: ", f);
    }
    ks_compare_html_text(f, line);
    fputs("</p>\n", f);
    const char *key;
    const json_t *v;
    int any = 0;
    json_object_foreach((json_t *)run->fig, key, v)
    {
        char rule[64];
        int per_request = strncmp(key, "slo_", 4) == 0 && !strchr(key + 4, '_') && // slo_ttft, slo_tpot, slo_e2el
                          ks_run_key_kind(key).unit == KS_RUN_UNIT_MS;
        if (strncmp(key, "slo_margin_", 11) == 0) {
            ks_compare_objective(run->fig, key + 11, line, sizeof line);
        } else if (per_request) {
            char limit[64];
            objective_words(key + 4, rule, sizeof rule);
            ks_run_format(key, v, limit, sizeof limit);
            snprintf(line, sizeof line, "%s <= %s for each request (goodput counts the requests that meet every "
                     "such objective)", rule, limit);
        } else {
            continue;
        }
        fputs(any++ ? "<li>" : "<ul>\n<li>", f);
        ks_compare_html_text(f, line);
        fputs("</li>\n", f);
    }
    if (any)
        fputs("</ul>\n", f);
}

// The text of field `path` in run r; NULL when it has none.
static const char *field(const struct ks_compare_run *run, const char *path)
{
    return json_string_value(json_object_get(run->scenario, path));
}

// Whether field `path` differs between the runs that store their scenario.
static int differs(const struct ks_compare_run *runs, size_t n, const char *path)
{
    const char *first = NULL;
    int seen = 0;
    for (size_t r = 0; r < n; r++) {
        if (!runs[r].scenario)
            continue;
        const char *t = field(&runs[r], path);
        if (seen && (!t != !first || (t && strcmp(t, first) != 0)))
            return 1;
        first = t;
        seen = 1;
    }
    return 0;
}

// Several runs: the scenario fields that differ, one column per run.
static void scenario_diff(FILE *f, const struct ks_compare_run *runs, size_t n)
{
    fputs("<h2>Scenario fields that differ</h2>\n", f);
    size_t stored = 0;
    for (size_t r = 0; r < n; r++) {
        if (runs[r].scenario) {
            stored++;
            continue;
        }
        fputs("<p>", f);
        ks_compare_html_text(f, runs[r].path);
        fputs(" has no /scenario (written before kvstrata stored the scenario in its results): its fields are not "
              "compared.</p>\n", f);
    }
    size_t rows = 0;
    for (size_t r = 0; stored >= 2 && r < n; r++) {
        const char *path;
        const json_t *v;
        json_object_foreach((json_t *)runs[r].scenario, path, v)
        {
            int earlier = 0; // listed with an earlier run's fields
            for (size_t q = 0; q < r && !earlier; q++)
                earlier = field(&runs[q], path) != NULL;
            if (earlier || !differs(runs, n, path))
                continue;
            if (rows++ == 0) {
                fputs("<div class=\"scroll\"><table>\n<tr><th>field</th>", f);
                for (size_t q = 0; q < n; q++) {
                    fputs("<th>", f);
                    ks_compare_html_text(f, runs[q].label);
                    fputs("</th>", f);
                }
                fputs("</tr>\n", f);
            }
            fputs("<tr>", f);
            cell(f, NULL, path);
            for (size_t q = 0; q < n; q++)
                cell(f, NULL, !runs[q].scenario ? "(not stored)" : field(&runs[q], path) ? field(&runs[q], path)
                                                                                         : "(absent)");
            fputs("</tr>\n", f);
        }
    }
    if (rows)
        fputs("</table></div>\n", f);
    else if (stored >= 2)
        fputs("<p>None: the runs resolve to the same scenario.</p>\n", f);
}

// One run: every field of its scenario, folded.
static void scenario_all(FILE *f, const struct ks_compare_run *run)
{
    if (!run->scenario)
        return;
    fprintf(f, "<h2>Scenario</h2>\n<details><summary>All %zu fields, resolved</summary>\n<div class=\"scroll\">"
               "<table>\n<tr><th>field</th><th>value</th></tr>\n", json_object_size(run->scenario));
    const char *path;
    const json_t *v;
    json_object_foreach((json_t *)run->scenario, path, v)
    {
        fputs("<tr>", f);
        cell(f, NULL, path);
        cell(f, NULL, json_string_value(v) ? json_string_value(v) : "");
        fputs("</tr>\n", f);
    }
    fputs("</table></div></details>\n", f);
}

static void page_head(FILE *f, const struct ks_compare_run *runs, size_t n)
{
    fprintf(f, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
               "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
               "<title>kvstrata %s</title>\n<style>%s</style></head><body>\n<h1>kvstrata %s</h1>\n",
            n > 1 ? "comparison" : "report", style, n > 1 ? "comparison" : "report");
    if (n == 1) {
        fputs("<p>Result: ", f);
        ks_compare_html_text(f, runs[0].path);
        fputs("</p>\n", f);
        return;
    }
    fputs("<ol>\n", f);
    for (size_t r = 0; r < n; r++) {
        fputs("<li>", f);
        ks_compare_html_text(f, runs[r].path);
        fputs(r == 0 ? " (the reference)</li>\n" : "</li>\n", f);
    }
    fputs("</ol>\n", f);
}

static void plot_list(FILE *f, const struct ks_compare_plot *plots, size_t n_plots, int several)
{
    for (size_t p = 0; p < n_plots; p++) {
        fprintf(f, "<h2>%s</h2>\n<p>%s%s</p>\n<img src=\"%s.png\" alt=\"%s\"> <a href=\"%s.svg\">SVG</a>\n",
                plots[p].title, plots[p].caption,
                several ? " One colour per run; within a run, one dash pattern per line." : "", plots[p].name,
                plots[p].title, plots[p].name);
    }
}

int ks_compare_page(const char *dir, const struct ks_compare_run *runs, size_t n,
                    const struct ks_compare_plot *plots, size_t n_plots, char *err, size_t len)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/index.html", dir);
    size_t n_keys = 0;
    const char **keys = all_keys(runs, n, &n_keys);
    struct ks_atomicfile html;
    if (!keys || ks_atomicfile_open(&html, path, NULL, NULL, 0) != KS_OK) {
        free(keys);
        snprintf(err, len, "%s: cannot write index.html%s", dir, keys ? "" : " (out of memory)");
        return KS_EIO;
    }
    FILE *f = html.f;
    page_head(f, runs, n);
    for (size_t r = 0; r < n; r++)
        run_words(f, &runs[r], n > 1);
    if (n > 1)
        scenario_diff(f, runs, n);
    summary_tables(f, runs, n, keys, n_keys);
    if (n == 1)
        scenario_all(f, &runs[0]);
    plot_list(f, plots, n_plots, n > 1);
    fputs("</body></html>\n", f);
    free(keys);
    if (ks_atomicfile_commit(&html, NULL, 0) != KS_OK) {
        snprintf(err, len, "%s: cannot write index.html", dir);
        return KS_EIO;
    }
    return KS_OK;
}
