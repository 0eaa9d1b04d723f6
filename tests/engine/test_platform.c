// test_platform.c - the generated SimGrid platform: routes, and transfer times
// that equal their closed forms exactly under the pinned network model.
//
// One SimGrid run per process (SimGrid initialises once per process):
// transfers start one second apart so that only those meant to overlap do.
// With the argument `gpudirect` the process checks the platform with
// platform.rdma = "gpudirect" instead (CTest engine.platform_gpudirect).
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <simgrid/actor.h>
#include <simgrid/engine.h>
#include <simgrid/host.h>
#include <simgrid/link.h>
#include <simgrid/mailbox.h>
#include <xbt/dynar.h>

#include "platform.h"
#include "status.h"

#define B 4194304.0 // bytes per transfer (32 blocks of 128 KiB)

static struct ks_platform_params params(void)
{
    return (struct ks_platform_params){
        .nodes = 2, .gpus_per_node = 4, .gpus_per_switch = 2,
        .gpu_flops = 1e15, .cpu_flops = 1e12,
        .pcie_bw = 50e9, .pcie_lat = 2e-6, .uplink_bw = 50e9, .uplink_lat = 1e-6,
        .nvlink_bw = 450e9, .nvlink_lat = 1e-6, .dram_bw = 120e9,
        .ssds_per_node = 2, .ssd_read_bw = 7e9, .ssd_write_bw = 5e9, .ssd_lat = 80e-6,
        .nic_bw = 50e9, .nic_lat = 5e-6, .core_bw = 100e9, .core_lat = 2e-6,
        .remote = 1, .remote_bw = 25e9, .remote_lat = 10e-6,
    };
}

struct xfer {
    const char *src, *dst;
    double start, expect; // seconds
    double took;          // measured
};

static struct xfer xfers[] = {
    // alone, GPU to its host: both latencies, the narrower of pcie and uplink
    {"n0-gpu0", "n0-cpu", 0, 2e-6 + 1e-6 + B / 50e9, 0},
    // two GPUs behind one switch uplink at once: the uplink halves each
    {"n0-gpu0", "n0-cpu", 1, 3e-6 + 2 * B / 50e9, 0},
    {"n0-gpu1", "n0-cpu", 1, 3e-6 + 2 * B / 50e9, 0},
    // GPUs behind different switches do not meet
    {"n0-gpu2", "n0-cpu", 2, 3e-6 + B / 50e9, 0},
    {"n0-gpu0", "n0-cpu", 2, 3e-6 + B / 50e9, 0},
    // full duplex: both directions of one link at once, each at full speed
    {"n0-gpu0", "n0-cpu", 3, 3e-6 + B / 50e9, 0},
    {"n0-cpu", "n0-gpu0", 3, 3e-6 + B / 50e9, 0},
    // SSD to GPU: SSD read rate; GPU to SSD: write rate
    {"n0-ssd0", "n0-gpu3", 4, 80e-6 + 1e-6 + 2e-6 + B / 7e9, 0},
    {"n0-gpu3", "n0-ssd1", 5, 80e-6 + 1e-6 + 2e-6 + B / 5e9, 0},
    // GPU to GPU over NVLink
    {"n0-gpu0", "n0-gpu3", 6, 2e-6 + B / 450e9, 0},
    // between nodes: two NICs and the core
    {"n0-cpu", "n1-cpu", 7, 5e-6 + 2e-6 + 5e-6 + B / 50e9, 0},
    {"n1-gpu2", "n0-gpu1", 8, 3e-6 + 5e-6 + 2e-6 + 5e-6 + 3e-6 + B / 50e9, 0},
    // to the remote pool
    {"n1-cpu", KS_PLATFORM_REMOTE, 9, 5e-6 + 2e-6 + 10e-6 + B / 25e9, 0},
    // three GPUs and host memory at once, on links that do not meet (two
    // switches, two directions): 150 GB/s asked of a 120 GB/s host memory,
    // 40 each
    {"n0-gpu0", "n0-cpu", 10, 3e-6 + B / 40e9, 0},
    {"n0-gpu2", "n0-cpu", 10, 3e-6 + B / 40e9, 0},
    {"n0-cpu", "n0-gpu1", 10, 3e-6 + B / 40e9, 0},
};
enum { N_XFERS = sizeof xfers / sizeof xfers[0] };
// latencies: pcie 2 us, NIC 5 us, core 2 us; with gpudirect, between nodes
// GPU memory reaches the NIC over its own PCIe link, host memory through the
// node's memory link
static struct xfer gpudirect_xfers[] = {
    // GPU to a GPU of the other node: its PCIe link, both NICs, the core, the other's PCIe link
    {"n1-gpu2", "n0-gpu1", 0, 2e-6 + 5e-6 + 2e-6 + 5e-6 + 2e-6 + B / 50e9, 0},
    // four GPUs of one node to the other at once share its NIC (50 GB/s): 12.5 each
    {"n0-gpu0", "n1-gpu0", 1, 16e-6 + B / 12.5e9, 0},
    {"n0-gpu1", "n1-gpu1", 1, 16e-6 + B / 12.5e9, 0},
    {"n0-gpu2", "n1-gpu2", 1, 16e-6 + B / 12.5e9, 0},
    {"n0-gpu3", "n1-gpu3", 1, 16e-6 + B / 12.5e9, 0},
    // host memory to host memory: as without gpudirect
    {"n0-cpu", "n1-cpu", 2, 5e-6 + 2e-6 + 5e-6 + B / 50e9, 0},
    // the remote pool (200 GB/s here) to two GPUs of each node at once: the
    // flows share the pool's link and the core, then each node's NIC, 25 GB/s
    // each (SimGrid's lazy updates gave one node's pair its GPUs' PCIe rate,
    // 50 GB/s, as if its NIC were not shared: platform.h)
    {KS_PLATFORM_REMOTE, "n0-gpu0", 3, 19e-6 + B / 25e9, 0},
    {KS_PLATFORM_REMOTE, "n0-gpu1", 3, 19e-6 + B / 25e9, 0},
    {KS_PLATFORM_REMOTE, "n1-gpu0", 3, 19e-6 + B / 25e9, 0},
    {KS_PLATFORM_REMOTE, "n1-gpu1", 3, 19e-6 + B / 25e9, 0},
};
static struct xfer *run_xfers; // the table the actors read
static char payload = 'x';

static void sender(int argc, char **argv)
{
    (void)argc;
    struct xfer *x = &run_xfers[atoi(argv[1])];
    sg_actor_sleep_until(x->start);
    sg_mailbox_put(sg_mailbox_by_name(argv[1]), &payload, (uint64_t)B);
}

static void receiver(int argc, char **argv)
{
    (void)argc;
    struct xfer *x = &run_xfers[atoi(argv[1])];
    sg_mailbox_get(sg_mailbox_by_name(argv[1]));
    x->took = simgrid_get_clock() - x->start;
}

static void route_is(const char *a, const char *b, const char *expect)
{
    xbt_dynar_t l = xbt_dynar_new(sizeof(sg_link_t), NULL);
    sg_host_get_route(sg_host_by_name(a), sg_host_by_name(b), l);
    char got[512] = "";
    unsigned i;
    sg_link_t lk;
    xbt_dynar_foreach (l, i, lk) {
        strcat(got, i ? " " : "");
        strcat(got, sg_link_get_name(lk));
    }
    xbt_dynar_free(&l);
    if (strcmp(got, expect) != 0)
        fail_msg("route %s -> %s: got '%s', expected '%s'", a, b, got, expect);
}

// Starts SimGrid and loads p.
static void load(struct ks_platform_params *p)
{
    char *argv[] = {"test_platform", KS_PLATFORM_ARGV, NULL};
    int argc = 1 + KS_PLATFORM_ARGC;
    simgrid_init(&argc, argv);
    char err[256];
    assert_int_equal(ks_platform_load(p, err, sizeof err), KS_OK);
}

// Runs the n transfers of x, each checked against its closed form.
static void transfers(struct xfer *x, int n)
{
    char names[64][8];
    assert_true(n <= 64);
    run_xfers = x;
    for (int i = 0; i < n; i++) {
        snprintf(names[i], sizeof names[i], "%d", i);
        const char *args[] = {"x", names[i]};
        sg_actor_create("send", sg_host_by_name(x[i].src), sender, 2, (char **)args);
        sg_actor_create("recv", sg_host_by_name(x[i].dst), receiver, 2, (char **)args);
    }
    simgrid_run();
    for (int i = 0; i < n; i++) {
        double rel = fabs(x[i].took - x[i].expect) / x[i].expect;
        if (!(rel < 1e-9))
            fail_msg("transfer %d %s -> %s: took %.12g s, closed form %.12g s", i, x[i].src, x[i].dst, x[i].took,
                     x[i].expect);
    }
}

static void closed_forms(void **state)
{
    (void)state;
    struct ks_platform_params p = params();
    load(&p);
    assert_int_equal(sg_host_count(), 2 * (1 + 4 + 2) + 1);

    route_is("n0-gpu1", "n0-cpu", "n0-gpu1-pcie_UP n0-sw0_UP n0-dram");
    route_is("n0-cpu", "n0-gpu3", "n0-dram n0-sw1_DOWN n0-gpu3-pcie_DOWN");
    route_is("n0-ssd1", "n0-cpu", "n0-ssd1-rd n0-dram");
    route_is("n0-cpu", "n0-ssd1", "n0-dram n0-ssd1-wr");
    // through a bounce buffer in host memory: written there, then read
    route_is("n0-ssd1", "n0-gpu2", "n0-ssd1-rd n0-dram n0-dram n0-sw1_DOWN n0-gpu2-pcie_DOWN");
    route_is("n0-gpu2", "n0-ssd1", "n0-gpu2-pcie_UP n0-sw1_UP n0-dram n0-dram n0-ssd1-wr");
    route_is("n0-gpu3", "n0-gpu0", "n0-gpu3-nvl_UP n0-gpu0-nvl_DOWN");
    route_is("n1-gpu0", "n0-cpu",
             "n1-gpu0-pcie_UP n1-sw0_UP n1-dram n1-dram n1-nic_UP core_DOWN n0-nic_DOWN n0-dram");
    route_is(KS_PLATFORM_REMOTE, "n0-gpu0",
             "remote-link_UP core_DOWN n0-nic_DOWN n0-dram n0-dram n0-sw0_DOWN n0-gpu0-pcie_DOWN");

    transfers(xfers, N_XFERS);
}

static void gpudirect(void **state)
{
    (void)state;
    struct ks_platform_params p = params();
    p.core_bw = 400e9;
    p.remote_bw = 200e9;
    p.gpudirect = 1;
    load(&p);
    assert_int_equal(sg_host_count(), 2 * (1 + 4 + 2 + 1) + 1); // a network endpoint per node

    // within a node, nothing changes
    route_is("n0-gpu1", "n0-cpu", "n0-gpu1-pcie_UP n0-sw0_UP n0-dram");
    route_is("n0-gpu3", "n0-gpu0", "n0-gpu3-nvl_UP n0-gpu0-nvl_DOWN");
    // GPU to GPU between nodes: no switch uplink, no host memory
    route_is("n1-gpu2", "n0-gpu1", "n1-gpu2-pcie_UP n1-nic_UP core_DOWN n0-nic_DOWN n0-gpu1-pcie_DOWN");
    route_is("n0-gpu1", "n1-gpu2", "n0-gpu1-pcie_UP n0-nic_UP core_UP n1-nic_DOWN n1-gpu2-pcie_DOWN");
    // host memory between nodes: the links it took through the CPU gateways
    route_is("n0-cpu", "n1-cpu", "n0-dram n0-nic_UP core_UP n1-nic_DOWN n1-dram");
    route_is("n1-gpu0", "n0-cpu", "n1-gpu0-pcie_UP n1-nic_UP core_DOWN n0-nic_DOWN n0-dram");
    // an SSD of another node: its bounce buffer in its node's host memory
    route_is("n0-ssd1", "n1-cpu", "n0-ssd1-rd n0-dram n0-nic_UP core_UP n1-nic_DOWN n1-dram");
    route_is("n1-cpu", "n0-ssd1", "n1-dram n1-nic_UP core_DOWN n0-nic_DOWN n0-dram n0-ssd1-wr");
    // the remote pool straight into GPU memory
    route_is(KS_PLATFORM_REMOTE, "n0-gpu0", "remote-link_UP core_DOWN n0-nic_DOWN n0-gpu0-pcie_DOWN");
    transfers(gpudirect_xfers, sizeof gpudirect_xfers / sizeof gpudirect_xfers[0]);
}

static void bad_parameters(void **state)
{
    (void)state;
    char err[256];
    struct ks_platform_params p = params();
    p.gpus_per_switch = 0;
    assert_int_equal(ks_platform_check(&p, err, sizeof err), KS_EINVAL);
    assert_non_null(strstr(err, "gpus_per_switch"));
    p = params();
    p.pcie_lat = -1;
    assert_int_equal(ks_platform_check(&p, err, sizeof err), KS_EINVAL);
    p = params();
    p.ssd_read_bw = 0;
    assert_int_equal(ks_platform_check(&p, err, sizeof err), KS_EINVAL);
    p.ssds_per_node = 0; // no SSD: its rates do not matter
    assert_int_equal(ks_platform_check(&p, err, sizeof err), KS_OK);
    p = params();
    p.nvlink_bw = NAN;
    assert_int_equal(ks_platform_check(&p, err, sizeof err), KS_EINVAL);
    p = params();
    p.dram_bw = 0;
    assert_int_equal(ks_platform_check(&p, err, sizeof err), KS_EINVAL);
    assert_non_null(strstr(err, "host memory"));
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "gpudirect") == 0) {
        const struct CMUnitTest tests[] = {cmocka_unit_test(gpudirect)};
        return cmocka_run_group_tests(tests, NULL, NULL);
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(bad_parameters),
        cmocka_unit_test(closed_forms),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
