// report.c - plots of one result file, or of several side by side (see
// report.h); the page around them is compare.c's.
//
// Tables are read by field name as doubles (HDF5 converts), so the report
// depends only on the documented column names. Time series are binned into
// BINS equal intervals of each run; a bin without samples is left out of
// the data file (gnuplot draws the gap). Every plot's data file holds one
// block per run (gnuplot's `index`), in the order the files were given; a
// run with nothing to draw holds a row of NaN, so that the blocks after it
// keep their index. Every input is read and checked before the output
// folder is made: a bad input leaves nothing behind.
#define _POSIX_C_SOURCE 200809L // fork, dup2, execlp, waitpid

#include "report.h"

#include <errno.h>
#include <fcntl.h>
#include <hdf5.h>
#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "atomicfile.h"
#include "compare.h"
#include "fs.h"
#include "h5read.h"
#include "runfile.h"
#include "status.h"

#define BINS 100
#define TOP_LINKS 6 // links a one-run report draws; a comparison draws each run's busiest

struct table {
    size_t n, k; // rows, columns
    double *v;   // [n][k]
};

static int fail(char *err, size_t len, const char *file, const char *fmt, ...)
{
    char why[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    snprintf(err, len, "%s: %s", file, why);
    return KS_EINVAL;
}

// Reads columns `names` of compound dataset `path` as doubles, every size
// checked against the file's (h5read.h).
static int read_cols(hid_t f, const char *path, const char *const *names, size_t k, uint64_t bytes, struct table *t,
                     const char *file, char *err, size_t len)
{
    memset(t, 0, sizeof *t);
    struct ks_field fields[16];
    if (k > sizeof fields / sizeof fields[0])
        return fail(err, len, file, "%s: too many columns", path);
    for (size_t i = 0; i < k; i++)
        fields[i] = (struct ks_field){names[i], KS_F_F64, i * sizeof(double), NULL};
    char why[512];
    void *v = NULL;
    size_t n = 0;
    if (ks_h5read_table(f, path, fields, k, k * sizeof(double), bytes, &v, &n, why, sizeof why) != KS_OK)
        return fail(err, len, file, "%s%s", why,
                    strstr(why, " is missing") || strstr(why, " has no field")
                        ? " (is it a result file of this kvstrata version?)"
                        : "");
    t->v = v;
    t->n = n;
    t->k = k;
    return KS_OK;
}

static double at(const struct table *t, size_t row, size_t col)
{
    return t->v[row * t->k + col];
}

// ---- gnuplot -----------------------------------------------------------------

// Runs gnuplot on DIR/plots/NAME.gp from DIR; its messages go to plots/NAME.log.
static int render(const char *dir, const char *gnuplot, const char *name, char *err, size_t len)
{
    char script[4096], log[4096];
    snprintf(script, sizeof script, "plots/%s.gp", name);
    snprintf(log, sizeof log, "%s/plots/%s.log", dir, name);
    pid_t pid = fork();
    if (pid < 0)
        return fail(err, len, dir, "cannot start gnuplot: %s", strerror(errno));
    if (pid == 0) {
        int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd >= 0) {
            dup2(fd, STDOUT_FILENO);
            dup2(fd, STDERR_FILENO);
            close(fd);
        }
        if (chdir(dir) != 0)
            _exit(126);
        execlp(gnuplot, gnuplot, script, (char *)NULL);
        _exit(127);
    }
    int status;
    if (waitpid(pid, &status, 0) < 0)
        return fail(err, len, dir, "waiting for gnuplot: %s", strerror(errno));
    if (WIFEXITED(status) && WEXITSTATUS(status) == 127)
        return fail(err, len, dir, "cannot run %s (Debian package gnuplot-nox)", gnuplot);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        return fail(err, len, dir, "gnuplot failed on plots/%s.gp (see plots/%s.log)", name, name);
    return KS_OK;
}

// The script head: both terminals render the same plot commands.
static void script_begin(FILE *g, const char *title, const char *xlabel, const char *ylabel)
{
    fprintf(g, "set title \"%s\"\nset xlabel \"%s\"\nset ylabel \"%s\"\nset grid\nset key outside right\n", title,
            xlabel, ylabel);
}

static void script_end(FILE *g, const char *name, const char *plotcmd)
{
    fprintf(g, "set terminal pngcairo size 960,540 noenhanced\nset output '%s.png'\n%s\n", name, plotcmd);
    fprintf(g, "set terminal svg size 960,540 noenhanced\nset output '%s.svg'\n%s\nunset output\n", name, plotcmd);
}

// A legend's text, safe inside gnuplot's single quotes.
static void legend(char *out, size_t n, const char *run, const char *line)
{
    snprintf(out, n, "%s%s%s", run ? run : "", run ? " " : "", line);
    for (char *c = out; *c; c++)
        if (*c == '\'' || *c == '"' || *c == '\n')
            *c = '_';
}

// ---- one run's data --------------------------------------------------------------

// The tables and summary a run's report reads, and the end of its time axis.
struct run_tables {
    const char *path;
    char label[96]; // "1: NAME" in legends
    hid_t f;
    struct table req, steps, tiers, links, ls;
    double t_end; // seconds: the last sample
    struct ks_run_summary s;
    json_t *scenario; // NULL: the file has none
};

// The lines a run draws on one plot: columns of its data block.
struct lines {
    size_t n;
    int x[TOP_LINKS], y[TOP_LINKS];
    char title[TOP_LINKS][64];
};

static void add_line(struct lines *l, int x, int y, const char *title)
{
    if (l->n == TOP_LINKS)
        return;
    l->x[l->n] = x;
    l->y[l->n] = y;
    legend(l->title[l->n++], sizeof l->title[0], NULL, title);
}

static const struct plot {
    const char *name, *title, *caption, *xlabel, *ylabel, *style, *head;
} plots[] = {
    {"tpot_cdf", "TPOT per request",
     "Distribution over finished requests of each one's TPOT ((finish - first token) / (tokens - 1)) and its longest "
     "gap between two tokens (largest ITL).",
     "ms per output token", "share of requests", "steps", ""},
    {"step_time", "Decode step time", "Mean decode step time and its stall for needed blocks, all GPUs, by time.",
     "simulated time (s)", "ms", "lines", ""},
    {"batch", "Batch size", "Requests decoding and waiting for admission, mean per GPU, by time.",
     "simulated time (s)", "requests per GPU", "lines", ""},
    {"hit_rate", "Hit rate per tier", "Share of block accesses that found the block in L1, L2 and L3, by time.",
     "simulated time (s)", "share of accesses", "lines", "set yrange [0:1]\n"},
    {"occupancy", "Tier occupancy", "Pages in use in each tier as a share of its capacity, mean over GPUs, by time.",
     "simulated time (s)", "share of capacity", "lines", "set yrange [0:*]\n"},
    {"links", "Link utilisation",
     "Bytes carried / (bandwidth x interval) of the busiest links (of each run's busiest link, when runs are "
     "compared), by time.",
     "simulated time (s)", "utilisation", "lines", "set yrange [0:*]\n"},
};
enum { N_PLOTS = sizeof plots / sizeof plots[0] };

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

// Plot 0: the CDFs of per-request TPOT and largest ITL (finished requests
// with two tokens or more: TPOT >= 0), in ms. Returns the rows.
static size_t tpot_cdf(const struct run_tables *x, FILE *d, struct lines *l)
{
    const struct table *req = &x->req;
    size_t n = 0;
    double *a = malloc((req->n ? req->n : 1) * sizeof *a), *b = malloc((req->n ? req->n : 1) * sizeof *b);
    for (size_t i = 0; a && b && i < req->n; i++)
        if (at(req, i, 0) >= 2 && at(req, i, 1) >= 0) {
            a[n] = at(req, i, 1) * 1e3;
            b[n++] = at(req, i, 2) * 1e3;
        }
    if (a && b) {
        qsort(a, n, sizeof *a, by_value);
        qsort(b, n, sizeof *b, by_value);
    }
    for (size_t i = 0; a && b && i < n; i++)
        fprintf(d, "%.9g %.9g %.9g\n", a[i], b[i], (double)(i + 1) / (double)n);
    free(a);
    free(b);
    add_line(l, 1, 3, "TPOT");
    add_line(l, 2, 3, "largest ITL");
    return n;
}

// Plots 1 to 4: the /steps series binned over time (step time and stall,
// batch, hit rate per tier, occupancy per tier). Returns the rows.
static size_t step_series(const struct run_tables *x, int p, FILE *d, struct lines *l)
{
    const struct table steps = x->steps, tiers = x->tiers;
    const double t_end = x->t_end;
    size_t points = 0;
    double sum[BINS][6] = {{0}}, cnt[BINS] = {0}, hits[BINS][4] = {{0}};
    double cap[3] = {0};
    for (size_t i = 0; i < tiers.n; i++) {
        int tr = (int)at(&tiers, i, 1);
        if (tr >= 0 && tr < 3)
            cap[tr] += at(&tiers, i, 2);
    }
    uint32_t n_gpu = 0;
    for (size_t i = 0; i < tiers.n; i++)
        if (at(&tiers, i, 0) + 1 > n_gpu)
            n_gpu = (uint32_t)at(&tiers, i, 0) + 1;
    for (int tr = 0; tr < 3; tr++)
        cap[tr] = n_gpu ? cap[tr] / n_gpu : 0; // mean capacity per GPU
    double *prev = calloc((size_t)(n_gpu ? n_gpu : 1) * 3, sizeof *prev); // cumulative found per GPU
    for (size_t i = 0; prev && i < steps.n; i++) {
        double bx = t_end > 0 ? at(&steps, i, 0) / t_end * BINS : 0;
        int b = !(bx >= 0) ? 0 : bx >= BINS ? BINS - 1 : (int)bx; // NaN: the first bin
        uint32_t gpu = (uint32_t)at(&steps, i, 1);
        cnt[b]++;
        sum[b][0] += at(&steps, i, 4) * 1e3;
        sum[b][1] += at(&steps, i, 5) * 1e3;
        sum[b][2] += at(&steps, i, 2);
        sum[b][3] += at(&steps, i, 3);
        for (int tr = 0; tr < 3; tr++) {
            double occ = cap[tr] > 0 ? at(&steps, i, 9 + tr) / cap[tr] : 0;
            if (tr < 2)
                sum[b][4 + tr] += occ;
            if (gpu < n_gpu) {
                double now = at(&steps, i, 6 + tr), delta = now - prev[gpu * 3 + tr];
                prev[gpu * 3 + tr] = now;
                hits[b][tr] += delta;
                hits[b][3] += delta;
            }
        }
    }
    free(prev);
    for (int b = 0; b < BINS; b++) {
        double t = (b + 0.5) * t_end / BINS;
        if (cnt[b] == 0)
            continue;
        if (p == 1)
            fprintf(d, "%.9g %.9g %.9g\n", t, sum[b][0] / cnt[b], sum[b][1] / cnt[b]);
        else if (p == 2)
            fprintf(d, "%.9g %.9g %.9g\n", t, sum[b][2] / cnt[b], sum[b][3] / cnt[b]);
        else if (p == 3 && hits[b][3] > 0)
            fprintf(d, "%.9g %.9g %.9g %.9g\n", t, hits[b][0] / hits[b][3], hits[b][1] / hits[b][3],
                    hits[b][2] / hits[b][3]);
        else if (p == 4)
            fprintf(d, "%.9g %.9g %.9g\n", t, sum[b][4] / cnt[b], sum[b][5] / cnt[b]);
        else
            continue;
        points++;
    }
    static const char *const titles[5][3] = {
        {0}, {"step", "stall"}, {"decoding", "waiting"}, {"L1", "L2", "L3"}, {"L1", "L2"}};
    for (int k = 0; k < 3 && titles[p][k]; k++)
        add_line(l, 1, 2 + k, titles[p][k]);
    return points;
}

// The name of row `row` of /links, for a legend ("" when unreadable).
static void link_name(hid_t f, size_t row, char *lname, size_t n)
{
    lname[0] = '\0';
    H5E_BEGIN_TRY
    {
        hid_t dd = H5Dopen2(f, "/links", H5P_DEFAULT);
        if (dd >= 0) {
            hid_t mt = H5Tcreate(H5T_COMPOUND, 32), st = H5Tcopy(H5T_C_S1);
            H5Tset_size(st, 32);
            H5Tinsert(mt, "name", 0, st);
            hid_t fs = H5Dget_space(dd);
            hsize_t start = row, count = 1;
            H5Sselect_hyperslab(fs, H5S_SELECT_SET, &start, NULL, &count, NULL);
            hid_t ms = H5Screate_simple(1, &count, NULL);
            char buf[33] = "";
            if (H5Dread(dd, mt, ms, fs, H5P_DEFAULT, buf) >= 0)
                snprintf(lname, n, "%s", buf);
            H5Sclose(ms);
            H5Sclose(fs);
            H5Tclose(st);
            H5Tclose(mt);
            H5Dclose(dd);
        }
    }
    H5E_END_TRY;
}

// The `want` busiest links that carried bytes, busiest first, into top.
static size_t busiest(const struct table *links, size_t want, size_t *top)
{
    size_t nt = 0;
    for (size_t k = 0; k < want; k++) {
        size_t best = SIZE_MAX;
        for (size_t i = 0; i < links->n; i++) {
            int taken = 0;
            for (size_t j = 0; j < nt; j++)
                taken |= top[j] == i;
            if (!taken && at(links, i, 1) > 0 && (best == SIZE_MAX || at(links, i, 1) > at(links, best, 1)))
                best = i;
        }
        if (best == SIZE_MAX)
            break;
        top[nt++] = best;
    }
    return nt;
}

// Plot 5: the `want` busiest links, utilisation between samples (one column
// per link). Returns the rows.
static size_t link_series(const struct run_tables *x, size_t want, FILE *d, struct lines *l)
{
    const struct table links = x->links, ls = x->ls;
    size_t points = 0, top[TOP_LINKS], nt = busiest(&links, want < TOP_LINKS ? want : TOP_LINKS, top);
    double *last_t = calloc(nt ? nt : 1, sizeof *last_t), *last_b = calloc(nt ? nt : 1, sizeof *last_b);
    for (size_t i = 0; last_t && last_b && i < ls.n;) {
        double t = at(&ls, i, 0);
        double u[TOP_LINKS];
        int any = 0;
        for (size_t k = 0; k < nt; k++)
            u[k] = NAN;
        for (; i < ls.n && at(&ls, i, 0) == t; i++) {
            size_t link = (size_t)at(&ls, i, 1);
            for (size_t k = 0; k < nt; k++)
                if (top[k] == link && t > last_t[k]) {
                    u[k] = (at(&ls, i, 2) - last_b[k]) / (at(&links, link, 0) * (t - last_t[k]));
                    last_t[k] = t;
                    last_b[k] = at(&ls, i, 2);
                    any = 1;
                }
        }
        if (!any)
            continue;
        fprintf(d, "%.9g", t);
        for (size_t k = 0; k < nt; k++)
            fprintf(d, " %.9g", u[k]);
        fputc('\n', d);
        points++;
    }
    free(last_t);
    free(last_b);
    for (size_t k = 0; k < nt; k++) {
        char lname[64];
        link_name(x->f, top[k], lname, sizeof lname);
        add_line(l, 1, (int)k + 2, lname);
    }
    return points;
}

// ---- plots of n runs -----------------------------------------------------------

// DIR/data/NAME.dat and DIR/plots/NAME.gp open for writing, both or neither.
static int open_plot(const char *dir, const char *name, FILE **d, FILE **g, char *err, size_t len)
{
    char dpath[4300], gpath[4300];
    snprintf(dpath, sizeof dpath, "%s/data/%s.dat", dir, name);
    snprintf(gpath, sizeof gpath, "%s/plots/%s.gp", dir, name);
    *d = fopen(dpath, "w");
    *g = fopen(gpath, "w");
    if (*d && *g)
        return KS_OK;
    int rc = fail(err, len, dir, "cannot write %s", !*d ? dpath : gpath);
    if (*d)
        fclose(*d);
    if (*g)
        fclose(*g);
    *d = *g = NULL;
    return rc;
}

// The plot command: each run's lines from its block. One run: a colour per
// line; several: a colour per run and a dash pattern per line. Returns the
// lines drawn.
static size_t plot_cmd(const struct plot *pl, const struct run_tables *runs, const struct lines *l,
                       const size_t *rows, size_t n, char *cmd, size_t cmdlen)
{
    size_t o = (size_t)snprintf(cmd, cmdlen, "%s", pl->head), drawn = 0;
    for (size_t r = 0; r < n; r++)
        for (size_t s = 0; rows[r] && s < l[r].n && o < cmdlen; s++) {
            char title[160];
            legend(title, sizeof title, n > 1 ? runs[r].label : NULL, l[r].title[s]);
            o += (size_t)snprintf(cmd + o, cmdlen - o,
                                  "%s 'data/%s.dat' index %zu using %d:%d with %s lw 2 lc %zu dt %zu title '%s'",
                                  drawn ? "," : "plot", pl->name, r, l[r].x[s], l[r].y[s], pl->style,
                                  n > 1 ? r + 1 : s + 1, n > 1 ? s + 1 : 1, title);
            drawn++;
        }
    return drawn;
}

// Plot p of n runs: its data file (a block per run), its gnuplot script,
// and the rendered PNG and SVG.
static int write_plot(const struct run_tables *runs, size_t n, const char *dir, const char *gnuplot, int p,
                      char *err, size_t len)
{
    const char *name = plots[p].name;
    FILE *d, *g;
    struct lines l[KS_REPORT_MAX_RUNS] = {{0}};
    size_t rows[KS_REPORT_MAX_RUNS] = {0};
    if (open_plot(dir, name, &d, &g, err, len) != KS_OK)
        return KS_EINVAL;
    for (size_t r = 0; r < n; r++) {
        rows[r] = p == 0   ? tpot_cdf(&runs[r], d, &l[r])
                  : p <= 4 ? step_series(&runs[r], p, d, &l[r])
                           : link_series(&runs[r], n > 1 ? 1 : TOP_LINKS, d, &l[r]);
        if (rows[r] == 0) // keeps the block, so that the next run's has its index
            fputs("NaN NaN NaN NaN NaN NaN NaN\n", d);
        fputs("\n\n", d);
    }
    char cmd[16384];
    script_begin(g, plots[p].title, plots[p].xlabel, plots[p].ylabel);
    if (plot_cmd(&plots[p], runs, l, rows, n, cmd, sizeof cmd) == 0) // nothing to draw: a frame that says so
        snprintf(cmd, sizeof cmd, "set label 1 'no data' at graph 0.5, graph 0.5 center\nplot [0:1][0:1] NaN "
                                  "notitle");
    script_end(g, name, cmd);
    int bad = fclose(d) != 0;
    bad |= fclose(g) != 0;
    if (bad)
        return fail(err, len, dir, "cannot write the data or script of %s", name);
    return render(dir, gnuplot, name, err, len);
}

// ---- reading and checking a run --------------------------------------------------

// Is `path` the partial file of a write that never finished (NAME.part-PID,
// atomicfile.h)?
static int is_partial(const char *path)
{
    const char *base = strrchr(path, '/');
    const char *p = strstr(base ? base + 1 : path, ".part-");
    if (!p)
        return 0;
    p += strlen(".part-");
    return *p && strspn(p, "0123456789") == strlen(p);
}

// Column c of t: whole numbers from 0 to below `below` (row indices, GPUs,
// tiers), so that they index and convert safely.
static int whole_below(const struct table *t, size_t c, double below, const char *tab, const char *col,
                       const char *file, char *err, size_t len)
{
    for (size_t i = 0; i < t->n; i++) {
        double v = at(t, i, c);
        if (!(v >= 0 && v < below && v == floor(v)))
            return fail(err, len, file, "%s row %zu: %s is %g; it must be a whole number from 0 to %.0f", tab, i,
                        col, v, below - 1);
    }
    return KS_OK;
}

// The values the plots index with or divide by.
static int values_ok(const struct run_tables *x, const char *file, char *err, size_t len)
{
    double n_gpu = (double)x->tiers.n; // a GPU has a row per tier
    int rc = whole_below(&x->tiers, 0, n_gpu, "/tiers", "gpu", file, err, len);
    if (rc == KS_OK)
        rc = whole_below(&x->tiers, 1, 3, "/tiers", "tier", file, err, len);
    if (rc == KS_OK)
        rc = whole_below(&x->steps, 1, 4294967296.0, "/steps", "gpu", file, err, len);
    if (rc == KS_OK)
        rc = whole_below(&x->ls, 1, (double)x->links.n, "/link_samples", "link", file, err, len);
    for (size_t i = 0; rc == KS_OK && i < x->links.n; i++)
        if (!(at(&x->links, i, 0) > 0 && isfinite(at(&x->links, i, 0))))
            rc = fail(err, len, file, "/links row %zu: bandwidth is %g; it must be a positive number", i,
                      at(&x->links, i, 0));
    return rc;
}

// A result whose writer finished (ks_run_check_complete).
static int complete(hid_t f, const char *file, char *err, size_t len)
{
    char why[512];
    return ks_run_check_complete(f, why, sizeof why) == KS_OK ? KS_OK : fail(err, len, file, "%s", why);
}

// The tables, the summary and the scenario of result h5 into x, checked.
// x->f stays open (for the links' names) until free_run, even on failure.
static int load_run(const char *h5, struct run_tables *x, char *err, size_t len)
{
    static const char *const req_cols[] = {"generated", "tpot", "itl_max"};
    static const char *const step_cols[] = {"t", "gpu", "batch", "pending", "step_time", "stall", "found_l1",
                                            "found_l2", "found_l3", "occupancy_l1", "occupancy_l2", "occupancy_l3"};
    static const char *const tier_cols[] = {"gpu", "tier", "capacity"};
    static const char *const link_cols[] = {"bandwidth", "bytes"};
    static const char *const ls_cols[] = {"t", "link", "bytes"};
    x->path = h5;
    x->f = -1;
    if (is_partial(h5))
        return fail(err, len, h5, "a partial file (NAME.part-PID) left by a write that never finished, not a "
                    "result; remove it and rerun");
    uint64_t bytes = 0;
    char why[512];
    x->f = ks_h5read_open(h5, &bytes, why, sizeof why);
    if (x->f < 0)
        return fail(err, len, h5, "%s", why);
    int rc = read_cols(x->f, "/steps", step_cols, 12, bytes, &x->steps, h5, err, len);
    if (rc == KS_OK)
        rc = read_cols(x->f, "/tiers", tier_cols, 3, bytes, &x->tiers, h5, err, len);
    if (rc == KS_OK)
        rc = read_cols(x->f, "/links", link_cols, 2, bytes, &x->links, h5, err, len);
    if (rc == KS_OK)
        rc = read_cols(x->f, "/link_samples", ls_cols, 3, bytes, &x->ls, h5, err, len);
    if (rc == KS_OK) // last: its columns changed in 0.x, so an older damaged file is refused for its damage
        rc = read_cols(x->f, "/requests", req_cols, 3, bytes, &x->req, h5, err, len);
    if (rc == KS_OK)
        rc = complete(x->f, h5, err, len);
    if (rc == KS_OK)
        rc = values_ok(x, h5, err, len);
    x->s.fig = json_object();
    x->s.notes = json_object();
    if (rc == KS_OK && (!x->s.fig || !x->s.notes))
        rc = fail(err, len, h5, "out of memory");
    if (rc == KS_OK && ks_run_read_summary(x->f, &x->s, &x->scenario, why, sizeof why) != KS_OK)
        rc = fail(err, len, h5, "%s", why);
    for (size_t i = 0; i < x->steps.n; i++)
        x->t_end = fmax(x->t_end, at(&x->steps, i, 0));
    for (size_t i = 0; i < x->ls.n; i++)
        x->t_end = fmax(x->t_end, at(&x->ls, i, 0));
    if (x->t_end <= 0)
        x->t_end = 1;
    return rc;
}

static void free_run(struct run_tables *x)
{
    free(x->req.v);
    free(x->steps.v);
    free(x->tiers.v);
    free(x->links.v);
    free(x->ls.v);
    json_decref(x->s.fig);
    json_decref(x->s.notes);
    json_decref(x->scenario);
    if (x->f >= 0)
        H5Fclose(x->f);
}

// "N: FILE" with FILE's name without its folder and ".h5".
static void run_label(char *out, size_t n, size_t i, const char *path)
{
    const char *base = strrchr(path, '/');
    base = base && base[1] ? base + 1 : path;
    size_t b = strlen(base);
    int keep = b > 3 && strcmp(base + b - 3, ".h5") == 0 ? (int)(b - 3) : (int)b;
    snprintf(out, n, "%zu: %.*s", i + 1, keep, base);
}

int ks_report_compare(const char *const *h5, size_t n, const char *dir, const char *gnuplot, char *err, size_t len)
{
    if (n == 0 || n > KS_REPORT_MAX_RUNS)
        return fail(err, len, dir, "%zu results given; a report takes 1 to %d", n, KS_REPORT_MAX_RUNS);
    if (!gnuplot)
        gnuplot = "gnuplot";
    struct run_tables runs[KS_REPORT_MAX_RUNS];
    memset(runs, 0, sizeof runs);
    size_t loaded = 0;
    int rc = KS_OK;
    for (; rc == KS_OK && loaded < n; loaded++) {
        rc = load_run(h5[loaded], &runs[loaded], err, len);
        run_label(runs[loaded].label, sizeof runs[loaded].label, loaded, h5[loaded]);
    }
    // the folders only once every result reads: a bad input leaves nothing behind
    if (rc == KS_OK) {
        char plots_dir[4096], data[4096];
        snprintf(plots_dir, sizeof plots_dir, "%s/plots", dir);
        snprintf(data, sizeof data, "%s/data", dir);
        if (ks_fs_mkdirs(plots_dir, 0755, NULL, 0) != KS_OK || ks_fs_mkdirs(data, 0755, NULL, 0) != KS_OK)
            rc = fail(err, len, dir, "cannot create the report folder: %s", strerror(errno));
    }
    for (int p = 0; rc == KS_OK && p < N_PLOTS; p++)
        rc = write_plot(runs, n, dir, gnuplot, p, err, len);
    if (rc == KS_OK) {
        struct ks_compare_run page[KS_REPORT_MAX_RUNS];
        struct ks_compare_plot shown[N_PLOTS];
        for (size_t r = 0; r < n; r++)
            page[r] = (struct ks_compare_run){runs[r].path, runs[r].label, runs[r].s.fig, runs[r].s.notes,
                                              runs[r].scenario};
        for (int p = 0; p < N_PLOTS; p++)
            shown[p] = (struct ks_compare_plot){plots[p].name, plots[p].title, plots[p].caption};
        rc = ks_compare_page(dir, page, n, shown, N_PLOTS, err, len);
    }
    for (size_t r = 0; r < loaded; r++)
        free_run(&runs[r]);
    return rc;
}

int ks_report_write(const char *h5, const char *dir, const char *gnuplot, char *err, size_t len)
{
    return ks_report_compare(&h5, 1, dir, gnuplot, err, len);
}

// ---- sweeps -------------------------------------------------------------------

struct spoint {
    const char **val; // [n_cols] the point's value of each axis column (owned unless no_value)
    double m[8];      // the metrics below
};

static const char no_value[] = ""; // a value strdup could not copy (not freed)

// m[0] and m[2] make the frontier: P99 TPOT against output throughput.
static const char *const metrics[] = {"output_throughput", "tpot_p50", "tpot_p99", "itl_p99", "ttft_p99",
                                      "hit_rate_l1", "stall_fraction"};
static const char *const metric_label[] = {"output tokens/s", "P50 TPOT (s)", "P99 TPOT (s)", "P99 ITL (s)",
                                           "P99 TTFT (s)", "L1 hit rate", "stall fraction"};
enum { N_METRICS = sizeof metrics / sizeof metrics[0] };

// A value as a number: plain, or "N%" as N / 100; NAN when it is not one.
static double as_number(const char *s)
{
    char *end;
    double v = strtod(s, &end);
    if (end == s)
        return NAN;
    if (*end == '%' && end[1] == '\0')
        return v / 100;
    return *end == '\0' ? v : NAN;
}

// Whether point q is the first with its value of column c.
static int first_of(const struct spoint *sp, size_t q, size_t c)
{
    for (size_t r = 0; r < q; r++)
        if (strcmp(sp[r].val[c], sp[q].val[c]) == 0)
            return 0;
    return 1;
}

// The index of value v among column c's distinct values, in order of first appearance.
static size_t category(const struct spoint *sp, size_t n, size_t c, const char *v)
{
    size_t idx = 0;
    for (size_t q = 0; q < n; q++)
        if (first_of(sp, q, c)) {
            if (strcmp(sp[q].val[c], v) == 0)
                break;
            idx++;
        }
    return idx;
}

// A sweep's complete points: the manifest's columns, each point's values
// (as written) and metrics, and the plots made so far.
struct sweep_points {
    json_t *man, *cols, *pts;
    size_t nc, np, n; // columns, points in the manifest, complete points read
    struct spoint *sp; // [n]
    const char **vals; // [np][nc] the points' values
    char **names;      // [n_names] plots made, for the index
    size_t n_names;
};

// Reads the summary of every complete point of the manifest into x.
static int load_points(struct sweep_points *sw, const char *sweep_dir, const char *path, char *err, size_t len)
{
    size_t nc = sw->nc;
    json_error_t je;
    int rc = KS_OK;
    for (size_t i = 0; rc == KS_OK && i < sw->np; i++) { // the complete points and their summaries
        json_t *p = json_array_get(sw->pts, i);
        const char *id = json_string_value(json_object_get(p, "id"));
        const char *status = json_string_value(json_object_get(p, "status"));
        if (!id || !status || strcmp(status, "complete") != 0)
            continue;
        char jp[4200];
        snprintf(jp, sizeof jp, "%s/points/%s.json", sweep_dir, id);
        json_t *sum = json_load_file(jp, 0, &je);
        if (!sum)
            continue; // not there after all: left out, like any incomplete point
        sw->sp[sw->n].val = sw->vals + sw->n * (nc ? nc : 1);
        json_t *v = json_object_get(p, "values");
        for (size_t c = 0; c < nc; c++) { // a value as written: a string, or a number
            const json_t *x = json_object_get(v, json_string_value(json_array_get(sw->cols, c)));
            char num[64] = "";
            if (json_is_number(x))
                snprintf(num, sizeof num, "%.15g", json_number_value(x));
            sw->sp[sw->n].val[c] = strdup(json_is_string(x) ? json_string_value(x) : num);
            if (!sw->sp[sw->n].val[c]) {
                rc = fail(err, len, path, "out of memory");
                sw->sp[sw->n].val[c] = no_value;
            }
        }
        for (int k = 0; k < N_METRICS; k++) {
            json_t *x = json_object_get(sum, metrics[k]);
            sw->sp[sw->n].m[k] = json_is_number(x) ? json_number_value(x) : NAN;
        }
        json_decref(sum);
        sw->n++;
    }
    return rc;
}

// The plot of metric k against column c: a line per combination of the
// other columns (numbers on a numeric axis; else the distinct values as
// categories, in order of first appearance).
static int axis_plot(struct sweep_points *sw, size_t c, int k, const char *dir, const char *gnuplot, char *err,
                     size_t len)
{
    size_t n = sw->n, nc = sw->nc;
    int numeric = 1;
    for (size_t i = 0; i < n; i++)
        numeric &= !isnan(as_number(sw->sp[i].val[c]));
    char name[64];
    snprintf(name, sizeof name, "axis%zu_%s", c, metrics[k]);
    FILE *d, *g;
    if (open_plot(dir, name, &d, &g, err, len) != KS_OK)
        return KS_EINVAL;
    // series: the distinct values of the other columns, in order of first appearance
    char cmd[8192];
    size_t o = (size_t)snprintf(cmd, sizeof cmd, "plot");
    int *done = calloc(n, sizeof *done);
    int block = 0;
    for (size_t i = 0; done && i < n; i++) {
        if (done[i])
            continue;
        char label[256] = "";
        size_t lo = 0;
        for (size_t c2 = 0; c2 < nc; c2++)
            if (c2 != c)
                lo += (size_t)snprintf(label + lo, lo < sizeof label ? sizeof label - lo : 0, "%s%s=%s",
                                       lo ? " " : "", json_string_value(json_array_get(sw->cols, c2)),
                                       sw->sp[i].val[c2]);
        for (char *q = label; *q; q++)
            if (*q == '\'' || *q == '"')
                *q = '_';
        for (size_t j = i; j < n; j++) {
            int same = 1;
            for (size_t c2 = 0; c2 < nc; c2++)
                same &= c2 == c || strcmp(sw->sp[j].val[c2], sw->sp[i].val[c2]) == 0;
            if (!same)
                continue;
            done[j] = 1;
            double x = numeric ? as_number(sw->sp[j].val[c]) : 0;
            if (!numeric) // categorical: the value's index among the distinct values
                x = (double)category(sw->sp, n, c, sw->sp[j].val[c]);
            fprintf(d, "%.9g %.9g\n", x, sw->sp[j].m[k]);
        }
        fputs("\n\n", d);
        o += (size_t)snprintf(cmd + o, o < sizeof cmd ? sizeof cmd - o : 0,
                              "%s 'data/%s.dat' index %d using 1:2 with linespoints lw 2 title '%s'",
                              block ? "," : "", name, block, nc > 1 ? label : metrics[k]);
        block++;
    }
    free(done);
    const char *axis = json_string_value(json_array_get(sw->cols, c));
    script_begin(g, metrics[k], axis, metric_label[k]);
    if (!numeric) { // the distinct values as tics
        fputs("set xtics (", g);
        for (size_t q = 0, idx = 0; q < n; q++)
            if (first_of(sw->sp, q, c))
                fprintf(g, "%s\"%s\" %zu", idx ? ", " : "", sw->sp[q].val[c], idx), idx++;
        fputs(")\nset offsets 0.5, 0.5, 0, 0\n", g);
    }
    script_end(g, name, cmd);
    int bad = fclose(d) != 0;
    bad |= fclose(g) != 0;
    if (bad)
        return fail(err, len, dir, "cannot write the data or script of %s", name);
    int rc = render(dir, gnuplot, name, err, len);
    if (rc == KS_OK && !(sw->names[sw->n_names++] = strdup(name)))
        rc = fail(err, len, dir, "out of memory");
    return rc;
}

// P99 TPOT against throughput for every point, and the Pareto frontier.
static int frontier_plot(struct sweep_points *sw, const char *dir, const char *gnuplot, char *err, size_t len)
{
    size_t n = sw->n;
    FILE *d, *g;
    int rc = open_plot(dir, "frontier", &d, &g, err, len);
    if (rc == KS_OK) {
        for (size_t i = 0; i < n; i++)
            fprintf(d, "%.9g %.9g\n", sw->sp[i].m[0], sw->sp[i].m[2]);
        fputs("\n\n", d);
        // frontier: no other point has more throughput and less P99 TPOT; by throughput
        size_t *fr = calloc(n, sizeof *fr), nf = 0;
        for (size_t i = 0; fr && i < n; i++) {
            int dominated = 0;
            for (size_t j = 0; j < n; j++)
                dominated |= j != i && sw->sp[j].m[0] >= sw->sp[i].m[0] && sw->sp[j].m[2] <= sw->sp[i].m[2] &&
                             (sw->sp[j].m[0] > sw->sp[i].m[0] || sw->sp[j].m[2] < sw->sp[i].m[2]);
            if (!dominated && !isnan(sw->sp[i].m[0]) && !isnan(sw->sp[i].m[2]))
                fr[nf++] = i;
        }
        for (size_t a = 1; fr && a < nf; a++)
            for (size_t b = a; b > 0 && sw->sp[fr[b - 1]].m[0] > sw->sp[fr[b]].m[0]; b--) {
                size_t t = fr[b];
                fr[b] = fr[b - 1];
                fr[b - 1] = t;
            }
        for (size_t a = 0; fr && a < nf; a++)
            fprintf(d, "%.9g %.9g\n", sw->sp[fr[a]].m[0], sw->sp[fr[a]].m[2]);
        free(fr);
        script_begin(g, "P99 TPOT against throughput", "output tokens/s", "P99 TPOT (s)");
        script_end(g, "frontier", "plot 'data/frontier.dat' index 0 using 1:2 with points pt 7 ps 1.2 title "
                                  "'points', '' index 1 using 1:2 with linespoints lw 2 title 'Pareto frontier'");
        int bad = fclose(d) != 0;
        bad |= fclose(g) != 0;
        d = g = NULL;
        if (bad)
            rc = fail(err, len, dir, "cannot write the frontier's data or script");
        if (rc == KS_OK)
            rc = render(dir, gnuplot, "frontier", err, len);
        if (rc == KS_OK && !(sw->names[sw->n_names++] = strdup("frontier")))
            rc = fail(err, len, dir, "out of memory");
    }
    if (d)
        fclose(d);
    if (g)
        fclose(g);
    return rc;
}

// index.html: the points, then every plot.
static int sweep_index(const struct sweep_points *sw, const char *sweep_dir, const char *dir, char *err, size_t len)
{
    size_t n = sw->n, nc = sw->nc;
    int rc = KS_OK;
    char hpath[4300];
    snprintf(hpath, sizeof hpath, "%s/index.html", dir);
    struct ks_atomicfile html;
    if (ks_atomicfile_open(&html, hpath, NULL, NULL, 0) != KS_OK) {
        rc = fail(err, len, dir, "cannot write index.html");
    } else {
        FILE *hf = html.f;
        fputs("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>kvstrata sweep report</title>\n"
              "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
              "<style>body{font-family:sans-serif;max-width:1000px;margin:auto;padding:0 8px}td,th{padding:2px 8px}"
              ".scroll{overflow-x:auto}img{max-width:100%;height:auto}</style></head><body>\n"
              "<h1>kvstrata sweep report</h1>\n<p>Sweep: ", hf);
        ks_compare_html_text(hf, sweep_dir);
        fprintf(hf, " (%zu complete points of %zu)</p>\n<div class=\"scroll\"><table>\n<tr>", n, sw->np);
        for (size_t c = 0; c < nc; c++) {
            fputs("<th>", hf);
            ks_compare_html_text(hf, json_string_value(json_array_get(sw->cols, c)));
            fputs("</th>", hf);
        }
        for (int k = 0; k < N_METRICS; k++)
            fprintf(hf, "<th>%s</th>", metrics[k]);
        fputs("</tr>\n", hf);
        for (size_t i = 0; i < n; i++) {
            fputs("<tr>", hf);
            for (size_t c = 0; c < nc; c++) {
                fputs("<td>", hf);
                ks_compare_html_text(hf, sw->sp[i].val[c]);
                fputs("</td>", hf);
            }
            for (int k = 0; k < N_METRICS; k++)
                fprintf(hf, "<td>%.6g</td>", sw->sp[i].m[k]);
            fputs("</tr>\n", hf);
        }
        fputs("</table></div>\n", hf);
        for (size_t i = 0; i < sw->n_names; i++)
            fprintf(hf, "<h2>%s</h2>\n<img src=\"%s.png\" alt=\"%s\"> <a href=\"%s.svg\">SVG</a>\n", sw->names[i],
                    sw->names[i], sw->names[i], sw->names[i]);
        fputs("</body></html>\n", hf);
        if (ks_atomicfile_commit(&html, NULL, 0) != KS_OK)
            rc = fail(err, len, dir, "cannot write index.html");
    }
    return rc;
}

int ks_report_sweep(const char *sweep_dir, const char *dir, const char *gnuplot, char *err, size_t len)
{
    if (!gnuplot)
        gnuplot = "gnuplot";
    char path[4200];
    snprintf(path, sizeof path, "%s/sweep.json", sweep_dir);
    json_error_t je;
    struct sweep_points x = {.man = json_load_file(path, 0, &je)};
    if (!x.man)
        return fail(err, len, path, "cannot be read as a sweep manifest (%s)", je.text);
    x.cols = json_object_get(x.man, "columns");
    x.pts = json_object_get(x.man, "points");
    x.nc = json_array_size(x.cols);
    x.np = json_array_size(x.pts);
    x.sp = calloc(x.np ? x.np : 1, sizeof *x.sp);
    x.vals = calloc((x.np ? x.np : 1) * (x.nc ? x.nc : 1), sizeof *x.vals);
    int rc = !json_is_array(x.cols) || !json_is_array(x.pts) ? fail(err, len, path, "no columns or points") : KS_OK;
    if (rc == KS_OK && (!x.sp || !x.vals))
        rc = fail(err, len, path, "out of memory");
    if (rc == KS_OK)
        rc = load_points(&x, sweep_dir, path, err, len);
    if (rc == KS_OK && x.n == 0)
        rc = fail(err, len, sweep_dir, "no complete point to plot");
    char plots_dir[4200], data[4200];
    snprintf(plots_dir, sizeof plots_dir, "%s/plots", dir);
    snprintf(data, sizeof data, "%s/data", dir);
    if (rc == KS_OK &&
        (ks_fs_mkdirs(plots_dir, 0755, NULL, 0) != KS_OK || ks_fs_mkdirs(data, 0755, NULL, 0) != KS_OK))
        rc = fail(err, len, dir, "cannot create the report folder: %s", strerror(errno));
    x.names = calloc(x.nc * N_METRICS + 1, sizeof *x.names);
    if (rc == KS_OK && !x.names)
        rc = fail(err, len, dir, "out of memory");
    // one plot per axis and metric: a line per combination of the other axes
    for (size_t c = 0; rc == KS_OK && c < x.nc; c++)
        for (int k = 0; rc == KS_OK && k < N_METRICS; k++)
            rc = axis_plot(&x, c, k, dir, gnuplot, err, len);
    if (rc == KS_OK)
        rc = frontier_plot(&x, dir, gnuplot, err, len);
    if (rc == KS_OK)
        rc = sweep_index(&x, sweep_dir, dir, err, len);
    for (size_t i = 0; x.names && i < x.n_names; i++)
        free(x.names[i]);
    free(x.names);
    for (size_t i = 0; i < x.n; i++)
        for (size_t c = 0; c < x.nc; c++)
            if (x.sp[i].val[c] != no_value)
                free((char *)x.sp[i].val[c]);
    free(x.sp);
    free(x.vals);
    json_decref(x.man);
    return rc;
}
