// host.c - `calib host` of host.h: the measurements in order (DRAM, wake-ups,
// SSD), their fits, and the profile's figures, sources and comment.
#include "host.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "profile.h"
#include "ssd.h"
#include "status.h"
#include "units.h"

#define KIB ((size_t)1 << 10)
#define MIB ((size_t)1 << 20)
#define GIB ((size_t)1 << 30)
#define N_OF(a) (sizeof(a) / sizeof((a)[0]))
enum { ERR_LEN = 4096 };

static const size_t dram_full[] = {64 * KIB, 256 * KIB, MIB, 4 * MIB, 16 * MIB, 64 * MIB, 256 * MIB, GIB};
static const size_t dram_quick[] = {64 * KIB, 256 * KIB, MIB, 4 * MIB};
// idle seconds before a wake-up: a lane between steps (~0.1 s), a decode
// thread waiting for a copy (0.1-1 ms), and between
static const double wake_full[] = {1e-4, 1e-3, 1e-2, 1e-1};
static const double wake_quick[] = {1e-4, 1e-3};

int ks_host_measure(const struct ks_host_params *o, struct ks_host_run *h, const struct ks_progress *pr, char *err,
                    size_t len)
{
    h->threads = o->threads;
    const size_t *ds = o->quick ? dram_quick : dram_full;
    h->n_dram = o->quick ? N_OF(dram_quick) : N_OF(dram_full);
    size_t pool = o->quick ? 64 * MIB : 256 * MIB;
    h->dram_seconds = o->seconds > 0 ? o->seconds : o->quick ? KS_MEASURE_QUICK_SECONDS : KS_MEASURE_DRAM_SECONDS;
    // one thread and all threads in the same rounds: a drift reaches both curves
    const struct ks_measure_series series[] = {{1, h->dram1}, {h->threads, h->dramn}};
    int rc = ks_measure_dram(ds, h->n_dram, series, N_OF(series), pool, h->dram_seconds, pr, err, len);
    if (rc != KS_OK)
        return rc;
    h->nt = ks_dram_nt_threshold();
    if ((rc = ks_measure_fit_dram(h->dram1, h->n_dram, h->nt, &h->fit1)) != KS_OK ||
        (rc = ks_measure_fit_dram(h->dramn, h->n_dram, h->nt, &h->fitn)) != KS_OK) {
        snprintf(err, len, "the DRAM copy times do not fit latency + size * moved / bandwidth");
        return rc;
    }

    h->n_wake = o->quick ? N_OF(wake_quick) : N_OF(wake_full);
    rc = ks_measure_wake(o->quick ? wake_quick : wake_full, h->n_wake, o->quick, h->wake, pr, err, len);
    if (rc != KS_OK)
        return rc;

    char why[ERR_LEN];
    h->file_bytes = (uint64_t)(o->file_mib ? o->file_mib : o->quick ? 64 : 1024) * MIB;
    h->seconds = o->seconds > 0 ? o->seconds : o->quick ? KS_MEASURE_QUICK_SECONDS : KS_MEASURE_SSD_SECONDS;
    ks_ssd_describe_dir(o->dir, h->fsdesc, sizeof h->fsdesc);
    ks_progress_say(pr, "calib: filling a %" PRIu64 " MiB file in %s", h->file_bytes / MIB, o->dir);
    struct ks_ssd *s = ks_ssd_open(o->dir, h->file_bytes, 1, err, len);
    ks_progress_done(pr);
    if (!s)
        return KS_MEASURE_EDIR;
    struct ks_measure_grid g;
    ks_measure_ssd_grid(o->quick, &g);
    h->n_ssd = g.n_sizes * g.n_qds;
    rc = ks_measure_ssd(s, KS_SSD_READ, &g, h->seconds, h->rd, pr, err, len);
    if (rc == KS_OK)
        rc = ks_measure_ssd(s, KS_SSD_WRITE, &g, h->seconds, h->wr, pr, err, len);
    int st = ks_ssd_close(s, why, sizeof why);
    if (st != KS_OK && rc == KS_OK) {
        snprintf(err, len, "%s", why);
        rc = st;
    }
    if (rc != KS_OK)
        return rc;
    if ((rc = ks_measure_fit_ssd(h->rd, h->n_ssd, &h->fit_rd)) != KS_OK ||
        (rc = ks_measure_fit_ssd(h->wr, h->n_ssd, &h->fit_wr)) != KS_OK) {
        snprintf(err, len, "the SSD times do not fit the model of calib/fit.h");
        return rc;
    }
    return KS_OK;
}

// v to 4 significant digits: what a wake-up median carries (its runs differ
// by more), and a profile line a reader can take in.
static double sig4(double v)
{
    char buf[32];
    snprintf(buf, sizeof buf, "%.4g", v);
    return strtod(buf, NULL);
}

// The texts of a host profile: the measured figures' values and sources,
// host_wake's lists and source, the profile's name, part, notes and comment.
struct texts {
    char where[1024]; // the command, machine and date, that every source starts with
    char v_dram[32], v_rbw[32], v_wbw[32], v_lat[32], v_rop[32], v_wop[32], v_l2[32];
    char s_dram[2048], s_rd[2048], s_wr[2048], s_l2[1024], s_count[1024];
    double w_idle[KS_MEASURE_MAX_WAKE], w_sec[KS_MEASURE_MAX_WAKE];
    char s_wake[4096], wake_line[1024];
    char name[256], part[512], notes[1024], comment[8192];
};

static void figure_texts(const struct ks_host_params *o, const struct ks_host_run *h, const struct ks_machine *m,
                         const char *cmdline, struct texts *t)
{
    ks_calib_profile_text(t->where, sizeof t->where, "`%s` on %s (%s, %u cores), %s", cmdline, m->host, m->cpu,
                          m->cores, m->date);
    ks_units_format(h->fitn.bw, KS_UNIT_BANDWIDTH, t->v_dram, sizeof t->v_dram);
    ks_units_format(h->fit_rd.bw, KS_UNIT_BANDWIDTH, t->v_rbw, sizeof t->v_rbw);
    ks_units_format(h->fit_wr.bw, KS_UNIT_BANDWIDTH, t->v_wbw, sizeof t->v_wbw);
    ks_units_format(h->fit_rd.lat, KS_UNIT_TIME, t->v_lat, sizeof t->v_lat);
    ks_units_format(h->fit_rd.op, KS_UNIT_TIME, t->v_rop, sizeof t->v_rop);
    ks_units_format(h->fit_wr.op, KS_UNIT_TIME, t->v_wop, sizeof t->v_wop);
    snprintf(t->v_l2, sizeof t->v_l2, "%" PRIu64, m->mem);
    size_t lo = h->dramn[0].bytes, hi = h->dramn[h->n_dram - 1].bytes;
    const struct ks_measure_ssd_pt *wr = ks_measure_worst_ssd(h->rd, h->n_ssd);
    const struct ks_measure_ssd_pt *ww = ks_measure_worst_ssd(h->wr, h->n_ssd);
    ks_calib_profile_text(t->s_dram, sizeof t->s_dram,
             "%s: memcpy of %zu KiB to %zu MiB from memory out of cache, %u threads at once; bytes moved, read plus "
             "written: a copy moves 3 per byte copied below glibc's non-temporal threshold (%zu MiB here; %s), 2 at "
             "or above it (calib/dram.h); fit t = lat + threads * size * moved / bw: lat %.3g us, worst residual "
             "%.1f%%; one thread: %.3g GB/s moved (lat %.3g us, worst residual %.1f%%)",
             t->where, lo / KIB, hi / MIB, h->threads, h->nt / MIB,
             h->nt ? "glibc.cpu.x86_non_temporal_threshold" : "unknown: every copy counted as 2",
             1e6 * h->fitn.lat, 100 * h->fitn.worst, h->fit1.bw / 1e9, 1e6 * h->fit1.lat, 100 * h->fit1.worst);
    const char *ssd_what = "O_DIRECT random %s through io_uring, %zu KiB to %zu MiB at queue depths %u to %u, on a %"
                           PRIu64 " MiB file in %s (%s); fit t = lat + qd * op + qd * size / bw (calib/fit.h)";
    char sw[1024];
    size_t slo = h->rd[0].bytes, shi = h->rd[h->n_ssd - 1].bytes;
    unsigned qlo = h->rd[0].qd, qhi = h->rd[h->n_ssd - 1].qd;
    ks_calib_profile_text(sw, sizeof sw, ssd_what, "reads", slo / KIB, shi / MIB, qlo, qhi, h->file_bytes / MIB,
                          o->dir, h->fsdesc);
    ks_calib_profile_text(t->s_rd, sizeof t->s_rd,
             "%s: %s: lat %.3g us, op %.3g us, bw %.4g MB/s; worst residual %.1f%% (%zu KiB, qd %u)",
             t->where, sw, 1e6 * h->fit_rd.lat, 1e6 * h->fit_rd.op, h->fit_rd.bw / 1e6, 100 * h->fit_rd.worst,
             wr->bytes / KIB, wr->qd);
    ks_calib_profile_text(sw, sizeof sw, ssd_what, "writes", slo / KIB, shi / MIB, qlo, qhi, h->file_bytes / MIB,
                          o->dir, h->fsdesc);
    ks_calib_profile_text(t->s_wr, sizeof t->s_wr,
             "%s: %s: lat %.3g us (the profile has one ssd.lat, the reads'), op %.3g us, bw %.4g MB/s; worst residual "
             "%.1f%% (%zu KiB, qd %u)",
             t->where, sw, 1e6 * h->fit_wr.lat, 1e6 * h->fit_wr.op, h->fit_wr.bw / 1e6, 100 * h->fit_wr.worst,
             ww->bytes / KIB, ww->qd);
    ks_calib_profile_text(t->s_l2, sizeof t->s_l2,
             "MemTotal of /proc/meminfo on %s, %s (all of it; the runtime gets less)", m->host, m->date);
    ks_calib_profile_text(t->s_count, sizeof t->s_count, "the one device that holds %s (%s) on %s, %s", o->dir,
             h->fsdesc, m->host, m->date);
}

// host_wake: the median wake-up at each idle time, every point's samples and
// spread in the source.
static void wake_texts(const struct ks_host_run *h, struct texts *t)
{
    size_t wu = (size_t)snprintf(t->s_wake, sizeof t->s_wake,
                                 "%s: a thread waiting in pthread_cond_wait for the idle time, then signalled "
                                 "(pthread_cond_broadcast under the mutex, right after storing the time) by a thread "
                                 "that spins meanwhile; seconds from the signal to the waiter's first clock read after "
                                 "the wait returns (CLOCK_MONOTONIC), median per idle time (calib/wake.h); per point, "
                                 "idle: samples, P10-P90:",
                                 t->where);
    for (size_t i = 0; i < h->n_wake; i++) {
        t->w_idle[i] = h->wake[i].idle;
        t->w_sec[i] = sig4(h->wake[i].r.median);
        if (wu < sizeof t->s_wake)
            wu += (size_t)snprintf(t->s_wake + wu, sizeof t->s_wake - wu, "%s %g s: %u, %.1f-%.1f us", i ? ";" : "",
                                   h->wake[i].idle, h->wake[i].r.samples, 1e6 * h->wake[i].r.p10,
                                   1e6 * h->wake[i].r.p90);
    }
    t->wake_line[0] = '\0';
    for (size_t i = 0, u = 0; i < h->n_wake && u < sizeof t->wake_line; i++)
        u += (size_t)snprintf(t->wake_line + u, sizeof t->wake_line - u, "%s %g: %.1f, %.1f-%.1f, %u", i ? ";" : "",
                              h->wake[i].idle, 1e6 * h->wake[i].r.median, 1e6 * h->wake[i].r.p10,
                              1e6 * h->wake[i].r.p90, h->wake[i].r.samples);
}

static void header_texts(const struct ks_host_run *h, const struct ks_machine *m, const char *base_file,
                         const char *cmdline, const char *out, struct texts *t)
{
    ks_calib_profile_name(out, t->name, sizeof t->name);
    ks_calib_profile_text(t->part, sizeof t->part, "host %s (%s, %u cores, %.0f GiB), drive %s; GPU figures from %s",
             m->host, m->cpu, m->cores, (double)m->mem / GIB, h->fsdesc, base_file);
    ks_calib_profile_text(t->notes, sizeof t->notes,
             "host figures measured by kvstrata calib host (kind \"measured\"); every other figure is the base "
             "profile's, with its own source and kind");
    size_t used = (size_t)snprintf(t->comment, sizeof t->comment,
                                   "%s.lua - measured host profile, written by kvstrata calib host.\n"
                                   "Command: %s\nMachine: %s, %s, %u cores; --dir on %s; %s\n"
                                   "DRAM fit (all cores): lat %.3g us, bw %.4g GB/s moved (3 or 2 bytes per byte "
                                   "copied, calib/dram.h), worst residual %.1f%%\n"
                                   "SSD read fit: lat %.3g us, op %.3g us, bw %.4g MB/s, worst residual %.1f%%\n"
                                   "SSD write fit: lat %.3g us, op %.3g us, bw %.4g MB/s, worst residual %.1f%%\n"
                                   "Wake-ups (idle s: median us, P10-P90 us, samples):%s\n"
                                   "Measured SSD points (op bytes qd MB/s IOPS us/request; slowest-fastest window "
                                   "MB/s):",
                                   t->name, cmdline, m->host, m->cpu, m->cores, h->fsdesc, m->date, 1e6 * h->fitn.lat,
                                   h->fitn.bw / 1e9, 100 * h->fitn.worst, 1e6 * h->fit_rd.lat, 1e6 * h->fit_rd.op,
                                   h->fit_rd.bw / 1e6, 100 * h->fit_rd.worst, 1e6 * h->fit_wr.lat, 1e6 * h->fit_wr.op,
                                   h->fit_wr.bw / 1e6, 100 * h->fit_wr.worst, t->wake_line);
    for (int w = 0; w < 2; w++)
        for (size_t i = 0; i < h->n_ssd && used < sizeof t->comment; i++) {
            const struct ks_measure_ssd_pt *p = w ? &h->wr[i] : &h->rd[i];
            used += (size_t)snprintf(t->comment + used, sizeof t->comment - used,
                                     "\n  %s %7zu %2u %8.1f %8.0f %9.1f; %.1f-%.1f", w ? "write" : "read ", p->bytes,
                                     p->qd, p->r.bytes_per_s / 1e6, (double)p->r.requests / p->r.elapsed,
                                     1e6 * p->r.t, p->lo / 1e6, p->hi / 1e6);
        }
}

int ks_host_write_profile(const struct ks_host_params *o, const struct ks_host_run *h, const struct ks_machine *m,
                          const char *base_file, const char *cmdline, const char *out, char *err, size_t len)
{
    struct texts t;
    figure_texts(o, h, m, cmdline, &t);
    wake_texts(h, &t);
    header_texts(h, m, base_file, cmdline, out, &t);
    const struct ks_calib_figure figs[] = {
        {"l2", t.v_l2, t.s_l2, "measured"},
        {"dram_bw", t.v_dram, t.s_dram, "measured"},
        {"ssd.count", "1", t.s_count, "measured"},
        {"ssd.read_bw", t.v_rbw, t.s_rd, "measured"},
        {"ssd.write_bw", t.v_wbw, t.s_wr, "measured"},
        {"ssd.lat", t.v_lat, t.s_rd, "measured"},
        {"ssd.read_op_time", t.v_rop, t.s_rd, "measured"},
        {"ssd.write_op_time", t.v_wop, t.s_wr, "measured"},
    };
    const struct ks_calib_list w_lists[] = {{"idle", t.w_idle}, {"seconds", t.w_sec}};
    const struct ks_calib_table tables[] = {
        {.key = "host_wake", .lists = w_lists, .n_lists = N_OF(w_lists), .n = h->n_wake, .source = t.s_wake,
         .kind = "measured"},
    };
    struct ks_calib_profile prof = {.base_file = base_file, .name = t.name, .part = t.part, .notes = t.notes, .cpu = m->cpu,
                                    .comment = t.comment, .figs = figs, .n_figs = N_OF(figs), .tables = tables,
                                    .n_tables = N_OF(tables)};
    return ks_calib_profile_write(&prof, out, err, len);
}
