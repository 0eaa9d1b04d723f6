// check.c - `calib check` of check.h: each model's prediction set against a
// new measurement, point by point, and the goals over the points.

#include "check.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>

#include "device.h"
#include "dram.h"
#include "gpubench.h"
#include "kernel.h"
#include "simssd.h"
#include "ssd.h"
#include "status.h"
#include "wake.h"

#define KIB ((size_t)1 << 10)
#define MIB ((size_t)1 << 20)
#define N_OF(a) (sizeof(a) / sizeof((a)[0]))
#define SIM_ROUNDS 8 // requests per simulated actor: the model is steady after one
enum { ERR_LEN = 4096 };

static const size_t check_dram_full[] = {128 * KIB, MIB, 16 * MIB, 256 * MIB};
static const size_t check_dram_quick[] = {128 * KIB, MIB, 4 * MIB};

int ks_check_wake_ok(const struct ks_host_wake *w)
{
    if (w->n > KS_MEASURE_MAX_WAKE)
        return -1;
    for (uint32_t i = 0; i < w->n; i++)
        if (w->idle[i] > KS_WAKE_MAX_IDLE)
            return -1;
    return 0;
}

// DRAM: dram_bw counts bytes moved, so the profile predicts a copy at
// threads * size * moved(size) / dram_bw for the node (no latency term).
static int check_dram(const struct ks_check_params *p, double dram_bw, struct ks_check_result *r,
                      const struct ks_progress *pr, char *err, size_t len)
{
    double sec = p->seconds > 0 ? p->seconds : p->quick ? KS_MEASURE_QUICK_SECONDS : KS_MEASURE_DRAM_SECONDS;
    r->nt = ks_dram_nt_threshold();
    const size_t *ds = p->quick ? check_dram_quick : check_dram_full;
    r->n_dram = p->quick ? N_OF(check_dram_quick) : N_OF(check_dram_full);
    const struct ks_measure_series series = {p->threads, r->dram};
    int rc = ks_measure_dram(ds, r->n_dram, &series, 1, p->quick ? 64 * MIB : 256 * MIB, sec, pr, err, len);
    struct ks_check_goal *gd = &r->dram_goal;
    *gd = (struct ks_check_goal){.name = "dram copies above 64 KiB, all threads: t = threads * size * moved / dram_bw",
                                 .goal = KS_CHECK_COPY_GOAL, .has_spread = 1};
    for (size_t i = 0; rc == KS_OK && i < r->n_dram; i++) {
        struct ks_measure_dram_pt *d = &r->dram[i];
        d->model = (double)p->threads * ks_dram_moved_per_copied(d->bytes, r->nt) * (double)d->bytes / dram_bw;
        d->err = (d->model - d->r.t) / d->r.t;
        if (d->bytes > KS_CHECK_GOAL_MIN_BYTES) {
            gd->worst = fmax(gd->worst, fabs(d->err));
            gd->worst_spread = fmax(gd->worst_spread, ks_measure_dram_spread(d));
            gd->noisy += ks_measure_dram_spread(d) > gd->goal;
            gd->n++;
        }
    }
    gd->met = gd->worst <= gd->goal;
    return rc;
}

// Wake-ups at the profile's idle times: the profile's seconds there.
static int check_wake(const struct ks_check_params *p, const struct ks_host_wake *w, struct ks_check_result *r,
                      const struct ks_progress *pr, char *err, size_t len)
{
    struct ks_check_goal *gw = &r->wake_goal;
    *gw = (struct ks_check_goal){.name = "host wake-up: the profile's host_wake seconds at each of its idle times",
                                 .goal = KS_CHECK_WAKE_GOAL};
    r->n_wake = w->n;
    int rc = KS_OK;
    if (r->n_wake > 0)
        rc = ks_measure_wake(w->idle, r->n_wake, p->quick, r->wake, pr, err, len);
    for (size_t i = 0; rc == KS_OK && i < r->n_wake; i++) {
        struct ks_measure_wake_pt *k = &r->wake[i];
        k->model = w->seconds[i];
        k->err = (k->model - k->r.median) / k->r.median;
        gw->worst = fmax(gw->worst, fabs(k->err));
        gw->worst_spread = fmax(gw->worst_spread, ks_measure_wake_spread(k));
        gw->noisy += ks_measure_wake_spread(k) > gw->goal;
        gw->n++;
    }
    gw->met = gw->worst <= gw->goal;
    return rc;
}

// The reads by the profile's model and replayed in SimGrid.
static int ssd_reads(const struct ks_scenario_ssd *f, double dram_bw, struct ks_check_result *r, char *err,
                     size_t len)
{
    struct ks_check_goal *gs = &r->ssd_goal, *gsim = &r->sim_goal;
    struct ks_simssd_point sp[KS_MEASURE_MAX_SSD];
    for (size_t i = 0; i < r->n_ssd; i++) {
        struct ks_measure_ssd_pt *d = &r->rd[i];
        d->model = f->lat + d->qd * f->read_op_time + d->qd * (double)d->bytes / f->read_bw;
        d->err = (d->model - d->r.t) / d->r.t;
        gs->worst = fmax(gs->worst, fabs(d->err));
        gs->worst_spread = fmax(gs->worst_spread, ks_measure_ssd_spread(d));
        gs->noisy += ks_measure_ssd_spread(d) > gs->goal;
        sp[i] = (struct ks_simssd_point){.qd = d->qd, .bytes = (double)d->bytes, .rounds = SIM_ROUNDS};
    }
    char why[ERR_LEN];
    int rc = ks_simssd_run(f->lat, f->read_bw, f->read_op_time, dram_bw, sp, r->n_ssd, why, sizeof why);
    if (rc != KS_OK) {
        snprintf(err, len, "the simulated experiment: %s", why);
        return rc;
    }
    for (size_t i = 0; i < r->n_ssd; i++) {
        r->rd[i].sim = sp[i].t;
        r->rd[i].sim_err = (sp[i].t - r->rd[i].r.t) / r->rd[i].r.t;
        gsim->worst = fmax(gsim->worst, fabs(r->rd[i].sim_err));
    }
    gs->n = gsim->n = (int)r->n_ssd;
    gs->has_spread = gsim->has_spread = 1;
    gsim->worst_spread = gs->worst_spread;
    gsim->noisy = gs->noisy;
    gs->met = gs->worst <= gs->goal;
    gsim->met = gsim->worst <= gsim->goal;
    return KS_OK;
}

// NOTE: a write has the reads' latency: the engine sends it over the SSD's
// write link, which sim/engine/platform.c gives ssd.lat (a profile has one),
// at write_bw, with write_op_time * write_bw bytes more per block
// (sim/engine/engine.c); qd writes in flight share that link.
static void ssd_writes(const struct ks_scenario_ssd *f, struct ks_check_result *r)
{
    struct ks_check_goal *gwr = &r->write_goal;
    for (size_t i = 0; i < r->n_ssd; i++) {
        struct ks_measure_ssd_pt *d = &r->wr[i];
        d->model = f->lat + d->qd * f->write_op_time + d->qd * (double)d->bytes / f->write_bw;
        d->err = (d->model - d->r.t) / d->r.t;
        gwr->worst = fmax(gwr->worst, fabs(d->err));
        gwr->worst_spread = fmax(gwr->worst_spread, ks_measure_ssd_spread(d));
        gwr->noisy += ks_measure_ssd_spread(d) > gwr->goal;
    }
    gwr->n = (int)r->n_ssd;
    gwr->has_spread = 1;
    gwr->met = gwr->worst <= gwr->goal;
}

// SSD reads, by the profile's model and replayed in SimGrid; SSD writes, by
// the profile's model.
static int check_ssd(const struct ks_check_params *p, const struct ks_scenario_platform *pf,
                     struct ks_check_result *r, const struct ks_progress *pr, char *err, size_t len)
{
    double sec = p->seconds > 0 ? p->seconds : p->quick ? KS_MEASURE_QUICK_SECONDS : KS_MEASURE_SSD_SECONDS;
    struct ks_measure_grid g;
    ks_measure_ssd_grid(p->quick, &g);
    r->n_ssd = g.n_sizes * g.n_qds;
    ks_ssd_describe_dir(p->dir, r->fsdesc, sizeof r->fsdesc);
    struct ks_ssd *s = ks_ssd_open(p->dir, (uint64_t)(p->quick ? 64 : 1024) * MIB, 2, err, len);
    if (!s)
        return KS_MEASURE_EDIR;
    int rc = ks_measure_ssd(s, KS_SSD_READ, &g, sec, r->rd, pr, err, len);
    if (rc == KS_OK)
        rc = ks_measure_ssd(s, KS_SSD_WRITE, &g, sec, r->wr, pr, err, len);
    char why[ERR_LEN];
    int st = ks_ssd_close(s, why, sizeof why);
    if (st != KS_OK && rc == KS_OK) {
        snprintf(err, len, "%s", why);
        rc = st;
    }
    if (rc == KS_OK)
        rc = ssd_reads(&pf->ssd, pf->dram_bw, r, err, len);
    if (rc == KS_OK)
        ssd_writes(&pf->ssd, r);
    return rc;
}

// PCIe, with a GPU: copy_overhead + pcie_lat + size / pcie_bw, pinned.
static int check_pcie(const struct ks_check_params *p, const struct ks_scenario_platform *pf,
                      struct ks_check_result *r, const struct ks_progress *pr, char *err, size_t len)
{
    struct ks_check_goal *gp = &r->pcie_goal;
    *gp = (struct ks_check_goal){
        .name = "pcie pinned copies above 64 KiB: t = copy_overhead + pcie_lat + size / pcie_bw",
        .goal = KS_CHECK_COPY_GOAL};
    r->gpu = ks_device_count(NULL, 0) > 0; // calib check's report gives the reason when none answers
    int rc = KS_OK;
    for (size_t i = 0; r->gpu && rc == KS_OK && i < KS_GPU_N_SIZES; i++) {
        size_t bytes = ks_gpu_sizes[i];
        ks_progress_say(pr, "calib: PCIe copies of %zu KiB", bytes / KIB);
        r->pcie_bytes[i] = bytes;
        char why[KS_KERNEL_ERR_LEN];
        int st = ks_gpu_bench_copy(KS_GPU_H2D, 1, bytes, p->quick ? 5 : 21, &r->h2d[i], why, sizeof why);
        if (st == KS_KERNEL_OK)
            st = ks_gpu_bench_copy(KS_GPU_D2H, 1, bytes, p->quick ? 5 : 21, &r->d2h[i], why, sizeof why);
        if (st != KS_KERNEL_OK) {
            snprintf(err, len, "PCIe copies: %s %s", ks_kernel_status_str(st), why);
            rc = st;
        }
        r->pcie_model[i] = pf->copy_overhead + pf->pcie_lat + (double)bytes / pf->pcie_bw;
        if (bytes > KS_CHECK_GOAL_MIN_BYTES) {
            gp->worst = fmax(gp->worst, fmax(fabs(r->pcie_model[i] - r->h2d[i]) / r->h2d[i],
                                             fabs(r->pcie_model[i] - r->d2h[i]) / r->d2h[i]));
            gp->n += 2;
        }
        r->n_pcie = i + 1;
    }
    ks_progress_done(pr);
    gp->met = gp->worst <= gp->goal;
    return rc;
}

int ks_check_run(const struct ks_check_params *p, const struct ks_scenario_platform *pf, struct ks_check_result *r,
                 const struct ks_progress *pr, char *err, size_t len)
{
    r->ssd_goal = (struct ks_check_goal){.name = "ssd reads: t = lat + qd * op + qd * size / bw",
                                         .goal = KS_CHECK_SSD_GOAL};
    r->sim_goal = (struct ks_check_goal){.name = "ssd reads simulated (SimGrid, sim/engine/platform.c)",
                                         .goal = KS_CHECK_SSD_GOAL};
    r->write_goal = (struct ks_check_goal){.name = "ssd writes: t = lat + qd * write_op + qd * size / write_bw",
                                           .goal = KS_CHECK_SSD_GOAL};
    int rc = check_dram(p, pf->dram_bw, r, pr, err, len);
    if (rc == KS_OK)
        rc = check_wake(p, &pf->host_wake, r, pr, err, len);
    if (rc == KS_OK && p->dir)
        rc = check_ssd(p, pf, r, pr, err, len);
    if (rc == KS_OK)
        rc = check_pcie(p, pf, r, pr, err, len);
    const struct ks_check_goal *g = &r->ssd_goal;
    r->all_met = r->dram_goal.met && (r->n_wake == 0 || r->wake_goal.met) &&
                 (!p->dir || (g->met && r->sim_goal.met && r->write_goal.met)) && (!r->gpu || r->pcie_goal.met);
    return rc;
}
