// measure.c - the measured points of measure.h: windows, medians, spreads
// and fits.

#include "measure.h"

#include <math.h>
#include <stdlib.h>
#include <stdio.h>

#include "status.h"

#define KIB ((size_t)1 << 10)
#define MIB ((size_t)1 << 20)
#define N_OF(a) (sizeof(a) / sizeof((a)[0]))
#define WINDOWS KS_MEASURE_WINDOWS
#define SSD_WINDOWS KS_MEASURE_SSD_WINDOWS
enum { ERR_LEN = 4096 };

static const size_t ssd_sizes_full[] = {4 * KIB, 16 * KIB, 64 * KIB, 256 * KIB, MIB, 4 * MIB};
static const size_t ssd_sizes_quick[] = {4 * KIB, 64 * KIB, MIB};
static const unsigned qds_full[] = {1, 2, 4, 8, 16, 32, 64};
static const unsigned qds_quick[] = {1, 8};

void ks_measure_ssd_grid(int quick, struct ks_measure_grid *g)
{
    g->sizes = quick ? ssd_sizes_quick : ssd_sizes_full;
    g->n_sizes = quick ? N_OF(ssd_sizes_quick) : N_OF(ssd_sizes_full);
    g->qds = quick ? qds_quick : qds_full;
    g->n_qds = quick ? N_OF(qds_quick) : N_OF(qds_full);
}

static int cmp_dram(const void *a, const void *b)
{
    double x = ((const struct ks_dram_result *)a)->t, y = ((const struct ks_dram_result *)b)->t;
    return (x > y) - (x < y);
}

static int cmp_ssd(const void *a, const void *b)
{
    double x = ((const struct ks_ssd_result *)a)->t, y = ((const struct ks_ssd_result *)b)->t;
    return (x > y) - (x < y);
}

int ks_measure_dram(const size_t *sizes, size_t n, const struct ks_measure_series *s, size_t n_series, size_t pool,
                    double seconds, const struct ks_progress *pr, char *err, size_t len)
{
    KS_ASSERT(n <= KS_MEASURE_MAX_SIZES && n_series <= KS_MEASURE_MAX_SERIES);
    struct ks_dram_params dp = {.pool = pool};
    for (size_t j = 0; j < n_series; j++)
        dp.threads = s[j].threads > dp.threads ? s[j].threads : dp.threads;
    for (size_t i = 0; i < n; i++)
        dp.max_bytes = sizes[i] > dp.max_bytes ? sizes[i] : dp.max_bytes;
    size_t region = pool > 2 * dp.max_bytes ? pool : 2 * dp.max_bytes;
    ks_progress_say(pr, "calib: DRAM: writing %u x 2 regions of %zu MiB", dp.threads, region / MIB);
    struct ks_dram *d = ks_dram_new(&dp);
    if (!d) {
        ks_progress_done(pr);
        snprintf(err, len, "DRAM copies: cannot allocate and fault in %u x 2 regions of %zu MiB (out of memory, "
                 "or a thread cannot start)", dp.threads, region / MIB);
        return KS_ENOMEM;
    }
    struct ks_dram_result w[KS_MEASURE_MAX_SERIES][KS_MEASURE_MAX_SIZES][WINDOWS];
    for (int k = 0; k < WINDOWS; k++)
        for (size_t i = 0; i < n; i++)
            for (size_t j = 0; j < n_series; j++) {
                unsigned thr = s[j].threads;
                ks_progress_say(pr, "calib: DRAM round %d of %d: copies of %zu KiB on %u thread%s", k + 1, WINDOWS,
                                sizes[i] / KIB, thr, thr > 1 ? "s" : "");
                struct ks_dram_point p = {.bytes = sizes[i], .threads = thr, .seconds = seconds};
                int st = ks_dram_run(d, &p, &w[j][i][k]);
                if (st != KS_OK) {
                    ks_progress_done(pr);
                    ks_dram_free(d);
                    snprintf(err, len, "DRAM copies of %zu bytes on %u threads: %s", sizes[i], thr,
                             st == KS_EIO ? "a thread cannot start" : ks_status_str(st));
                    return st;
                }
            }
    ks_progress_done(pr);
    ks_dram_free(d);
    for (size_t j = 0; j < n_series; j++)
        for (size_t i = 0; i < n; i++) {
            qsort(w[j][i], WINDOWS, sizeof w[j][i][0], cmp_dram); // fastest first
            s[j].out[i] = (struct ks_measure_dram_pt){.bytes = sizes[i], .threads = s[j].threads,
                                                      .r = w[j][i][WINDOWS / 2], .hi = w[j][i][0].bytes_per_s,
                                                      .lo = w[j][i][WINDOWS - 1].bytes_per_s};
        }
    return KS_OK;
}

int ks_measure_ssd(struct ks_ssd *s, enum ks_ssd_op op, const struct ks_measure_grid *g, double seconds,
                   struct ks_measure_ssd_pt *out, const struct ks_progress *pr, char *err, size_t len)
{
    char why[ERR_LEN];
    size_t k = 0;
    for (size_t i = 0; i < g->n_sizes; i++)
        for (size_t j = 0; j < g->n_qds; j++, k++) {
            const char *what = op == KS_SSD_READ ? "reads" : "writes";
            size_t bytes = g->sizes[i];
            unsigned qd = g->qds[j];
            ks_progress_say(pr, "calib: SSD %s of %zu KiB at queue depth %u", what, bytes / KIB, qd);
            struct ks_ssd_point p = {.op = op, .bytes = bytes, .qd = qd, .seconds = seconds};
            out[k] = (struct ks_measure_ssd_pt){.op = op, .bytes = bytes, .qd = qd};
            struct ks_ssd_result w[SSD_WINDOWS];
            for (int x = 0; x < SSD_WINDOWS; x++) {
                int st = ks_ssd_run(s, &p, &w[x], why, sizeof why);
                if (st != KS_OK) {
                    ks_progress_done(pr);
                    snprintf(err, len, "SSD %s of %zu bytes at queue depth %u: %s", what, bytes, qd, why);
                    return st;
                }
            }
            qsort(w, SSD_WINDOWS, sizeof w[0], cmp_ssd); // fastest first
            out[k].r = w[SSD_WINDOWS / 2];
            out[k].hi = w[0].bytes_per_s;
            out[k].lo = w[SSD_WINDOWS - 1].bytes_per_s;
        }
    ks_progress_done(pr);
    return KS_OK;
}

// NOTE: samples per idle time: as many as WAKE_BUDGET seconds of idle spin
// allow, within [WAKE_MIN, WAKE_MAX]: 200, 200, 60 and 20 at 1e-4 to 1e-1 s,
// 2.8 s of idle in all (plus ~0.05 s of wake-ups). The long idle times are
// the costly ones and the ones the simulator charges most (a lane idle a
// whole step); 20 samples still give a P10 and P90 two samples in from the
// ends. With --quick: 40 and 10 at 1e-4 and 1e-3 s (~0.015 s).
#define WAKE_BUDGET 0.6
#define WAKE_BUDGET_QUICK 0.01
enum { WAKE_MIN = 20, WAKE_MAX = 200, WAKE_MIN_QUICK = 3, WAKE_MAX_QUICK = 40 };

static unsigned wake_samples(double idle, int quick)
{
    double n = round((quick ? WAKE_BUDGET_QUICK : WAKE_BUDGET) / idle);
    double lo = quick ? WAKE_MIN_QUICK : WAKE_MIN, hi = quick ? WAKE_MAX_QUICK : WAKE_MAX;
    return (unsigned)fmin(hi, fmax(lo, n));
}

int ks_measure_wake(const double *idle, size_t n, int quick, struct ks_measure_wake_pt *out,
                    const struct ks_progress *pr, char *err, size_t len)
{
    KS_ASSERT(n <= KS_MEASURE_MAX_WAKE);
    for (size_t i = 0; i < n; i++) {
        struct ks_wake_params p = {.idle = idle[i], .samples = wake_samples(idle[i], quick)};
        ks_progress_say(pr, "calib: %u wake-ups after %g ms idle", p.samples, 1e3 * idle[i]);
        out[i] = (struct ks_measure_wake_pt){.idle = idle[i]};
        int st = ks_wake_run(&p, &out[i].r);
        if (st != KS_OK) {
            ks_progress_done(pr);
            snprintf(err, len, "wake-ups after %g s idle: %s", idle[i],
                     st == KS_EIO ? "the waiting thread cannot start" : ks_status_str(st));
            return st;
        }
    }
    ks_progress_done(pr);
    return KS_OK;
}

int ks_measure_fit_dram(const struct ks_measure_dram_pt *p, size_t n, size_t nt, struct ks_fit_copy *f)
{
    KS_ASSERT(n <= KS_MEASURE_MAX_SIZES);
    double x[KS_MEASURE_MAX_SIZES], t[KS_MEASURE_MAX_SIZES];
    for (size_t i = 0; i < n; i++) {
        // the threads share the memory bandwidth
        x[i] = (double)p[i].threads * (double)p[i].bytes * ks_dram_moved_per_copied(p[i].bytes, nt);
        t[i] = p[i].r.t;
    }
    return ks_fit_copy(x, t, n, f);
}

int ks_measure_fit_ssd(struct ks_measure_ssd_pt *p, size_t n, struct ks_fit_ssd *f)
{
    KS_ASSERT(n <= KS_MEASURE_MAX_SSD);
    struct ks_fit_ssd_point q[KS_MEASURE_MAX_SSD] = {{0}};
    for (size_t i = 0; i < n; i++)
        q[i] = (struct ks_fit_ssd_point){.qd = p[i].qd, .bytes = (double)p[i].bytes, .t = p[i].r.t};
    int st = ks_fit_ssd(q, n, f);
    for (size_t i = 0; st == KS_OK && i < n; i++) {
        p[i].model = ks_fit_ssd_time(f, p[i].qd, (double)p[i].bytes);
        p[i].err = (p[i].model - p[i].r.t) / p[i].r.t;
    }
    return st;
}

const struct ks_measure_ssd_pt *ks_measure_worst_ssd(const struct ks_measure_ssd_pt *p, size_t n)
{
    const struct ks_measure_ssd_pt *w = p;
    for (size_t i = 1; i < n; i++)
        if (fabs(p[i].err) > fabs(w->err))
            w = &p[i];
    return w;
}

double ks_measure_ssd_spread(const struct ks_measure_ssd_pt *p)
{
    return (p->hi - p->lo) / p->r.bytes_per_s;
}

double ks_measure_dram_spread(const struct ks_measure_dram_pt *p)
{
    return (p->hi - p->lo) / p->r.bytes_per_s;
}

double ks_measure_wake_spread(const struct ks_measure_wake_pt *p)
{
    return p->r.median > 0 ? (p->r.p90 - p->r.p10) / p->r.median : 0;
}
