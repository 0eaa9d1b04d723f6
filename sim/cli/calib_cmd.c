// calib_cmd.c - `kvstrata calib host|check|gpu`: the calibration commands.
//
// calib host measures host DRAM copies (one thread and all cores), the
// wake-up of a thread idle on a condition variable (wake.h) and O_DIRECT SSD
// reads and writes (sizes x queue depths) in --dir, fits the models of fit.h
// and writes a full profile: the base profile's figures with their sources,
// the host figures replaced by measured ones whose source names the command,
// the date, the machine and the fit's worst residual (host_wake: every
// point's samples and P10-P90).
// calib check measures again and sets each model's prediction (from the
// profile's figures alone) against the measurement, with the goals of issue 5:
// copies above 64 KiB within 5%, SSD reads and writes within 10% across sizes
// and queue depths (and the same reads replayed in SimGrid, simssd.h, against
// the same goal), and the profile's host_wake at its idle times within an
// informative 25%. It reports whether each goal is met and exits 0 either way: a
// missed goal is a finding, not a failure of the command.
// calib gpu measures the GPU copies (gpubench.h; copy_overhead is the fixed
// cost of one batched copy call, what the engine charges per migration
// batch) and the sparse decode kernel (bench_kernels.h, as `bench kernels
// --backend cuda --profile` times it) and writes a profile with the GPU
// figures and the kernel_time table measured and the rest from the base.
#define _POSIX_C_SOURCE 200809L // gethostname, gmtime_r, isatty

#include "calib_cmd.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "bench_kernels.h"
#include "cmdline.h"
#include "copybench.h"
#include "device.h"
#include "dram.h"
#include "fit.h"
#include "gpubench.h"
#include "json.h"
#include "kernel.h"
#include "luatab.h"
#include "profile.h"
#include "scenario.h"
#include "simssd.h"
#include "ssd.h"
#include "status.h"
#include "units.h"
#include "wake.h"

#define KIB ((size_t)1 << 10)
#define MIB ((size_t)1 << 20)
#define GIB ((size_t)1 << 30)
#define COPY_GOAL 0.05     // copies above 64 KiB: relative error at most
#define SSD_GOAL 0.10      // SSD reads and writes, and the simulated reads
#define WAKE_GOAL 0.25     // host wake-ups: informative (calib/README.md)
#define GOAL_MIN_BYTES (64 * KIB)
#define SIM_ROUNDS 8       // requests per simulated actor: the model is steady after one
#define DEFAULT_BASE "h200_sxm_pcie5"

enum { MAX_SIZES = 16, MAX_QDS = 16, MAX_SSD = MAX_SIZES * MAX_QDS, MAX_WAKE = 64, ERR_LEN = 4096 };

static const size_t dram_full[] = {64 * KIB, 256 * KIB, MIB, 4 * MIB, 16 * MIB, 64 * MIB, 256 * MIB, GIB};
static const size_t dram_quick[] = {64 * KIB, 256 * KIB, MIB, 4 * MIB};
static const size_t check_dram_full[] = {128 * KIB, MIB, 16 * MIB, 256 * MIB};
static const size_t check_dram_quick[] = {128 * KIB, MIB, 4 * MIB};
static const size_t ssd_sizes_full[] = {4 * KIB, 16 * KIB, 64 * KIB, 256 * KIB, MIB, 4 * MIB};
static const size_t ssd_sizes_quick[] = {4 * KIB, 64 * KIB, MIB};
static const unsigned qds_full[] = {1, 2, 4, 8, 16, 32, 64};
static const unsigned qds_quick[] = {1, 8};
// idle seconds before a wake-up: a lane between steps (~0.1 s), a decode
// thread waiting for a copy (0.1-1 ms), and between
static const double wake_full[] = {1e-4, 1e-3, 1e-2, 1e-1};
static const double wake_quick[] = {1e-4, 1e-3};
static const size_t gpu_sizes[] = {4 * KIB, 16 * KIB, 64 * KIB, 256 * KIB, MIB, 4 * MIB, 16 * MIB, 64 * MIB};
#define N_OF(a) (sizeof(a) / sizeof((a)[0]))

// ---- the machine and the command line -------------------------------------

struct machine {
    char host[256], cpu[256], date[32];
    unsigned cores;
    uint64_t mem; // bytes, MemTotal
};

static void machine_init(struct machine *m)
{
    memset(m, 0, sizeof *m);
    if (gethostname(m->host, sizeof m->host) != 0 || !m->host[0])
        snprintf(m->host, sizeof m->host, "unknown");
    m->host[sizeof m->host - 1] = '\0';
    snprintf(m->cpu, sizeof m->cpu, "unknown CPU");
    char line[512];
    FILE *f = fopen("/proc/cpuinfo", "r");
    while (f && fgets(line, sizeof line, f))
        if (strncmp(line, "model name", 10) == 0) {
            const char *c = strchr(line, ':');
            if (c) {
                c += 1 + (c[1] == ' ');
                snprintf(m->cpu, sizeof m->cpu, "%.*s", (int)strcspn(c, "\n"), c);
            }
            break;
        }
    if (f)
        fclose(f);
    f = fopen("/proc/meminfo", "r");
    unsigned long long kb;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "MemTotal: %llu kB", &kb) == 1) {
            m->mem = (uint64_t)kb * 1024;
            break;
        }
    if (f)
        fclose(f);
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    m->cores = n > 0 ? (unsigned)n : 1;
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(m->date, sizeof m->date, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

static void fmt(double v, enum ks_unit unit, char *buf, size_t len)
{
    ks_units_format(v, unit, buf, len);
}

// snprintf for texts that may be cut short at len - 1 (sources, notes).
static void text(char *buf, size_t len, const char *f, ...) __attribute__((format(printf, 3, 4)));
static void text(char *buf, size_t len, const char *f, ...)
{
    va_list ap;
    va_start(ap, f);
    vsnprintf(buf, len, f, ap);
    va_end(ap);
}

static int tty;

static void progress(const char *fmt_, ...) __attribute__((format(printf, 1, 2)));
static void progress(const char *fmt_, ...)
{
    if (!tty)
        return;
    va_list ap;
    va_start(ap, fmt_);
    fputs("\r", stderr);
    vfprintf(stderr, fmt_, ap);
    fputs("\033[K", stderr);
    va_end(ap);
}

static void progress_done(void)
{
    if (tty)
        fputs("\r\033[K", stderr);
}

// ---- measurements ---------------------------------------------------------

struct dram_pt {
    size_t bytes;
    unsigned threads;
    struct ks_dram_result r; // the median window (by seconds per copy)
    double lo, hi;           // the slowest and fastest window's bytes per second
    double model, err;       // predicted seconds per copy, relative error
};

struct ssd_pt {
    enum ks_ssd_op op;
    size_t bytes;
    unsigned qd;
    struct ks_ssd_result r;  // the median window (by seconds per request)
    double lo, hi;           // the slowest and fastest window's bytes per second
    double model, err, sim, sim_err;
};

struct wake_pt {
    double idle;             // seconds the waiter was idle before its signal
    struct ks_wake_result r; // seconds from the signal to the waiter running
    double model, err;       // the profile's seconds at this idle time, relative error of the median
};

// NOTE: each point is the median of WINDOWS timed windows (SSD_WINDOWS for the
// SSD): the virtual disk and memory of a shared machine stall now and then,
// and one stall in one window must not become the figure. The SSD gets more
// and longer windows (SSD_SECONDS each) because the development VM's virtual
// disk swings by tens of percent between back-to-back windows of 0.15 s, and
// by 2-3x over minutes (calib/README.md). The DRAM sizes are measured in
// WINDOWS rounds of one window each rather than size after size, because the
// VM's copy speed moves by tens of percent within seconds to minutes: in
// rounds a drift reaches every size, where size after size it made one size
// fast and the next slow.
// Each point also reports the spread of its windows, so that a reader sees
// how far one figure can be trusted.
enum { WINDOWS = 3, SSD_WINDOWS = 5, MAX_SERIES = 2 };
#define DRAM_SECONDS 0.15
#define SSD_SECONDS 0.3
#define QUICK_SECONDS 0.01

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

// One DRAM curve: every size copied by `threads` threads at once.
struct dram_series {
    unsigned threads;
    struct dram_pt *out; // one point per size
};

// Measures every series at every size: WINDOWS rounds, each one window of
// every size and series in turn, on one set of regions faulted in before the
// first (dram.h); a point is the median of its windows.
static int measure_dram(const struct ks_cli_cmd *cmd, const size_t *sizes, size_t n, const struct dram_series *s,
                        size_t n_series, size_t pool, double seconds)
{
    KS_ASSERT(n <= MAX_SIZES && n_series <= MAX_SERIES);
    struct ks_dram_params dp = {.pool = pool};
    for (size_t j = 0; j < n_series; j++)
        dp.threads = s[j].threads > dp.threads ? s[j].threads : dp.threads;
    for (size_t i = 0; i < n; i++)
        dp.max_bytes = sizes[i] > dp.max_bytes ? sizes[i] : dp.max_bytes;
    size_t region = pool > 2 * dp.max_bytes ? pool : 2 * dp.max_bytes;
    progress("calib: DRAM: writing %u x 2 regions of %zu MiB", dp.threads, region / MIB);
    struct ks_dram *d = ks_dram_new(&dp);
    if (!d) {
        progress_done();
        return ks_cli_fail(cmd, "DRAM copies: cannot allocate and fault in %u x 2 regions of %zu MiB (out of memory, "
                           "or a thread cannot start)", dp.threads, region / MIB);
    }
    struct ks_dram_result w[MAX_SERIES][MAX_SIZES][WINDOWS];
    for (int k = 0; k < WINDOWS; k++)
        for (size_t i = 0; i < n; i++)
            for (size_t j = 0; j < n_series; j++) {
                unsigned thr = s[j].threads;
                progress("calib: DRAM round %d of %d: copies of %zu KiB on %u thread%s", k + 1, WINDOWS,
                         sizes[i] / KIB, thr, thr > 1 ? "s" : "");
                struct ks_dram_point p = {.bytes = sizes[i], .threads = thr, .seconds = seconds};
                int st = ks_dram_run(d, &p, &w[j][i][k]);
                if (st != KS_OK) {
                    progress_done();
                    ks_dram_free(d);
                    return ks_cli_fail(cmd, "DRAM copies of %zu bytes on %u threads: %s", sizes[i], thr,
                                       st == KS_EIO ? "a thread cannot start" : ks_status_str(st));
                }
            }
    progress_done();
    ks_dram_free(d);
    for (size_t j = 0; j < n_series; j++)
        for (size_t i = 0; i < n; i++) {
            qsort(w[j][i], WINDOWS, sizeof w[j][i][0], cmp_dram); // fastest first
            s[j].out[i] = (struct dram_pt){.bytes = sizes[i], .threads = s[j].threads, .r = w[j][i][WINDOWS / 2],
                                           .hi = w[j][i][0].bytes_per_s, .lo = w[j][i][WINDOWS - 1].bytes_per_s};
        }
    return 0;
}

static int measure_ssd(const struct ks_cli_cmd *cmd, struct ks_ssd *s, enum ks_ssd_op op, const size_t *sizes,
                       size_t n_sizes, const unsigned *qds, size_t n_qds, double seconds, struct ssd_pt *out)
{
    char err[ERR_LEN];
    size_t k = 0;
    for (size_t i = 0; i < n_sizes; i++)
        for (size_t j = 0; j < n_qds; j++, k++) {
            const char *what = op == KS_SSD_READ ? "reads" : "writes";
            progress("calib: SSD %s of %zu KiB at queue depth %u", what, sizes[i] / KIB, qds[j]);
            struct ks_ssd_point p = {.op = op, .bytes = sizes[i], .qd = qds[j], .seconds = seconds};
            out[k] = (struct ssd_pt){.op = op, .bytes = sizes[i], .qd = qds[j]};
            struct ks_ssd_result w[SSD_WINDOWS];
            for (int x = 0; x < SSD_WINDOWS; x++)
                if (ks_ssd_run(s, &p, &w[x], err, sizeof err) != KS_OK) {
                    progress_done();
                    return ks_cli_fail(cmd, "SSD %s of %zu bytes at queue depth %u: %s", what, sizes[i], qds[j], err);
                }
            qsort(w, SSD_WINDOWS, sizeof w[0], cmp_ssd); // fastest first
            out[k].r = w[SSD_WINDOWS / 2];
            out[k].hi = w[0].bytes_per_s;
            out[k].lo = w[SSD_WINDOWS - 1].bytes_per_s;
        }
    progress_done();
    return 0;
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

// Times the wake-ups after each idle time (wake.h); the caller's thread spins
// between handshake and signal, as a decode thread computing.
static int measure_wake(const struct ks_cli_cmd *cmd, const double *idle, size_t n, int quick, struct wake_pt *out)
{
    KS_ASSERT(n <= MAX_WAKE);
    for (size_t i = 0; i < n; i++) {
        struct ks_wake_params p = {.idle = idle[i], .samples = wake_samples(idle[i], quick)};
        progress("calib: %u wake-ups after %g ms idle", p.samples, 1e3 * idle[i]);
        out[i] = (struct wake_pt){.idle = idle[i]};
        int st = ks_wake_run(&p, &out[i].r);
        if (st != KS_OK) {
            progress_done();
            return ks_cli_fail(cmd, "wake-ups after %g s idle: %s", idle[i],
                               st == KS_EIO ? "the waiting thread cannot start" : ks_status_str(st));
        }
    }
    progress_done();
    return 0;
}

// Fits t = lat + threads * size * moved(size) / bw: bw in bytes the memory
// moves per second (dram.h: a copy moves 3 bytes per byte below glibc's
// non-temporal threshold nt, 2 at or above it).
static int fit_dram(const struct dram_pt *p, size_t n, size_t nt, struct ks_fit_copy *f)
{
    double x[MAX_SIZES], t[MAX_SIZES];
    for (size_t i = 0; i < n; i++) {
        // the threads share the memory bandwidth
        x[i] = (double)p[i].threads * (double)p[i].bytes * ks_dram_moved_per_copied(p[i].bytes, nt);
        t[i] = p[i].r.t;
    }
    return ks_fit_copy(x, t, n, f);
}

static int fit_ssd(struct ssd_pt *p, size_t n, struct ks_fit_ssd *f)
{
    struct ks_fit_ssd_point q[MAX_SSD] = {{0}};
    for (size_t i = 0; i < n; i++)
        q[i] = (struct ks_fit_ssd_point){.qd = p[i].qd, .bytes = (double)p[i].bytes, .t = p[i].r.t};
    int st = ks_fit_ssd(q, n, f);
    for (size_t i = 0; st == KS_OK && i < n; i++) {
        p[i].model = ks_fit_ssd_time(f, p[i].qd, (double)p[i].bytes);
        p[i].err = (p[i].model - p[i].r.t) / p[i].r.t;
    }
    return st;
}

// The point where |err| is largest.
static const struct ssd_pt *worst_ssd(const struct ssd_pt *p, size_t n)
{
    const struct ssd_pt *w = p;
    for (size_t i = 1; i < n; i++)
        if (fabs(p[i].err) > fabs(w->err))
            w = &p[i];
    return w;
}

// How far a point's windows lie apart: (fastest - slowest) / median, in
// bytes per second. A point whose windows differ by more than a goal cannot
// show that a model meets it.
static double ssd_spread(const struct ssd_pt *p)
{
    return (p->hi - p->lo) / p->r.bytes_per_s;
}

static double dram_spread(const struct dram_pt *p)
{
    return (p->hi - p->lo) / p->r.bytes_per_s;
}

// How far a wake-up point's samples lie apart: (P90 - P10) / median.
static double wake_spread(const struct wake_pt *p)
{
    return p->r.median > 0 ? (p->r.p90 - p->r.p10) / p->r.median : 0;
}

// ---- reports ----------------------------------------------------------------

static json_t *dram_json(const struct dram_pt *p, size_t n, int with_model)
{
    json_t *a = json_array();
    for (size_t i = 0; a && i < n; i++) {
        json_t *o = json_object();
        int err = !o;
        err |= ks_json_set_int(o, "bytes", (int64_t)p[i].bytes);
        err |= ks_json_set_int(o, "threads", p[i].threads);
        err |= ks_json_set_real(o, "seconds_per_copy", p[i].r.t);
        err |= ks_json_set_real(o, "bytes_per_s", p[i].r.bytes_per_s);
        err |= ks_json_set_real(o, "bytes_per_s_min", p[i].lo);
        err |= ks_json_set_real(o, "bytes_per_s_max", p[i].hi);
        err |= ks_json_set_real(o, "window_spread", dram_spread(&p[i]));
        if (with_model) {
            err |= ks_json_set_real(o, "predicted_s", p[i].model);
            err |= ks_json_set_real(o, "rel_error", p[i].err);
        }
        if (err || json_array_append_new(a, o) != 0) {
            json_decref(a);
            return NULL;
        }
    }
    return a;
}

static json_t *ssd_json(const struct ssd_pt *p, size_t n, int with_sim)
{
    json_t *a = json_array();
    for (size_t i = 0; a && i < n; i++) {
        json_t *o = json_object();
        int err = !o;
        err |= ks_json_set_int(o, "bytes", (int64_t)p[i].bytes);
        err |= ks_json_set_int(o, "qd", p[i].qd);
        err |= ks_json_set_int(o, "requests", (int64_t)p[i].r.requests);
        err |= ks_json_set_real(o, "seconds_per_request", p[i].r.t);
        err |= ks_json_set_real(o, "bytes_per_s", p[i].r.bytes_per_s);
        err |= ks_json_set_real(o, "bytes_per_s_min", p[i].lo);
        err |= ks_json_set_real(o, "bytes_per_s_max", p[i].hi);
        err |= ks_json_set_real(o, "window_spread", ssd_spread(&p[i]));
        err |= ks_json_set_real(o, "iops", (double)p[i].r.requests / p[i].r.elapsed);
        err |= ks_json_set_real(o, "predicted_s", p[i].model);
        err |= ks_json_set_real(o, "rel_error", p[i].err);
        if (with_sim) {
            err |= ks_json_set_real(o, "simulated_s", p[i].sim);
            err |= ks_json_set_real(o, "sim_rel_error", p[i].sim_err);
        }
        if (err || json_array_append_new(a, o) != 0) {
            json_decref(a);
            return NULL;
        }
    }
    return a;
}

static json_t *wake_json(const struct wake_pt *p, size_t n, int with_model)
{
    json_t *a = json_array();
    for (size_t i = 0; a && i < n; i++) {
        json_t *o = json_object();
        int err = !o;
        err |= ks_json_set_real(o, "idle_s", p[i].idle);
        err |= ks_json_set_int(o, "samples", p[i].r.samples);
        err |= ks_json_set_real(o, "seconds", p[i].r.median);
        err |= ks_json_set_real(o, "p10_s", p[i].r.p10);
        err |= ks_json_set_real(o, "p90_s", p[i].r.p90);
        err |= ks_json_set_real(o, "min_s", p[i].r.min);
        err |= ks_json_set_real(o, "max_s", p[i].r.max);
        err |= ks_json_set_real(o, "spread", wake_spread(&p[i]));
        if (with_model) {
            err |= ks_json_set_real(o, "predicted_s", p[i].model);
            err |= ks_json_set_real(o, "rel_error", p[i].err);
        }
        if (err || json_array_append_new(a, o) != 0) {
            json_decref(a);
            return NULL;
        }
    }
    return a;
}

static int set_copy_fit(json_t *o, const char *key, const struct ks_fit_copy *f)
{
    json_t *x = json_object();
    if (!x)
        return -1;
    int err = ks_json_set_real(x, "lat_s", f->lat);
    err |= ks_json_set_real(x, "bw_bytes_per_s", f->bw);
    err |= ks_json_set_real(x, "worst_residual", f->worst);
    err |= ks_json_set_real(x, "rms_residual", f->rms);
    return err | json_object_set_new(o, key, x);
}

static int set_ssd_fit(json_t *o, const char *key, const struct ks_fit_ssd *f)
{
    json_t *x = json_object();
    if (!x)
        return -1;
    int err = ks_json_set_real(x, "lat_s", f->lat);
    err |= ks_json_set_real(x, "op_s", f->op);
    err |= ks_json_set_real(x, "bw_bytes_per_s", f->bw);
    err |= ks_json_set_real(x, "worst_residual", f->worst);
    err |= ks_json_set_real(x, "rms_residual", f->rms);
    return err | json_object_set_new(o, key, x);
}

static void print_dram(FILE *f, const char *title, const struct dram_pt *p, size_t n, int with_model)
{
    fprintf(f, "%s\n  %10s %8s %14s %12s %15s %7s%s\n", title, "bytes", "threads", "s/copy", "GB/s", "windows_GB/s",
            "spread", with_model ? "   predicted_s   error" : "");
    for (size_t i = 0; i < n; i++) {
        fprintf(f, "  %10zu %8u %14.6e %12.3f %7.3f-%-7.3f %6.1f%%", p[i].bytes, p[i].threads, p[i].r.t,
                p[i].r.bytes_per_s / 1e9, p[i].lo / 1e9, p[i].hi / 1e9, 100 * dram_spread(&p[i]));
        if (with_model)
            fprintf(f, "  %12.6e %+6.1f%%", p[i].model, 100 * p[i].err);
        fputc('\n', f);
    }
}

static void print_ssd(FILE *f, const char *title, const struct ssd_pt *p, size_t n, int with_sim)
{
    fprintf(f, "%s\n  %8s %4s %12s %10s %17s %7s %10s %12s %7s%s\n", title, "bytes", "qd", "s/request", "MB/s",
            "windows_MB/s", "spread", "IOPS", "model_s", "error", with_sim ? "    simulated_s   error" : "");
    for (size_t i = 0; i < n; i++) {
        fprintf(f, "  %8zu %4u %12.4e %10.1f %8.1f-%-8.1f %6.1f%% %10.0f %12.4e %+6.1f%%", p[i].bytes, p[i].qd,
                p[i].r.t, p[i].r.bytes_per_s / 1e6, p[i].lo / 1e6, p[i].hi / 1e6, 100 * ssd_spread(&p[i]),
                (double)p[i].r.requests / p[i].r.elapsed, p[i].model, 100 * p[i].err);
        if (with_sim)
            fprintf(f, "  %12.4e %+6.1f%%", p[i].sim, 100 * p[i].sim_err);
        fputc('\n', f);
    }
}

static void print_wake(FILE *f, const char *title, const struct wake_pt *p, size_t n, int with_model)
{
    fprintf(f, "%s\n  %9s %8s %10s %17s %19s %7s%s\n", title, "idle_s", "samples", "median_us", "P10-P90_us",
            "min-max_us", "spread", with_model ? "  predicted_us   error" : "");
    for (size_t i = 0; i < n; i++) {
        fprintf(f, "  %9.3g %8u %10.1f %8.1f-%-8.1f %9.1f-%-9.1f %6.1f%%", p[i].idle, p[i].r.samples,
                1e6 * p[i].r.median, 1e6 * p[i].r.p10, 1e6 * p[i].r.p90, 1e6 * p[i].r.min, 1e6 * p[i].r.max,
                100 * wake_spread(&p[i]));
        if (with_model)
            fprintf(f, "  %12.1f %+6.1f%%", 1e6 * p[i].model, 100 * p[i].err);
        fputc('\n', f);
    }
}

// ---- checks shared by the commands ----------------------------------------

// --dir must be a directory this process can create a file in: checked
// before any measurement, so a mistyped path fails at once (O_DIRECT itself
// is checked when the file is opened). 0, or the exit status after saying why.
static int dir_ok(const struct ks_cli_cmd *cmd, const char *dir)
{
    struct stat st;
    if (stat(dir, &st) != 0)
        return ks_cli_fail(cmd, "--dir %s: %s", dir, strerror(errno));
    if (!S_ISDIR(st.st_mode))
        return ks_cli_fail(cmd, "--dir %s: not a directory", dir);
    if (access(dir, W_OK | X_OK) != 0)
        return ks_cli_fail(cmd, "--dir %s: %s", dir, strerror(errno));
    return 0;
}

static int out_ok(const struct ks_cli_cmd *cmd, const char *out)
{
    size_t n = strlen(out);
    const char *base = strrchr(out, '/');
    base = base ? base + 1 : out;
    size_t bn = strlen(base);
    if (bn < 5 || strcmp(base + bn - 4, ".lua") != 0)
        return ks_cli_usage_error(cmd, "-o %s: a profile file ends in .lua (calib/profiles/NAME.lua)", out);
    for (size_t i = 0; i + 4 < bn; i++) {
        char c = base[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-'))
            return ks_cli_usage_error(cmd, "-o %s: a profile's name takes letters, digits, '_' and '-' only", out);
    }
    char dir[4096];
    if (base == out)
        snprintf(dir, sizeof dir, ".");
    else
        snprintf(dir, sizeof dir, "%.*s", (int)(base - out - 1 > 0 ? base - out - 1 : 1), out);
    (void)n;
    struct stat st;
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
        return ks_cli_fail(cmd, "-o %s: no directory %s", out, dir);
    if (access(dir, W_OK) != 0)
        return ks_cli_fail(cmd, "-o %s: cannot write in %s: %s", out, dir, strerror(errno));
    return 0;
}

// The profile's name: -o's file name without ".lua".
static void profile_name(const char *out, char *buf, size_t len)
{
    const char *base = strrchr(out, '/');
    base = base ? base + 1 : out;
    snprintf(buf, len, "%.*s", (int)(strlen(base) - 4), base);
}

static char *find_base(const struct ks_cli_cmd *cmd, const char *base, int *status)
{
    char *file = ks_calib_profile_find(base);
    if (!file) {
        *status = ks_cli_usage_error(cmd, "--base %s: no such profile (a name under calib/profiles or a file)", base);
        return NULL;
    }
    char err[ERR_LEN];
    if (ks_scenario_check_profile(file, NULL, err, sizeof err) != KS_OK) {
        *status = ks_cli_fail(cmd, "--base %s is not a valid profile:\n%s", base, err);
        free(file);
        return NULL;
    }
    return file;
}

// ---- calib host ------------------------------------------------------------

struct host_opts {
    const char *dir, *out, *base;
    int quick, json;
    uint32_t threads, file_mib;
    double seconds;
};

struct host_run {
    unsigned threads;
    size_t n_dram;
    struct dram_pt dram1[MAX_SIZES], dramn[MAX_SIZES];
    struct ks_fit_copy fit1, fitn; // bw: bytes moved per second
    size_t nt;                     // glibc's non-temporal threshold here (0: unknown)
    size_t n_wake;
    struct wake_pt wake[MAX_WAKE];
    size_t n_ssd;
    struct ssd_pt rd[MAX_SSD], wr[MAX_SSD];
    struct ks_fit_ssd fit_rd, fit_wr;
    char fsdesc[320];
    uint64_t file_bytes;
    double dram_seconds, seconds; // a DRAM window, an SSD window
};

static int host_measure(const struct ks_cli_cmd *cmd, const struct host_opts *o, struct host_run *h)
{
    const size_t *ds = o->quick ? dram_quick : dram_full;
    h->n_dram = o->quick ? N_OF(dram_quick) : N_OF(dram_full);
    size_t pool = o->quick ? 64 * MIB : 256 * MIB;
    h->dram_seconds = o->seconds > 0 ? o->seconds : o->quick ? QUICK_SECONDS : DRAM_SECONDS;
    // one thread and all threads in the same rounds: a drift reaches both curves
    const struct dram_series series[] = {{1, h->dram1}, {h->threads, h->dramn}};
    int rc = measure_dram(cmd, ds, h->n_dram, series, N_OF(series), pool, h->dram_seconds);
    if (rc != 0)
        return rc;
    h->nt = ks_dram_nt_threshold();
    if (fit_dram(h->dram1, h->n_dram, h->nt, &h->fit1) != KS_OK ||
        fit_dram(h->dramn, h->n_dram, h->nt, &h->fitn) != KS_OK)
        return ks_cli_fail(cmd, "the DRAM copy times do not fit latency + size * moved / bandwidth");

    h->n_wake = o->quick ? N_OF(wake_quick) : N_OF(wake_full);
    rc = measure_wake(cmd, o->quick ? wake_quick : wake_full, h->n_wake, o->quick, h->wake);
    if (rc != 0)
        return rc;

    char err[ERR_LEN];
    h->file_bytes = (uint64_t)(o->file_mib ? o->file_mib : o->quick ? 64 : 1024) * MIB;
    h->seconds = o->seconds > 0 ? o->seconds : o->quick ? QUICK_SECONDS : SSD_SECONDS;
    ks_ssd_describe_dir(o->dir, h->fsdesc, sizeof h->fsdesc);
    progress("calib: filling a %" PRIu64 " MiB file in %s", h->file_bytes / MIB, o->dir);
    struct ks_ssd *s = ks_ssd_open(o->dir, h->file_bytes, 1, err, sizeof err);
    progress_done();
    if (!s)
        return ks_cli_fail(cmd, "--dir %s", err);
    const size_t *sizes = o->quick ? ssd_sizes_quick : ssd_sizes_full;
    size_t n_sizes = o->quick ? N_OF(ssd_sizes_quick) : N_OF(ssd_sizes_full);
    const unsigned *qds = o->quick ? qds_quick : qds_full;
    size_t n_qds = o->quick ? N_OF(qds_quick) : N_OF(qds_full);
    h->n_ssd = n_sizes * n_qds;
    rc = measure_ssd(cmd, s, KS_SSD_READ, sizes, n_sizes, qds, n_qds, h->seconds, h->rd);
    if (rc == 0)
        rc = measure_ssd(cmd, s, KS_SSD_WRITE, sizes, n_sizes, qds, n_qds, h->seconds, h->wr);
    if (ks_ssd_close(s, err, sizeof err) != KS_OK && rc == 0)
        rc = ks_cli_fail(cmd, "%s", err);
    if (rc != 0)
        return rc;
    if (fit_ssd(h->rd, h->n_ssd, &h->fit_rd) != KS_OK || fit_ssd(h->wr, h->n_ssd, &h->fit_wr) != KS_OK)
        return ks_cli_fail(cmd, "the SSD times do not fit the model of calib/fit.h");
    return 0;
}

// v to 4 significant digits: what a wake-up median carries (its runs differ
// by more), and a profile line a reader can take in.
static double sig4(double v)
{
    char buf[32];
    snprintf(buf, sizeof buf, "%.4g", v);
    return strtod(buf, NULL);
}

static int host_write_profile(const struct ks_cli_cmd *cmd, const struct host_opts *o, const struct host_run *h,
                              const struct machine *m, const char *base_file, const char *cmdline)
{
    char where[1024], v_dram[32], v_rbw[32], v_wbw[32], v_lat[32], v_rop[32], v_wop[32], v_l2[32];
    text(where, sizeof where, "`%s` on %s (%s, %u cores), %s", cmdline, m->host, m->cpu, m->cores, m->date);
    fmt(h->fitn.bw, KS_UNIT_BANDWIDTH, v_dram, sizeof v_dram);
    fmt(h->fit_rd.bw, KS_UNIT_BANDWIDTH, v_rbw, sizeof v_rbw);
    fmt(h->fit_wr.bw, KS_UNIT_BANDWIDTH, v_wbw, sizeof v_wbw);
    fmt(h->fit_rd.lat, KS_UNIT_TIME, v_lat, sizeof v_lat);
    fmt(h->fit_rd.op, KS_UNIT_TIME, v_rop, sizeof v_rop);
    fmt(h->fit_wr.op, KS_UNIT_TIME, v_wop, sizeof v_wop);
    snprintf(v_l2, sizeof v_l2, "%" PRIu64, m->mem);
    size_t lo = h->dramn[0].bytes, hi = h->dramn[h->n_dram - 1].bytes;
    const struct ssd_pt *wr = worst_ssd(h->rd, h->n_ssd), *ww = worst_ssd(h->wr, h->n_ssd);
    char s_dram[2048], s_rd[2048], s_wr[2048], s_l2[1024], s_count[1024];
    text(s_dram, sizeof s_dram,
             "%s: memcpy of %zu KiB to %zu MiB from memory out of cache, %u threads at once; bytes moved, read plus "
             "written: a copy moves 3 per byte copied below glibc's non-temporal threshold (%zu MiB here; %s), 2 at "
             "or above it (calib/dram.h); fit t = lat + threads * size * moved / bw: lat %.3g us, worst residual "
             "%.1f%%; one thread: %.3g GB/s moved (lat %.3g us, worst residual %.1f%%)",
             where, lo / KIB, hi / MIB, h->threads, h->nt / MIB,
             h->nt ? "glibc.cpu.x86_non_temporal_threshold" : "unknown: every copy counted as 2",
             1e6 * h->fitn.lat, 100 * h->fitn.worst, h->fit1.bw / 1e9, 1e6 * h->fit1.lat, 100 * h->fit1.worst);
    const char *ssd_what = "O_DIRECT random %s through io_uring, %zu KiB to %zu MiB at queue depths %u to %u, on a %"
                           PRIu64 " MiB file in %s (%s); fit t = lat + qd * op + qd * size / bw (calib/fit.h)";
    char sw[1024];
    size_t slo = h->rd[0].bytes, shi = h->rd[h->n_ssd - 1].bytes;
    unsigned qlo = h->rd[0].qd, qhi = h->rd[h->n_ssd - 1].qd;
    text(sw, sizeof sw, ssd_what, "reads", slo / KIB, shi / MIB, qlo, qhi, h->file_bytes / MIB, o->dir, h->fsdesc);
    text(s_rd, sizeof s_rd, "%s: %s: lat %.3g us, op %.3g us, bw %.4g MB/s; worst residual %.1f%% (%zu KiB, qd %u)",
             where, sw, 1e6 * h->fit_rd.lat, 1e6 * h->fit_rd.op, h->fit_rd.bw / 1e6, 100 * h->fit_rd.worst,
             wr->bytes / KIB, wr->qd);
    text(sw, sizeof sw, ssd_what, "writes", slo / KIB, shi / MIB, qlo, qhi, h->file_bytes / MIB, o->dir, h->fsdesc);
    text(s_wr, sizeof s_wr,
             "%s: %s: lat %.3g us (the profile has one ssd.lat, the reads'), op %.3g us, bw %.4g MB/s; worst residual "
             "%.1f%% (%zu KiB, qd %u)",
             where, sw, 1e6 * h->fit_wr.lat, 1e6 * h->fit_wr.op, h->fit_wr.bw / 1e6, 100 * h->fit_wr.worst,
             ww->bytes / KIB, ww->qd);
    text(s_l2, sizeof s_l2, "MemTotal of /proc/meminfo on %s, %s (all of it; the runtime gets less)", m->host,
             m->date);
    text(s_count, sizeof s_count, "the one device that holds %s (%s) on %s, %s", o->dir, h->fsdesc, m->host,
             m->date);
    const struct ks_calib_figure figs[] = {
        {"l2", v_l2, s_l2, "measured"},
        {"dram_bw", v_dram, s_dram, "measured"},
        {"ssd.count", "1", s_count, "measured"},
        {"ssd.read_bw", v_rbw, s_rd, "measured"},
        {"ssd.write_bw", v_wbw, s_wr, "measured"},
        {"ssd.lat", v_lat, s_rd, "measured"},
        {"ssd.read_op_time", v_rop, s_rd, "measured"},
        {"ssd.write_op_time", v_wop, s_wr, "measured"},
    };
    // host_wake: the median wake-up at each idle time, every point's samples and spread in the source
    double w_idle[MAX_WAKE], w_sec[MAX_WAKE];
    char s_wake[4096];
    size_t wu = (size_t)snprintf(s_wake, sizeof s_wake,
                                 "%s: a thread waiting in pthread_cond_wait for the idle time, then signalled "
                                 "(pthread_cond_broadcast under the mutex, right after storing the time) by a thread "
                                 "that spins meanwhile; seconds from the signal to the waiter's first clock read after "
                                 "the wait returns (CLOCK_MONOTONIC), median per idle time (calib/wake.h); per point, "
                                 "idle: samples, P10-P90:",
                                 where);
    for (size_t i = 0; i < h->n_wake; i++) {
        w_idle[i] = h->wake[i].idle;
        w_sec[i] = sig4(h->wake[i].r.median);
        if (wu < sizeof s_wake)
            wu += (size_t)snprintf(s_wake + wu, sizeof s_wake - wu, "%s %g s: %u, %.1f-%.1f us", i ? ";" : "",
                                   h->wake[i].idle, h->wake[i].r.samples, 1e6 * h->wake[i].r.p10,
                                   1e6 * h->wake[i].r.p90);
    }
    const struct ks_calib_list w_lists[] = {{"idle", w_idle}, {"seconds", w_sec}};
    const struct ks_calib_table tables[] = {
        {.key = "host_wake", .lists = w_lists, .n_lists = N_OF(w_lists), .n = h->n_wake, .source = s_wake,
         .kind = "measured"},
    };
    char wake_line[1024] = "";
    for (size_t i = 0, u = 0; i < h->n_wake && u < sizeof wake_line; i++)
        u += (size_t)snprintf(wake_line + u, sizeof wake_line - u, "%s %g: %.1f, %.1f-%.1f, %u", i ? ";" : "",
                              h->wake[i].idle, 1e6 * h->wake[i].r.median, 1e6 * h->wake[i].r.p10,
                              1e6 * h->wake[i].r.p90, h->wake[i].r.samples);
    char name[256], part[512], notes[1024], comment[8192];
    profile_name(o->out, name, sizeof name);
    text(part, sizeof part, "host %s (%s, %u cores, %.0f GiB), drive %s; GPU figures from %s", m->host, m->cpu,
             m->cores, (double)m->mem / GIB, h->fsdesc, base_file);
    text(notes, sizeof notes,
             "host figures measured by kvstrata calib host (kind \"measured\"); every other figure is the base "
             "profile's, with its own source and kind");
    size_t used = (size_t)snprintf(comment, sizeof comment,
                                   "%s.lua - measured host profile, written by kvstrata calib host.\n"
                                   "Command: %s\nMachine: %s, %s, %u cores; --dir on %s; %s\n"
                                   "DRAM fit (all cores): lat %.3g us, bw %.4g GB/s moved (3 or 2 bytes per byte "
                                   "copied, calib/dram.h), worst residual %.1f%%\n"
                                   "SSD read fit: lat %.3g us, op %.3g us, bw %.4g MB/s, worst residual %.1f%%\n"
                                   "SSD write fit: lat %.3g us, op %.3g us, bw %.4g MB/s, worst residual %.1f%%\n"
                                   "Wake-ups (idle s: median us, P10-P90 us, samples):%s\n"
                                   "Measured SSD points (op bytes qd MB/s IOPS us/request; slowest-fastest window "
                                   "MB/s):",
                                   name, cmdline, m->host, m->cpu, m->cores, h->fsdesc, m->date, 1e6 * h->fitn.lat,
                                   h->fitn.bw / 1e9, 100 * h->fitn.worst, 1e6 * h->fit_rd.lat, 1e6 * h->fit_rd.op,
                                   h->fit_rd.bw / 1e6, 100 * h->fit_rd.worst, 1e6 * h->fit_wr.lat, 1e6 * h->fit_wr.op,
                                   h->fit_wr.bw / 1e6, 100 * h->fit_wr.worst, wake_line);
    for (int w = 0; w < 2; w++)
        for (size_t i = 0; i < h->n_ssd && used < sizeof comment; i++) {
            const struct ssd_pt *p = w ? &h->wr[i] : &h->rd[i];
            used += (size_t)snprintf(comment + used, sizeof comment - used,
                                     "\n  %s %7zu %2u %8.1f %8.0f %9.1f; %.1f-%.1f", w ? "write" : "read ", p->bytes,
                                     p->qd, p->r.bytes_per_s / 1e6, (double)p->r.requests / p->r.elapsed,
                                     1e6 * p->r.t, p->lo / 1e6, p->hi / 1e6);
        }
    struct ks_calib_profile prof = {.base_file = base_file, .name = name, .part = part, .notes = notes,
                                    .comment = comment, .figs = figs, .n_figs = N_OF(figs), .tables = tables,
                                    .n_tables = N_OF(tables)};
    char err[ERR_LEN];
    if (ks_calib_profile_write(&prof, o->out, err, sizeof err) != KS_OK)
        return ks_cli_fail(cmd, "-o %s: %s", o->out, err);
    return 0;
}

static int host_report(const struct host_opts *o, const struct host_run *h, const struct machine *m)
{
    if (!o->json) {
        printf("calib host: %s (%s, %u cores), %s\nprofile: %s\n\n", m->host, m->cpu, m->cores, m->date, o->out);
        printf("DRAM: median of %d windows of %.3g s per point, measured in rounds (each round one window of every "
               "size, one thread and all threads)\n", WINDOWS, h->dram_seconds);
        print_dram(stdout, "DRAM copies, one thread (bytes copied per second):", h->dram1, h->n_dram, 0);
        printf("  fit: lat %.3g us, bw %.4g GB/s moved (3 bytes per byte copied below %zu MiB, 2 above), worst "
               "residual %.1f%%\n",
               1e6 * h->fit1.lat, h->fit1.bw / 1e9, h->nt / MIB, 100 * h->fit1.worst);
        print_dram(stdout, "DRAM copies, all threads at once:", h->dramn, h->n_dram, 0);
        printf("  fit: lat %.3g us, bw %.4g GB/s moved (all threads: dram_bw), worst residual %.1f%%\n\n",
               1e6 * h->fitn.lat, h->fitn.bw / 1e9, 100 * h->fitn.worst);
        print_wake(stdout, "host wake-ups (host_wake: a thread idle in pthread_cond_wait, signalled by a spinning "
                   "thread; seconds from the signal to the waiter running):", h->wake, h->n_wake, 0);
        putchar('\n');
        printf("SSD: %s (%s), %" PRIu64 " MiB file, median of %d windows of %.3g s per point\n", o->dir, h->fsdesc,
               h->file_bytes / MIB, SSD_WINDOWS, h->seconds);
        print_ssd(stdout, "reads:", h->rd, h->n_ssd, 0);
        printf("  fit: lat %.3g us, op %.3g us, bw %.4g MB/s, worst residual %.1f%%\n", 1e6 * h->fit_rd.lat,
               1e6 * h->fit_rd.op, h->fit_rd.bw / 1e6, 100 * h->fit_rd.worst);
        print_ssd(stdout, "writes:", h->wr, h->n_ssd, 0);
        printf("  fit: lat %.3g us, op %.3g us, bw %.4g MB/s, worst residual %.1f%%\n", 1e6 * h->fit_wr.lat,
               1e6 * h->fit_wr.op, h->fit_wr.bw / 1e6, 100 * h->fit_wr.worst);
        return fflush(stdout) == 0 ? 0 : -1;
    }
    json_t *r = json_object();
    if (!r)
        return -1;
    int err = ks_json_set_str(r, "profile", o->out);
    err |= ks_json_set_str(r, "host", m->host);
    err |= ks_json_set_str(r, "cpu", m->cpu);
    err |= ks_json_set_int(r, "cores", m->cores);
    err |= ks_json_set_str(r, "date", m->date);
    err |= ks_json_set_str(r, "dir", o->dir);
    err |= ks_json_set_str(r, "filesystem", h->fsdesc);
    err |= ks_json_set_int(r, "file_bytes", (int64_t)h->file_bytes);
    err |= ks_json_set_int(r, "threads", h->threads);
    err |= json_object_set_new(r, "dram_one_thread", dram_json(h->dram1, h->n_dram, 0));
    err |= json_object_set_new(r, "dram_all_threads", dram_json(h->dramn, h->n_dram, 0));
    err |= ks_json_set_int(r, "dram_nt_threshold", (int64_t)h->nt);
    err |= set_copy_fit(r, "dram_fit_one_thread", &h->fit1);
    err |= set_copy_fit(r, "dram_fit_all_threads", &h->fitn);
    err |= json_object_set_new(r, "wake", wake_json(h->wake, h->n_wake, 0));
    err |= json_object_set_new(r, "ssd_read", ssd_json(h->rd, h->n_ssd, 0));
    err |= json_object_set_new(r, "ssd_write", ssd_json(h->wr, h->n_ssd, 0));
    err |= set_ssd_fit(r, "ssd_read_fit", &h->fit_rd);
    err |= set_ssd_fit(r, "ssd_write_fit", &h->fit_wr);
    int rc = err ? -1 : ks_json_print(stdout, r);
    json_decref(r);
    return rc;
}

static int run_host(const struct ks_cli_cmd *cmd, int argc, char **argv)
{
    struct host_opts o = {.base = DEFAULT_BASE};
    const struct ks_cli_opt opts[] = {
        {.name = "dir", .kind = KS_CLI_STRING, .out = &o.dir, .arg = "DIR",
         .help = "directory on the drive to measure (O_DIRECT; not tmpfs); required", .hide_default = 1},
        {.name = "out", .kind = KS_CLI_STRING, .out = &o.out, .arg = "FILE.lua", .short_name = 'o',
         .help = "the profile to write (calib/profiles/NAME.lua); required", .hide_default = 1},
        {.name = "base", .kind = KS_CLI_STRING, .out = &o.base, .arg = "PROFILE",
         .help = "profile whose other (GPU, network) figures are kept"},
        {.name = "quick", .kind = KS_CLI_FLAG, .out = &o.quick,
         .help = "few sizes, a 64 MiB file and short points: seconds, for tests"},
        {.name = "threads", .kind = KS_CLI_U32, .out = &o.threads, .arg = "N",
         .help = "threads of the all-core DRAM run (0: one per online CPU)", .max = 1024},
        {.name = "file-size", .kind = KS_CLI_U32, .out = &o.file_mib, .arg = "MIB",
         .help = "SSD benchmark file in MiB, a multiple of 4 (0: 1024, 64 with --quick)", .max = 1u << 20},
        {.name = "time", .kind = KS_CLI_REAL, .out = &o.seconds, .arg = "SECONDS",
         .help = "each timed window (3 per DRAM point, 5 per SSD point, median kept; 0: 0.15 s DRAM, 0.3 s SSD, "
                 "0.01 s with --quick)", .fmin = 0, .fmax = 60},
        {.name = "json", .kind = KS_CLI_FLAG, .out = &o.json, .help = "print one JSON object on stdout"},
    };
    int status;
    if (!ks_cli_parse(cmd, opts, N_OF(opts), argc, argv, &status))
        return status;
    if (!o.dir)
        return ks_cli_usage_error(cmd, "missing --dir DIR: the directory on the drive to measure");
    if (!o.out)
        return ks_cli_usage_error(cmd, "missing -o FILE.lua: the profile to write");
    if (o.file_mib % 4)
        return ks_cli_usage_error(cmd, "--file-size %" PRIu32 " is not a multiple of 4 MiB", o.file_mib);
    if (o.file_mib && o.file_mib < 8)
        return ks_cli_usage_error(cmd, "--file-size %" PRIu32 ": at least 8 MiB (two of the largest requests)",
                                  o.file_mib);
    if ((status = out_ok(cmd, o.out)) != 0)
        return status;
    if ((status = dir_ok(cmd, o.dir)) != 0)
        return status;
    char *base_file = find_base(cmd, o.base, &status);
    if (!base_file)
        return status;
    tty = isatty(STDERR_FILENO);
    struct machine m;
    machine_init(&m);
    struct host_run *h = calloc(1, sizeof *h);
    if (!h) {
        free(base_file);
        return ks_cli_fail(cmd, "out of memory");
    }
    h->threads = o.threads ? o.threads : m.cores;
    char cmdline[2048];
    ks_cmdline_format(cmdline, sizeof cmdline, argc, argv, "kvstrata %s", cmd->name);
    int rc = host_measure(cmd, &o, h);
    if (rc == 0)
        rc = host_write_profile(cmd, &o, h, &m, base_file, cmdline);
    if (rc == 0 && host_report(&o, h, &m) != 0)
        rc = ks_cli_fail(cmd, "cannot write the report");
    free(h);
    free(base_file);
    return rc;
}

const struct ks_cli_cmd ks_calib_host_cmd = {
    .name = "calib host",
    .summary = "Measure host DRAM, thread wake-ups and an SSD, fit the models, write a profile",
    .about =
        "Measures memcpy bandwidth by copy size (64 KiB to 1 GiB) on one thread and\n"
        "on all cores (data out of cache; bytes copied per second; median of 3\n"
        "rounds, each one window of every size and thread count, so that a drift\n"
        "of the machine reaches every point alike); the wake-up of a thread idle\n"
        "in pthread_cond_wait for 1e-4, 1e-3, 1e-2 and 1e-1 s (1e-4 and 1e-3 with\n"
        "--quick), signalled by a thread that spins meanwhile: seconds from the\n"
        "signal to the waiter running, median, P10 and P90 of 200, 200, 60 and 20\n"
        "wake-ups (about 3 s; calib/wake.h); and O_DIRECT random reads\n"
        "and writes through io_uring by request size (4 KiB to 4 MiB) and queue\n"
        "depth (1 to 64) on a file it creates in --dir (filled first, synced and\n"
        "removed at the end). Fits latency + size * moved / bandwidth\n"
        "to the copies (bandwidth in bytes the memory moves: a copy moves 3 bytes\n"
        "per byte below glibc's non-temporal threshold, 2 at or above it) and\n"
        "t = lat + qd * op + qd * size / bw to the SSD requests\n"
        "(calib/README.md), and writes -o: the --base profile's figures with\n"
        "their sources, and l2, dram_bw, ssd.count, ssd.read_bw, ssd.write_bw,\n"
        "ssd.lat, ssd.read_op_time and ssd.write_op_time measured here, each with\n"
        "the command, date, machine and the fit's worst residual, and host_wake =\n"
        "{idle = {...}, seconds = {...}} (the median wake-up at each idle time;\n"
        "its source gives every point's samples and P10-P90), replacing the\n"
        "base's. The file is written to a temporary name, checked as a profile,\n"
        "then renamed.\n"
        "\n"
        "--json prints one object: profile, host, cpu, cores, date, dir,\n"
        "filesystem, file_bytes, threads, dram_one_thread and dram_all_threads\n"
        "(arrays of {bytes, threads, seconds_per_copy, bytes_per_s (the median\n"
        "window), bytes_per_s_min, bytes_per_s_max, window_spread ((max - min) /\n"
        "median)}), dram_nt_threshold (bytes; 0: unknown), their fits dram_fit_*\n"
        "{lat_s, bw_bytes_per_s, worst_residual, rms_residual}, wake (array of\n"
        "{idle_s, samples, seconds (the median), p10_s, p90_s, min_s, max_s,\n"
        "spread ((p90 - p10) / median)}), ssd_read and\n"
        "ssd_write (arrays of {bytes, qd, requests, seconds_per_request,\n"
        "bytes_per_s (the median window), bytes_per_s_min, bytes_per_s_max,\n"
        "window_spread, iops, predicted_s, rel_error}) and their fits ssd_*_fit\n"
        "{lat_s, op_s, bw_bytes_per_s, worst_residual, rms_residual}.\n",
    .run = run_host,
};

// ---- calib check -----------------------------------------------------------

// A figure of a loaded profile tree, in base units; def when absent and def >= 0.
static int figure(const struct ks_luatab *t, const char *path, enum ks_unit unit, double def, double *out)
{
    const struct ks_luatab *n = ks_luatab_find(t, path);
    if (n && n->type == KS_LUATAB_TABLE)
        n = ks_luatab_get(n, "value");
    if (!n)
        return def >= 0 ? (*out = def, 0) : -1;
    if (n->type == KS_LUATAB_INT || n->type == KS_LUATAB_REAL) {
        *out = n->d;
        return 0;
    }
    char why[256];
    return n->type == KS_LUATAB_STRING ? ks_units_parse(n->s, unit, out, why, sizeof why) : -1;
}

// A list of numbers of a loaded profile table ({v1, v2, ...}): its length,
// or -1 when it is not one or holds more than cap.
static int number_list(const struct ks_luatab *t, double *out, int cap)
{
    if (!t || t->type != KS_LUATAB_TABLE)
        return -1;
    int n = 0;
    for (const struct ks_luatab *c = t->child; c; c = c->next, n++)
        if (n >= cap)
            return -1;
    for (int i = 0; i < n; i++) {
        char key[16];
        snprintf(key, sizeof key, "[%d]", i + 1);
        const struct ks_luatab *c = ks_luatab_get(t, key);
        if (!c || (c->type != KS_LUATAB_INT && c->type != KS_LUATAB_REAL) || !isfinite(c->d))
            return -1;
        out[i] = c->d;
    }
    return n;
}

// The profile's host_wake {idle = {...}, seconds = {...}, ...}, read from the
// raw table as the other figures are: its points (0: the profile has none),
// or -1 when it does not read (lists of one length >= 1, idle strictly
// increasing and > 0, seconds >= 0).
static int host_wake(const struct ks_luatab *t, double *idle, double *sec, int cap)
{
    const struct ks_luatab *w = ks_luatab_get(t, "host_wake");
    if (!w)
        return 0;
    int n = number_list(ks_luatab_get(w, "idle"), idle, cap);
    if (n < 1 || number_list(ks_luatab_get(w, "seconds"), sec, cap) != n)
        return -1;
    for (int i = 0; i < n; i++)
        if (!(idle[i] > 0) || idle[i] > KS_WAKE_MAX_IDLE || (i > 0 && !(idle[i] > idle[i - 1])) || !(sec[i] >= 0))
            return -1;
    return n;
}

struct goal {
    const char *name;
    double worst, goal; // largest |relative error| over the points above the size floor
    int met;
    int n;              // points that count
    // DRAM and SSD: the measurement's own noise over the points that count,
    // beside the goal (never part of `met`): the widest window spread of a
    // point and how many points' windows lie further apart than the goal
    int has_spread;
    double worst_spread;
    int noisy;
};

static json_t *goal_json(const struct goal *g)
{
    json_t *o = json_object();
    if (!o)
        return NULL;
    int err = ks_json_set_str(o, "model", g->name);
    err |= ks_json_set_int(o, "points", g->n);
    err |= ks_json_set_real(o, "worst_rel_error", g->worst);
    err |= ks_json_set_real(o, "goal", g->goal);
    err |= ks_json_set_bool(o, "met", g->met);
    if (g->has_spread) {
        err |= ks_json_set_real(o, "worst_window_spread", g->worst_spread);
        err |= ks_json_set_int(o, "points_spread_beyond_goal", g->noisy);
    }
    if (err) {
        json_decref(o);
        return NULL;
    }
    return o;
}

// The line beside a goal that says how noisy its measurement was.
static void print_noise(const struct goal *g, int windows)
{
    printf("  measurement noise: %d of %d points' %d windows differ by more than %.0f%% (worst %.1f%%); there a "
           "%.0f%% agreement is luck either way\n\n", g->noisy, g->n, windows, 100 * g->goal, 100 * g->worst_spread,
           100 * g->goal);
}

struct gpu_check {
    int have;
    double pcie_bw, pcie_lat, overhead;
    size_t n;
    size_t bytes[N_OF(gpu_sizes)];
    double h2d[N_OF(gpu_sizes)], d2h[N_OF(gpu_sizes)], model[N_OF(gpu_sizes)];
};

static int run_check(const struct ks_cli_cmd *cmd, int argc, char **argv)
{
    const char *spec = NULL, *dir = NULL;
    int quick = 0, json = 0;
    uint32_t threads = 0;
    double seconds = 0;
    const struct ks_cli_opt opts[] = {
        {.name = "profile", .kind = KS_CLI_ARG, .out = &spec, .arg = "PROFILE",
         .help = "profile name (calib/profiles) or file"},
        {.name = "dir", .kind = KS_CLI_STRING, .out = &dir, .arg = "DIR",
         .help = "directory on the drive to check (the SSD checks run only with it)", .hide_default = 1},
        {.name = "quick", .kind = KS_CLI_FLAG, .out = &quick, .help = "few points, short: seconds, for tests"},
        {.name = "threads", .kind = KS_CLI_U32, .out = &threads, .arg = "N",
         .help = "threads of the DRAM check (0: one per online CPU)", .max = 1024},
        {.name = "time", .kind = KS_CLI_REAL, .out = &seconds, .arg = "SECONDS",
         .help = "each timed window (3 per DRAM point, 5 per SSD point, median kept; 0: 0.15 s DRAM, 0.3 s SSD, "
                 "0.01 s with --quick)", .fmin = 0, .fmax = 60},
        {.name = "json", .kind = KS_CLI_FLAG, .out = &json, .help = "print one JSON object on stdout"},
    };
    int status;
    if (!ks_cli_parse(cmd, opts, N_OF(opts), argc, argv, &status))
        return status;
    char *file = ks_calib_profile_find(spec);
    if (!file)
        return ks_cli_usage_error(cmd, "%s: no such profile (a name under calib/profiles or a file)", spec);
    if (dir && (status = dir_ok(cmd, dir)) != 0) {
        free(file);
        return status;
    }
    char err[ERR_LEN];
    struct ks_luatab *t = NULL;
    if (ks_scenario_check_profile(file, NULL, err, sizeof err) != KS_OK ||
        ks_luatab_load(file, NULL, &t, err, sizeof err) != KS_OK) {
        fprintf(stderr, "%s\n", err);
        free(file);
        return ks_cli_fail(cmd, "%s is not a valid profile", spec);
    }
    double dram_bw = 0, lat = 0, rbw = 0, rop = 0, wbw = 0, wop = 0;
    struct gpu_check g = {0};
    int bad = figure(t, "dram_bw", KS_UNIT_BANDWIDTH, -1, &dram_bw) | figure(t, "ssd.lat", KS_UNIT_TIME, -1, &lat) |
              figure(t, "ssd.read_bw", KS_UNIT_BANDWIDTH, -1, &rbw) |
              figure(t, "ssd.read_op_time", KS_UNIT_TIME, 0, &rop) |
              figure(t, "ssd.write_bw", KS_UNIT_BANDWIDTH, -1, &wbw) |
              figure(t, "ssd.write_op_time", KS_UNIT_TIME, 0, &wop) |
              figure(t, "pcie_bw", KS_UNIT_BANDWIDTH, -1, &g.pcie_bw) |
              figure(t, "pcie_lat", KS_UNIT_TIME, -1, &g.pcie_lat) |
              figure(t, "copy_overhead", KS_UNIT_TIME, -1, &g.overhead);
    double w_idle[MAX_WAKE], w_sec[MAX_WAKE];
    int n_wake = host_wake(t, w_idle, w_sec, MAX_WAKE);
    ks_luatab_free(t);
    if (bad) {
        free(file);
        return ks_cli_fail(cmd, "%s: a figure the check needs does not read", spec);
    }
    if (n_wake < 0) {
        free(file);
        return ks_cli_fail(cmd, "%s: host_wake does not read (idle and seconds: lists of numbers of one length, at "
                           "most %d, idle strictly increasing, > 0 and <= %g s, seconds >= 0)", spec, MAX_WAKE,
                           KS_WAKE_MAX_IDLE);
    }
    tty = isatty(STDERR_FILENO);
    struct machine m;
    machine_init(&m);
    unsigned nthr = threads ? threads : m.cores;
    double sec = seconds > 0 ? seconds : quick ? QUICK_SECONDS : DRAM_SECONDS;
    double ssd_sec = seconds > 0 ? seconds : quick ? QUICK_SECONDS : SSD_SECONDS;

    // DRAM: dram_bw counts bytes moved, so the profile predicts a copy at
    // threads * size * moved(size) / dram_bw for the node (no latency term)
    size_t nt = ks_dram_nt_threshold();
    const size_t *ds = quick ? check_dram_quick : check_dram_full;
    size_t n_dram = quick ? N_OF(check_dram_quick) : N_OF(check_dram_full);
    struct dram_pt dram[MAX_SIZES];
    const struct dram_series series = {nthr, dram};
    int rc = measure_dram(cmd, ds, n_dram, &series, 1, quick ? 64 * MIB : 256 * MIB, sec);
    struct goal gd = {.name = "dram copies above 64 KiB, all threads: t = threads * size * moved / dram_bw",
                      .goal = COPY_GOAL, .has_spread = 1};
    for (size_t i = 0; rc == 0 && i < n_dram; i++) {
        dram[i].model = (double)nthr * ks_dram_moved_per_copied(dram[i].bytes, nt) * (double)dram[i].bytes / dram_bw;
        dram[i].err = (dram[i].model - dram[i].r.t) / dram[i].r.t;
        if (dram[i].bytes > GOAL_MIN_BYTES) {
            gd.worst = fmax(gd.worst, fabs(dram[i].err));
            gd.worst_spread = fmax(gd.worst_spread, dram_spread(&dram[i]));
            gd.noisy += dram_spread(&dram[i]) > gd.goal;
            gd.n++;
        }
    }
    gd.met = gd.worst <= gd.goal;

    // wake-ups at the profile's idle times: the profile's seconds there
    struct wake_pt wake[MAX_WAKE];
    struct goal gw = {.name = "host wake-up: the profile's host_wake seconds at each of its idle times",
                      .goal = WAKE_GOAL};
    if (rc == 0 && n_wake > 0)
        rc = measure_wake(cmd, w_idle, (size_t)n_wake, quick, wake);
    for (int i = 0; rc == 0 && i < n_wake; i++) {
        wake[i].model = w_sec[i];
        wake[i].err = (wake[i].model - wake[i].r.median) / wake[i].r.median;
        gw.worst = fmax(gw.worst, fabs(wake[i].err));
        gw.worst_spread = fmax(gw.worst_spread, wake_spread(&wake[i]));
        gw.noisy += wake_spread(&wake[i]) > gw.goal;
        gw.n++;
    }
    gw.met = gw.worst <= gw.goal;

    // SSD reads, by the profile's model and replayed in SimGrid; SSD writes,
    // by the profile's model
    struct ssd_pt *rd = calloc(2 * MAX_SSD, sizeof *rd), *wr = rd ? rd + MAX_SSD : NULL;
    size_t n_ssd = 0;
    struct goal gs = {.name = "ssd reads: t = lat + qd * op + qd * size / bw", .goal = SSD_GOAL};
    struct goal gsim = {.name = "ssd reads simulated (SimGrid, sim/engine/platform.c)", .goal = SSD_GOAL};
    struct goal gwr = {.name = "ssd writes: t = lat + qd * write_op + qd * size / write_bw", .goal = SSD_GOAL};
    char fsdesc[320] = "";
    if (!rd && rc == 0)
        rc = ks_cli_fail(cmd, "out of memory");
    if (rc == 0 && dir) {
        const size_t *sizes = quick ? ssd_sizes_quick : ssd_sizes_full;
        size_t n_sizes = quick ? N_OF(ssd_sizes_quick) : N_OF(ssd_sizes_full);
        const unsigned *qds = quick ? qds_quick : qds_full;
        size_t n_qds = quick ? N_OF(qds_quick) : N_OF(qds_full);
        n_ssd = n_sizes * n_qds;
        ks_ssd_describe_dir(dir, fsdesc, sizeof fsdesc);
        struct ks_ssd *s = ks_ssd_open(dir, (uint64_t)(quick ? 64 : 1024) * MIB, 2, err, sizeof err);
        if (!s)
            rc = ks_cli_fail(cmd, "--dir %s", err);
        if (rc == 0)
            rc = measure_ssd(cmd, s, KS_SSD_READ, sizes, n_sizes, qds, n_qds, ssd_sec, rd);
        if (rc == 0)
            rc = measure_ssd(cmd, s, KS_SSD_WRITE, sizes, n_sizes, qds, n_qds, ssd_sec, wr);
        if (s && ks_ssd_close(s, err, sizeof err) != KS_OK && rc == 0)
            rc = ks_cli_fail(cmd, "%s", err);
        struct ks_simssd_point sp[MAX_SSD];
        for (size_t i = 0; rc == 0 && i < n_ssd; i++) {
            rd[i].model = lat + rd[i].qd * rop + rd[i].qd * (double)rd[i].bytes / rbw;
            rd[i].err = (rd[i].model - rd[i].r.t) / rd[i].r.t;
            gs.worst = fmax(gs.worst, fabs(rd[i].err));
            gs.worst_spread = fmax(gs.worst_spread, ssd_spread(&rd[i]));
            gs.noisy += ssd_spread(&rd[i]) > gs.goal;
            sp[i] = (struct ks_simssd_point){.qd = rd[i].qd, .bytes = (double)rd[i].bytes, .rounds = SIM_ROUNDS};
        }
        if (rc == 0 && ks_simssd_run(lat, rbw, rop, dram_bw, sp, n_ssd, err, sizeof err) != KS_OK)
            rc = ks_cli_fail(cmd, "the simulated experiment: %s", err);
        for (size_t i = 0; rc == 0 && i < n_ssd; i++) {
            rd[i].sim = sp[i].t;
            rd[i].sim_err = (sp[i].t - rd[i].r.t) / rd[i].r.t;
            gsim.worst = fmax(gsim.worst, fabs(rd[i].sim_err));
        }
        gs.n = gsim.n = (int)n_ssd;
        gs.has_spread = gsim.has_spread = 1;
        gsim.worst_spread = gs.worst_spread;
        gsim.noisy = gs.noisy;
        gs.met = gs.worst <= gs.goal;
        gsim.met = gsim.worst <= gsim.goal;
        // NOTE: a write has the reads' latency: the engine sends it over the
        // SSD's write link, which sim/engine/platform.c gives ssd.lat (a profile has
        // one), at write_bw, with write_op_time * write_bw bytes more per
        // block (sim/engine/engine.c); qd writes in flight share that link
        for (size_t i = 0; rc == 0 && i < n_ssd; i++) {
            wr[i].model = lat + wr[i].qd * wop + wr[i].qd * (double)wr[i].bytes / wbw;
            wr[i].err = (wr[i].model - wr[i].r.t) / wr[i].r.t;
            gwr.worst = fmax(gwr.worst, fabs(wr[i].err));
            gwr.worst_spread = fmax(gwr.worst_spread, ssd_spread(&wr[i]));
            gwr.noisy += ssd_spread(&wr[i]) > gwr.goal;
        }
        gwr.n = (int)n_ssd;
        gwr.has_spread = 1;
        gwr.met = gwr.worst <= gwr.goal;
    }

    // PCIe, with a GPU: copy_overhead + pcie_lat + size / pcie_bw, pinned
    struct goal gp = {.name = "pcie pinned copies above 64 KiB: t = copy_overhead + pcie_lat + size / pcie_bw",
                      .goal = COPY_GOAL};
    g.have = rc == 0 && ks_device_count() > 0;
    for (size_t i = 0; g.have && rc == 0 && i < N_OF(gpu_sizes); i++) {
        progress("calib: PCIe copies of %zu KiB", gpu_sizes[i] / KIB);
        g.bytes[i] = gpu_sizes[i];
        int st = ks_gpu_bench_copy(KS_GPU_H2D, 1, gpu_sizes[i], quick ? 5 : 21, &g.h2d[i]);
        if (st == KS_KERNEL_OK)
            st = ks_gpu_bench_copy(KS_GPU_D2H, 1, gpu_sizes[i], quick ? 5 : 21, &g.d2h[i]);
        if (st != KS_KERNEL_OK)
            rc = ks_cli_fail(cmd, "PCIe copies: %s %s", ks_kernel_status_str(st), ks_kernel_error());
        g.model[i] = g.overhead + g.pcie_lat + (double)gpu_sizes[i] / g.pcie_bw;
        if (gpu_sizes[i] > GOAL_MIN_BYTES) {
            gp.worst = fmax(gp.worst, fmax(fabs(g.model[i] - g.h2d[i]) / g.h2d[i], fabs(g.model[i] - g.d2h[i]) / g.d2h[i]));
            gp.n += 2;
        }
        g.n = i + 1;
    }
    progress_done();
    gp.met = gp.worst <= gp.goal;

    if (rc == 0 && !json) {
        printf("calib check: %s on %s (%s, %u cores), %s\n\n", file, m.host, m.cpu, m.cores, m.date);
        char v[32];
        fmt(dram_bw, KS_UNIT_BANDWIDTH, v, sizeof v);
        printf("dram_bw %s (bytes moved), %u threads; a copy moves 3 bytes per byte below %zu MiB (glibc's "
               "non-temporal threshold%s), 2 at or above:\n",
               v, nthr, nt / MIB, nt ? "" : " unknown here: 2 everywhere");
        print_dram(stdout, "", dram, n_dram, 1);
        printf("  %s: worst %.1f%% over %d points, goal %.0f%%: %s\n", gd.name, 100 * gd.worst, gd.n,
               100 * gd.goal, gd.met ? "met" : "NOT met");
        print_noise(&gd, WINDOWS);
        if (n_wake > 0) {
            print_wake(stdout, "host_wake (seconds from a signal to the thread running, by how long it was idle):",
                       wake, (size_t)n_wake, 1);
            printf("  %s: worst %.1f%% over %d points, goal %.0f%% (informative): %s\n", gw.name, 100 * gw.worst,
                   gw.n, 100 * gw.goal, gw.met ? "met" : "NOT met");
            printf("  measurement noise: %d of %d points' P10-P90 spread exceeds %.0f%% (worst %.1f%%)\n\n",
                   gw.noisy, gw.n, 100 * gw.goal, 100 * gw.worst_spread);
        } else
            printf("host_wake: none in the profile, not checked\n\n");
        if (dir) {
            printf("ssd.lat %.3g us, ssd.read_op_time %.3g us, ssd.read_bw %.4g MB/s; %s (%s)\n", 1e6 * lat, 1e6 * rop,
                   rbw / 1e6, dir, fsdesc);
            print_ssd(stdout, "reads:", rd, n_ssd, 1);
            printf("  %s: worst %.1f%% over %d points, goal %.0f%%: %s\n", gs.name, 100 * gs.worst, gs.n,
                   100 * gs.goal, gs.met ? "met" : "NOT met");
            printf("  %s: worst %.1f%% over %d points, goal %.0f%%: %s\n", gsim.name, 100 * gsim.worst, gsim.n,
                   100 * gsim.goal, gsim.met ? "met" : "NOT met");
            print_noise(&gs, SSD_WINDOWS);
            printf("ssd.lat %.3g us (the write link's too), ssd.write_op_time %.3g us, ssd.write_bw %.4g MB/s\n",
                   1e6 * lat, 1e6 * wop, wbw / 1e6);
            print_ssd(stdout, "writes:", wr, n_ssd, 0);
            printf("  %s: worst %.1f%% over %d points, goal %.0f%%: %s\n", gwr.name, 100 * gwr.worst, gwr.n,
                   100 * gwr.goal, gwr.met ? "met" : "NOT met");
            print_noise(&gwr, SSD_WINDOWS);
        } else
            printf("ssd: not checked (no --dir)\n\n");
        if (g.have) {
            printf("PCIe pinned copies (H2D, D2H), model copy_overhead + pcie_lat + size / pcie_bw:\n");
            for (size_t i = 0; i < g.n; i++)
                printf("  %10zu  %12.4e %12.4e  model %12.4e\n", g.bytes[i], g.h2d[i], g.d2h[i], g.model[i]);
            printf("  %s: worst %.1f%% over %d points, goal %.0f%%: %s\n", gp.name, 100 * gp.worst, gp.n,
                   100 * gp.goal, gp.met ? "met" : "NOT met");
        } else
            printf("pcie: not checked (no GPU: %s)\n", ks_device_error());
        if (fflush(stdout) != 0)
            rc = ks_cli_fail(cmd, "cannot write the report");
    } else if (rc == 0) {
        json_t *r = json_object(), *goals = json_array();
        int e = !r || !goals;
        e |= ks_json_set_str(r, "profile", file);
        e |= ks_json_set_str(r, "host", m.host);
        e |= ks_json_set_str(r, "cpu", m.cpu);
        e |= ks_json_set_str(r, "date", m.date);
        e |= ks_json_set_int(r, "threads", nthr);
        e |= ks_json_set_real(r, "dram_bw", dram_bw);
        e |= ks_json_set_int(r, "dram_nt_threshold", (int64_t)nt);
        e |= json_object_set_new(r, "dram", dram_json(dram, n_dram, 1));
        e |= json_array_append_new(goals, goal_json(&gd));
        e |= ks_json_set_bool(r, "host_wake", n_wake > 0);
        if (n_wake > 0) {
            e |= json_object_set_new(r, "wake", wake_json(wake, (size_t)n_wake, 1));
            e |= json_array_append_new(goals, goal_json(&gw));
        }
        if (dir) {
            e |= ks_json_set_str(r, "dir", dir);
            e |= ks_json_set_str(r, "filesystem", fsdesc);
            e |= json_object_set_new(r, "ssd_read", ssd_json(rd, n_ssd, 1));
            e |= json_array_append_new(goals, goal_json(&gs));
            e |= json_array_append_new(goals, goal_json(&gsim));
            e |= json_object_set_new(r, "ssd_write", ssd_json(wr, n_ssd, 0));
            e |= json_array_append_new(goals, goal_json(&gwr));
        }
        if (g.have)
            e |= json_array_append_new(goals, goal_json(&gp));
        e |= ks_json_set_bool(r, "gpu", g.have);
        int all = gd.met && (n_wake == 0 || gw.met) && (!dir || (gs.met && gsim.met && gwr.met)) &&
                  (!g.have || gp.met);
        e |= ks_json_set_bool(r, "all_goals_met", all);
        e |= json_object_set_new(r, "goals", goals);
        goals = NULL;
        if (e || ks_json_print(stdout, r) != 0)
            rc = ks_cli_fail(cmd, "cannot write the report");
        json_decref(r);
        json_decref(goals);
    }
    free(rd);
    free(file);
    return rc;
}

const struct ks_cli_cmd ks_calib_check_cmd = {
    .name = "calib check",
    .summary = "Measure again and compare with a profile's predictions",
    .about =
        "Reads the profile's figures and, for each model, measures again and\n"
        "prints predicted against measured seconds and the relative error\n"
        "(predicted - measured) / measured:\n"
        "  DRAM copies (all threads): threads * size * moved / dram_bw (dram_bw\n"
        "    counts bytes read plus bytes written; moved = 3 bytes per byte copied\n"
        "    below glibc's non-temporal threshold, 2 at or above it);\n"
        "  when the profile has host_wake, the wake-up of a thread idle in\n"
        "    pthread_cond_wait at each of its idle times (calib/wake.h; median of\n"
        "    20 to 200 wake-ups, 3 to 40 with --quick): the profile's seconds\n"
        "    there against the measured median (without host_wake: skipped);\n"
        "  with --dir, O_DIRECT random reads by size and queue depth:\n"
        "    ssd.lat + qd * ssd.read_op_time + qd * size / ssd.read_bw, and the\n"
        "    same reads replayed in SimGrid on the platform sim/engine/platform.c makes;\n"
        "    then writes at the same points: ssd.lat + qd * ssd.write_op_time +\n"
        "    qd * size / ssd.write_bw (the simulator's write link has ssd.lat);\n"
        "  with a GPU, pinned H2D and D2H copies:\n"
        "    copy_overhead + pcie_lat + size / pcie_bw.\n"
        "Goals: copies above 64 KiB within 5%, SSD reads (model and simulated)\n"
        "and SSD writes (model) within 10% at every size and queue depth (issue\n"
        "5); host wake-ups within\n"
        "25%, an informative goal: on a shared VM the median wake-up moves by up\n"
        "to 2x between runs, and its P10-P90 spread is mostly wider than the goal\n"
        "(the report says how wide; calib/README.md). Each goal is\n"
        "reported met or not (on the median windows); the exit status is 0\n"
        "either way. The DRAM sizes are measured in rounds (each round one\n"
        "window of every size; the median of 3 rounds), so that a drift of the\n"
        "machine reaches every size alike; each DRAM and SSD point also gives\n"
        "its slowest and fastest window.\n"
        "\n"
        "--json prints one object: profile, host, cpu, date, threads, dram_bw,\n"
        "dram_nt_threshold (bytes; 0: unknown), dram (array of {bytes, threads,\n"
        "seconds_per_copy, bytes_per_s (the median window), bytes_per_s_min,\n"
        "bytes_per_s_max, window_spread ((max - min) / median), predicted_s,\n"
        "rel_error}), host_wake (bool: the profile has it), wake (with host_wake:\n"
        "{idle_s, samples, seconds (the measured median), p10_s, p90_s, min_s,\n"
        "max_s, spread ((p90 - p10) / median), predicted_s, rel_error}), dir,\n"
        "filesystem and ssd_read (with --dir: {bytes, qd,\n"
        "requests, seconds_per_request, bytes_per_s, bytes_per_s_min,\n"
        "bytes_per_s_max, window_spread, iops, predicted_s, rel_error, simulated_s,\n"
        "sim_rel_error}), ssd_write (with --dir: the same, without simulated_s and\n"
        "sim_rel_error), gpu (bool), goals (array of {model, points,\n"
        "worst_rel_error, goal, met}, the DRAM and SSD goals also\n"
        "worst_window_spread and points_spread_beyond_goal: how far the windows of\n"
        "one point lie apart, which `met` ignores) and all_goals_met.\n",
    .run = run_check,
};

// ---- calib gpu -------------------------------------------------------------

enum { GPU_BLOCKS = 32 };
#define GPU_BLOCK (128 * KIB)
// blocks per batched call, fitted for the call's fixed cost; the last is GPU_BLOCKS
static const int gpu_batch_blocks[] = {1, 2, 4, 8, 16, GPU_BLOCKS};

struct gpu_run {
    double d2d_bw; // bytes read + written per second
    double t[4][N_OF(gpu_sizes)]; // [h2d pinned, d2h pinned, h2d pageable, d2h pageable][size]
    struct ks_fit_copy fit[4];
    double single_s, gather_s, bidir_s, one_dir_s;
    // one ks_copy_batch_async call of gpu_batch_blocks[i] blocks: [h2d, d2h][i],
    // fitted over bytes; link_worst: the fit's intercept with pcie_bw (fit[0].bw)
    double batch_t[2][N_OF(gpu_batch_blocks)];
    struct ks_fit_copy batch_fit[2];
    double batch_link_worst[2];
    // the sparse decode kernel: `bench kernels`' default shape and block counts
    struct ks_bench_shape kshape;
    size_t n_kernel;
    double kblocks[KS_BENCH_MAX_BLOCKS], kseconds[KS_BENCH_MAX_BLOCKS];
};

static const char *const gpu_series[4] = {"h2d_pinned", "d2h_pinned", "h2d_pageable", "d2h_pageable"};

static int gpu_measure(const struct ks_cli_cmd *cmd, int repeat, struct gpu_run *r)
{
    int st = ks_copy_bench_d2d(256 * MIB, repeat, &r->d2d_bw);
    for (int s = 0; s < 4 && st == KS_KERNEL_OK; s++) {
        double x[N_OF(gpu_sizes)];
        for (size_t i = 0; i < N_OF(gpu_sizes) && st == KS_KERNEL_OK; i++) {
            progress("calib: %s copies of %zu KiB", gpu_series[s], gpu_sizes[i] / KIB);
            x[i] = (double)gpu_sizes[i];
            st = ks_gpu_bench_copy(s % 2 ? KS_GPU_D2H : KS_GPU_H2D, s < 2, gpu_sizes[i], repeat, &r->t[s][i]);
        }
        if (st == KS_KERNEL_OK && ks_fit_copy(x, r->t[s], N_OF(gpu_sizes), &r->fit[s]) != KS_OK) {
            progress_done();
            return ks_cli_fail(cmd, "%s copy times do not fit latency + size / bandwidth", gpu_series[s]);
        }
    }
    progress_done();
    if (st == KS_KERNEL_OK)
        st = ks_gpu_bench_blocks(GPU_BLOCK, GPU_BLOCKS, repeat, &r->single_s, &r->gather_s);
    for (int d = 0; d < 2 && st == KS_KERNEL_OK; d++) {
        double x[N_OF(gpu_batch_blocks)];
        for (size_t i = 0; i < N_OF(gpu_batch_blocks) && st == KS_KERNEL_OK; i++) {
            progress("calib: %s batched copies of %d x 128 KiB", d ? "d2h" : "h2d", gpu_batch_blocks[i]);
            x[i] = gpu_batch_blocks[i];
            st = ks_gpu_bench_batch(d ? KS_GPU_D2H : KS_GPU_H2D, GPU_BLOCK, gpu_batch_blocks[i], repeat,
                                    &r->batch_t[d][i]);
        }
        if (st == KS_KERNEL_OK && ks_fit_batch(x, r->batch_t[d], N_OF(gpu_batch_blocks), (double)GPU_BLOCK,
                                               r->fit[0].bw, &r->batch_fit[d], &r->batch_link_worst[d]) != KS_OK) {
            progress_done();
            return ks_cli_fail(cmd, "%s batched copy times do not fit overhead + bytes / bandwidth",
                               d ? "d2h" : "h2d");
        }
    }
    progress_done();
    if (st == KS_KERNEL_OK)
        st = ks_gpu_bench_bidir(64 * MIB, repeat, &r->bidir_s);
    if (st == KS_KERNEL_OK)
        st = ks_gpu_bench_copy(KS_GPU_H2D, 1, 64 * MIB, repeat, &r->one_dir_s);
    if (st != KS_KERNEL_OK)
        return ks_cli_fail(cmd, "GPU benchmark: %s %s", ks_kernel_status_str(st), ks_kernel_error());
    // the kernel table `bench kernels --backend cuda --profile` writes with
    // its defaults, timed by the same code
    uint32_t blocks[KS_BENCH_MAX_BLOCKS];
    char err[ERR_LEN];
    ks_bench_kernel_defaults(&r->kshape, blocks, &r->n_kernel);
    r->kshape.cuda = 1;
    progress("calib: sparse decode kernel, batch %u, %zu block counts", r->kshape.batch, r->n_kernel);
    st = ks_bench_kernel_table(&r->kshape, blocks, r->n_kernel, r->kseconds, err, sizeof err);
    progress_done();
    if (st != KS_KERNEL_OK)
        return ks_cli_fail(cmd, "kernel benchmark: %s", err);
    for (size_t i = 0; i < r->n_kernel; i++)
        r->kblocks[i] = blocks[i];
    return 0;
}

static int run_gpu(const struct ks_cli_cmd *cmd, int argc, char **argv)
{
    const char *out = NULL, *base = DEFAULT_BASE;
    int quick = 0, json = 0;
    const struct ks_cli_opt opts[] = {
        {.name = "out", .kind = KS_CLI_STRING, .out = &out, .arg = "FILE.lua", .short_name = 'o',
         .help = "the profile to write; required", .hide_default = 1},
        {.name = "base", .kind = KS_CLI_STRING, .out = &base, .arg = "PROFILE",
         .help = "profile whose other (host, network) figures are kept"},
        {.name = "quick", .kind = KS_CLI_FLAG, .out = &quick, .help = "5 timed copies per point instead of 21"},
        {.name = "json", .kind = KS_CLI_FLAG, .out = &json, .help = "print one JSON object on stdout"},
    };
    int status;
    if (!ks_cli_parse(cmd, opts, N_OF(opts), argc, argv, &status))
        return status;
    if (!out)
        return ks_cli_usage_error(cmd, "missing -o FILE.lua: the profile to write");
    if ((status = out_ok(cmd, out)) != 0)
        return status;
    char *base_file = find_base(cmd, base, &status);
    if (!base_file)
        return status;
    if (ks_device_count() <= 0) {
        free(base_file);
        return ks_cli_fail(cmd, "no GPU: %s", ks_device_error()[0] ? ks_device_error() : "CUDA not built in");
    }
    tty = isatty(STDERR_FILENO);
    struct machine m;
    machine_init(&m);
    char dev[256] = "GPU", cmdline[2048];
    (void)ks_copy_bench_device_name(dev, sizeof dev);
    ks_cmdline_format(cmdline, sizeof cmdline, argc, argv, "kvstrata %s", cmd->name);
    struct gpu_run r;
    memset(&r, 0, sizeof r);
    int rc = gpu_measure(cmd, quick ? 5 : 21, &r);
    if (rc == 0) {
        char where[1024], v_hbm[32], v_bw[32], v_ov[32], s_hbm[2048], s_bw[2048], s_ov[2048], s_lat[1024];
        text(where, sizeof where, "`%s` on %s (%s, host %s), %s", cmdline, m.host, dev, m.cpu, m.date);
        fmt(r.d2d_bw, KS_UNIT_BANDWIDTH, v_hbm, sizeof v_hbm);
        fmt(r.fit[0].bw, KS_UNIT_BANDWIDTH, v_bw, sizeof v_bw);
        fmt(r.batch_fit[0].lat, KS_UNIT_TIME, v_ov, sizeof v_ov);
        text(s_hbm, sizeof s_hbm, "%s: cudaMemcpy device to device of 256 MiB, bytes read + written per second",
                 where);
        text(s_bw, sizeof s_bw,
                 "%s: pinned host-to-device cudaMemcpyAsync + stream sync, 4 KiB to 64 MiB, fit t = overhead + size "
                 "/ bw, worst residual %.1f%%; device-to-host %.4g GB/s (worst %.1f%%); pageable %.4g / %.4g GB/s",
                 where, 100 * r.fit[0].worst, r.fit[1].bw / 1e9, 100 * r.fit[1].worst, r.fit[2].bw / 1e9,
                 r.fit[3].bw / 1e9);
        const size_t nb = N_OF(gpu_batch_blocks) - 1; // the GPU_BLOCKS point
        text(s_ov, sizeof s_ov,
                 "%s: fixed cost of one batched copy call, which the simulator charges once per migration batch: "
                 "intercept of one ks_copy_batch_async (cudaMemcpyBatchAsync) + stream sync moving 1 to %d pinned "
                 "host blocks of 128 KiB to the device as the runtime moves a batch (two 64 KiB copies per block, "
                 "its K and V halves), fit t = overhead + bytes / bw (%.4g GB/s, worst residual %.1f%%; with "
                 "pcie_bw instead, worst %.1f%%; pcie_lat is folded in here); device to host %.4g us (%.4g GB/s, "
                 "worst %.1f%%). One cudaMemcpyAsync per copy: intercept %.4g us (the pcie_bw fit). 32 x 128 KiB "
                 "blocks host to device: %.4g us one copy each, %.4g us one gather kernel, %.4g us one batched call",
                 where, GPU_BLOCKS, r.batch_fit[0].bw / 1e9, 100 * r.batch_fit[0].worst,
                 100 * r.batch_link_worst[0], 1e6 * r.batch_fit[1].lat, r.batch_fit[1].bw / 1e9,
                 100 * r.batch_fit[1].worst, 1e6 * r.fit[0].lat, 1e6 * r.single_s, 1e6 * r.gather_s,
                 1e6 * r.batch_t[0][nb]);
        text(s_lat, sizeof s_lat, "%s: 0, its part of a batch's fixed cost is in copy_overhead", where);
        const struct ks_bench_shape *ks = &r.kshape;
        char s_kt[2048];
        text(s_kt, sizeof s_kt,
             "%s: the CUDA sparse decode kernel timed as `kvstrata bench kernels --backend cuda --kernels sparse "
             "--batch %u` times it (sim/cli/bench_kernels.h): one decode layer for the whole batch, fp16 KV, context "
             "%u tokens, median of %u samples, seed %" PRIu64, where, ks->batch, ks->context, ks->repeat, ks->seed);
        const struct ks_calib_list kt_lists[] = {{"blocks", r.kblocks}, {"seconds", r.kseconds}};
        const struct ks_calib_field kt_fields[] = {
            {"batch", NULL, ks->batch},       {"kv_heads", NULL, ks->kv_heads},
            {"q_heads", NULL, ks->q_heads},   {"head_dim", NULL, ks->head_dim},
            {"block_size", NULL, ks->block_size}, {"backend", "cuda", 0}, {"dtype", "fp16", 0},
        };
        const struct ks_calib_table tables[] = {
            {.key = "kernel_time", .lists = kt_lists, .n_lists = N_OF(kt_lists), .n = r.n_kernel,
             .fields = kt_fields, .n_fields = N_OF(kt_fields), .source = s_kt, .kind = "measured"},
        };
        const struct ks_calib_figure figs[] = {
            {"hbm_bw", v_hbm, s_hbm, "measured"},
            {"pcie_bw", v_bw, s_bw, "measured"},
            {"pcie_lat", "0s", s_lat, "measured"},
            {"copy_overhead", v_ov, s_ov, "measured"},
        };
        char name[256], part[512], comment[4096], err[ERR_LEN];
        profile_name(out, name, sizeof name);
        text(part, sizeof part, "%s on host %s; other figures from %s", dev, m.host, base_file);
        text(comment, sizeof comment,
                 "%s.lua - measured GPU profile, written by kvstrata calib gpu.\nCommand: %s\nMachine: %s, %s, %s\n"
                 "device-to-device %.4g GB/s (read + written); both directions at once, 64 MiB each: %.4g ms "
                 "(one direction alone %.4g ms)",
                 name, cmdline, m.host, dev, m.date, r.d2d_bw / 1e9, 1e3 * r.bidir_s, 1e3 * r.one_dir_s);
        struct ks_calib_profile prof = {.base_file = base_file, .name = name, .part = part,
                                        .notes = "GPU copy figures and kernel_time measured by kvstrata calib gpu",
                                        .comment = comment, .figs = figs, .n_figs = N_OF(figs), .tables = tables,
                                        .n_tables = N_OF(tables)};
        if (ks_calib_profile_write(&prof, out, err, sizeof err) != KS_OK)
            rc = ks_cli_fail(cmd, "-o %s: %s", out, err);
    }
    if (rc == 0) {
        json_t *o = json_object();
        int e = !o;
        e |= ks_json_set_str(o, "profile", out);
        e |= ks_json_set_str(o, "device", dev);
        e |= ks_json_set_str(o, "host", m.host);
        e |= ks_json_set_str(o, "date", m.date);
        e |= ks_json_set_real(o, "d2d_bytes_per_s", r.d2d_bw);
        for (int s = 0; s < 4; s++) {
            json_t *a = json_array();
            for (size_t i = 0; a && i < N_OF(gpu_sizes); i++) {
                json_t *p = json_object();
                e |= !p || ks_json_set_int(p, "bytes", (int64_t)gpu_sizes[i]) ||
                     ks_json_set_real(p, "seconds", r.t[s][i]) || json_array_append_new(a, p);
            }
            e |= json_object_set_new(o, gpu_series[s], a);
            char key[64];
            snprintf(key, sizeof key, "%s_fit", gpu_series[s]);
            e |= set_copy_fit(o, key, &r.fit[s]);
        }
        e |= ks_json_set_real(o, "blocks_32x128KiB_single_copies_s", r.single_s);
        e |= ks_json_set_real(o, "blocks_32x128KiB_gather_kernel_s", r.gather_s);
        e |= ks_json_set_real(o, "blocks_32x128KiB_batched_copy_s", r.batch_t[0][N_OF(gpu_batch_blocks) - 1]);
        e |= ks_json_set_real(o, "blocks_32x128KiB_batched_copy_d2h_s", r.batch_t[1][N_OF(gpu_batch_blocks) - 1]);
        for (int d = 0; d < 2; d++) {
            json_t *a = json_array();
            for (size_t i = 0; a && i < N_OF(gpu_batch_blocks); i++) {
                json_t *p = json_object();
                e |= !p || ks_json_set_int(p, "blocks", gpu_batch_blocks[i]) ||
                     ks_json_set_int(p, "bytes", (int64_t)(gpu_batch_blocks[i] * GPU_BLOCK)) ||
                     ks_json_set_real(p, "seconds", r.batch_t[d][i]) || json_array_append_new(a, p);
            }
            e |= json_object_set_new(o, d ? "batched_d2h" : "batched_h2d", a);
            e |= set_copy_fit(o, d ? "batched_d2h_fit" : "batched_h2d_fit", &r.batch_fit[d]);
            e |= ks_json_set_real(o, d ? "batched_d2h_worst_with_pcie_bw" : "batched_h2d_worst_with_pcie_bw",
                                  r.batch_link_worst[d]);
        }
        e |= ks_json_set_real(o, "copy_overhead_s", r.batch_fit[0].lat);
        e |= ks_json_set_real(o, "single_copy_overhead_s", r.fit[0].lat);
        e |= ks_json_set_real(o, "bidir_64MiB_s", r.bidir_s);
        e |= ks_json_set_real(o, "one_dir_64MiB_s", r.one_dir_s);
        // kernel_time {batch, blocks, seconds}; each json_object_set_new takes its value, failing or not
        json_t *kt = json_object(), *kb = json_array(), *ksec = json_array();
        for (size_t i = 0; kb && ksec && i < r.n_kernel; i++) {
            e |= json_array_append_new(kb, json_integer((json_int_t)r.kblocks[i]));
            e |= json_array_append_new(ksec, json_real(r.kseconds[i]));
        }
        e |= json_object_set_new(kt, "batch", json_integer(r.kshape.batch));
        e |= json_object_set_new(kt, "blocks", kb);
        e |= json_object_set_new(kt, "seconds", ksec);
        e |= json_object_set_new(o, "kernel_time", kt);
        if (e || (json ? ks_json_print(stdout, o) : ks_json_print_table(stdout, o, NULL)) != 0)
            rc = ks_cli_fail(cmd, "cannot write the report");
        json_decref(o);
    }
    free(base_file);
    return rc;
}

const struct ks_cli_cmd ks_calib_gpu_cmd = {
    .name = "calib gpu",
    .summary = "Measure GPU copies (HBM, PCIe pinned and pageable) and the decode kernel, write a profile",
    .about =
        "With a GPU: device-to-device copy (hbm_bw, bytes read + written per\n"
        "second); host-to-device and device-to-host copies of 4 KiB to 64 MiB,\n"
        "pinned and pageable, each timed on the host from issue to the end of a\n"
        "stream synchronisation and fitted to overhead + size / bandwidth\n"
        "(pcie_bw from the pinned host-to-device fit); 32 blocks of 128 KiB\n"
        "moved by one copy each, by one gather kernel and by one batched copy\n"
        "call (ks_copy_batch_async, two 64 KiB halves per block, as the runtime\n"
        "moves a migration batch); batched calls of 1 to 32 blocks each way,\n"
        "fitted to overhead + bytes / bandwidth (copy_overhead: the host-to-\n"
        "device intercept, the fixed cost per batch the simulator charges);\n"
        "both directions at once; and the sparse decode kernel as\n"
        "`kvstrata bench kernels --backend cuda --profile` times it with its\n"
        "defaults (batch 32, 8 to 256 selected blocks, median of 5 samples).\n"
        "Writes -o: the --base profile with hbm_bw, pcie_bw, pcie_lat (0:\n"
        "folded into copy_overhead) and copy_overhead measured (the single-copy\n"
        "intercept stays in its source and JSON), and its kernel_time table\n"
        "(replacing the base's). Without a GPU it exits 1 and says so.\n",
    .run = run_gpu,
};
