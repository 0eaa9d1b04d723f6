// simssd.c - the simulated SSD experiment of simssd.h, on SimGrid's C API.
#include "simssd.h"

#include <math.h>
#include <simgrid/actor.h>
#include <simgrid/barrier.h>
#include <simgrid/engine.h>
#include <simgrid/host.h>
#include <stdio.h>

#include "platform.h"
#include "status.h"

static struct run {
    sg_host_t ssd, cpu;
    struct ks_simssd_point *pts;
    size_t n;
    double extra; // bytes added to each request: op * bw
    sg_bar_t done;
    size_t cur;
} the_run;

static void reader(int argc, char **argv)
{
    (void)argc, (void)argv;
    const struct ks_simssd_point *p = &the_run.pts[the_run.cur];
    for (unsigned i = 0; i < p->rounds; i++)
        sg_host_sendto(the_run.ssd, the_run.cpu, p->bytes + the_run.extra);
    sg_barrier_wait(the_run.done);
}

static void controller(int argc, char **argv)
{
    (void)argc, (void)argv;
    for (the_run.cur = 0; the_run.cur < the_run.n; the_run.cur++) {
        struct ks_simssd_point *p = &the_run.pts[the_run.cur];
        the_run.done = sg_barrier_init(p->qd + 1);
        double t0 = simgrid_get_clock();
        for (unsigned a = 0; a < p->qd; a++) {
            char name[32];
            snprintf(name, sizeof name, "reader%u", a);
            sg_actor_create(name, the_run.ssd, reader, 0, NULL);
        }
        sg_barrier_wait(the_run.done);
        double elapsed = simgrid_get_clock() - t0;
        sg_barrier_destroy(the_run.done);
        p->t = (double)p->qd * elapsed / ((double)p->qd * p->rounds);
    }
}

int ks_simssd_run(double lat, double bw, double op, double dram_bw, struct ks_simssd_point *pts, size_t n, char *err,
                  size_t len)
{
    static int ran;
    if (ran) {
        snprintf(err, len, "SimGrid already ran in this process");
        return KS_ESTATE;
    }
    if (!(lat >= 0) || !(bw > 0) || !(op >= 0) || !(dram_bw > 0) || !isfinite(lat + bw + op + dram_bw)) {
        snprintf(err, len, "bad figures: SSD latency %g s, bandwidth %g B/s, op %g s; host memory %g B/s", lat, bw, op,
                 dram_bw);
        return KS_EINVAL;
    }
    for (size_t i = 0; i < n; i++)
        if (pts[i].qd == 0 || pts[i].qd > 4096 || !(pts[i].bytes > 0) || pts[i].rounds == 0) {
            snprintf(err, len, "bad point %zu", i);
            return KS_EINVAL;
        }
    ran = 1;
    int argc = 1 + KS_PLATFORM_ARGC;
    char *argv[] = {"kvstrata", KS_PLATFORM_ARGV, NULL};
    simgrid_init(&argc, argv);
    struct ks_platform_params pp = {
        .nodes = 1, .gpus_per_node = 1, .gpus_per_switch = 1, .gpu_flops = 1e12, .cpu_flops = 1e12,
        .pcie_bw = 1e10, .uplink_bw = 1e10, .ssds_per_node = 1, .ssd_read_bw = bw, .ssd_write_bw = bw,
        .ssd_lat = lat, .nic_bw = 1e10, .core_bw = 1e10, .dram_bw = dram_bw,
    };
    int st = ks_platform_load(&pp, err, len);
    if (st != KS_OK)
        return st;
    char name[32];
    ks_platform_ssd(name, sizeof name, 0, 0);
    the_run.ssd = sg_host_by_name(name);
    ks_platform_cpu(name, sizeof name, 0);
    the_run.cpu = sg_host_by_name(name);
    KS_ASSERT(the_run.ssd && the_run.cpu);
    the_run.pts = pts;
    the_run.n = n;
    the_run.extra = op * bw;
    sg_actor_create("controller", the_run.cpu, controller, 0, NULL);
    simgrid_run();
    return KS_OK;
}
