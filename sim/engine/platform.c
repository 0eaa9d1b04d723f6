// platform.c - SimGrid platform XML from platform parameters (see platform.h).
#define _POSIX_C_SOURCE 200809L // mkstemp, fdopen

#include "platform.h"

#include <math.h>
#include <simgrid/engine.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "status.h"

void ks_platform_gpu(char *buf, size_t len, uint32_t node, uint32_t gpu)
{
    snprintf(buf, len, "n%u-gpu%u", node, gpu);
}

void ks_platform_cpu(char *buf, size_t len, uint32_t node)
{
    snprintf(buf, len, "n%u-cpu", node);
}

void ks_platform_rdma(char *buf, size_t len, uint32_t node)
{
    snprintf(buf, len, "n%u-rdma", node);
}

void ks_platform_ssd(char *buf, size_t len, uint32_t node, uint32_t ssd)
{
    snprintf(buf, len, "n%u-ssd%u", node, ssd);
}

static int bad(char *err, size_t len, const char *what)
{
    if (err)
        snprintf(err, len, "platform: %s", what);
    return KS_EINVAL;
}

static int positive(double x)
{
    return isfinite(x) && x > 0;
}

static int non_negative(double x)
{
    return isfinite(x) && x >= 0;
}

int ks_platform_check(const struct ks_platform_params *p, char *err, size_t len)
{
    if (p->nodes == 0 || p->gpus_per_node == 0)
        return bad(err, len, "nodes and gpus_per_node must be at least 1");
    if (p->nodes > 100000 || p->gpus_per_node > 1024 || p->ssds_per_node > 1024)
        return bad(err, len, "more than 100000 nodes, 1024 GPUs or 1024 SSDs per node");
    if (p->gpus_per_switch == 0)
        return bad(err, len, "gpus_per_switch must be at least 1");
    if (!positive(p->gpu_flops) || !positive(p->cpu_flops))
        return bad(err, len, "host speeds must be positive");
    if (!positive(p->pcie_bw) || !positive(p->uplink_bw) || !positive(p->nic_bw) || !positive(p->core_bw) ||
        !positive(p->dram_bw))
        return bad(err, len, "pcie, uplink, nic, core and host memory bandwidths must be positive");
    if (!non_negative(p->pcie_lat) || !non_negative(p->uplink_lat) || !non_negative(p->nic_lat) ||
        !non_negative(p->core_lat) || !non_negative(p->nvlink_lat) || !non_negative(p->ssd_lat) ||
        !non_negative(p->remote_lat))
        return bad(err, len, "latencies must be finite and not negative");
    if (!non_negative(p->nvlink_bw))
        return bad(err, len, "nvlink bandwidth must be finite and not negative (0: none)");
    if (p->ssds_per_node && (!positive(p->ssd_read_bw) || !positive(p->ssd_write_bw)))
        return bad(err, len, "SSD read and write bandwidths must be positive");
    if (p->remote && !positive(p->remote_bw))
        return bad(err, len, "remote pool bandwidth must be positive");
    if (p->prefill_pool && (!positive(p->prefill_bw) || !non_negative(p->prefill_lat)))
        return bad(err, len, "prefill pool bandwidth must be positive and its latency not negative");
    return KS_OK;
}

// Link with a bandwidth in bytes/s and a latency in seconds, exactly.
static void put_link(FILE *f, const char *id, double bw, double lat, int duplex)
{
    fprintf(f, "    <link id=\"%s\" bandwidth=\"%.17gBps\" latency=\"%.17gs\"%s/>\n", id, bw, lat,
            duplex ? " sharing_policy=\"SPLITDUPLEX\"" : "");
}

static void ctn(FILE *f, const char *id, const char *dir)
{
    if (dir)
        fprintf(f, "<link_ctn id=\"%s\" direction=\"%s\"/>", id, dir);
    else
        fprintf(f, "<link_ctn id=\"%s\"/>", id);
}

// platform.gpudirect: the node's network endpoint, the gateway of its routes to
// other nodes. A GPU reaches it over its own PCIe link (GPUDirect RDMA: the
// NIC sits behind the GPU's switch), the CPU through host memory, an SSD
// through a bounce buffer in host memory.
static void rdma_routes(FILE *f, const struct ks_platform_params *p, uint32_t n, const char *mem)
{
    char rdma[32], a[32], l[48];
    ks_platform_rdma(rdma, sizeof rdma, n);
    ks_platform_cpu(a, sizeof a, n);
    fprintf(f, "    <route src=\"%s\" dst=\"%s\">", a, rdma);
    ctn(f, mem, NULL);
    fprintf(f, "</route>\n");
    for (uint32_t g = 0; g < p->gpus_per_node; g++) {
        ks_platform_gpu(a, sizeof a, n, g);
        snprintf(l, sizeof l, "n%u-gpu%u-pcie", n, g);
        fprintf(f, "    <route src=\"%s\" dst=\"%s\">", a, rdma);
        ctn(f, l, "UP");
        fprintf(f, "</route>\n");
    }
    for (uint32_t s = 0; s < p->ssds_per_node; s++) {
        ks_platform_ssd(a, sizeof a, n, s);
        snprintf(l, sizeof l, "n%u-ssd%u-rd", n, s);
        fprintf(f, "    <route src=\"%s\" dst=\"%s\" symmetrical=\"NO\">", a, rdma);
        ctn(f, l, NULL);
        ctn(f, mem, NULL);
        snprintf(l, sizeof l, "n%u-ssd%u-wr", n, s);
        fprintf(f, "</route>\n    <route src=\"%s\" dst=\"%s\" symmetrical=\"NO\">", rdma, a);
        ctn(f, mem, NULL);
        ctn(f, l, NULL);
        fprintf(f, "</route>\n");
    }
}

static void node_zone(FILE *f, const struct ks_platform_params *p, uint32_t n)
{
    char cpu[32], a[32], b[32], l1[48], l2[48], l3[48], l4[48], mem[48];
    ks_platform_cpu(cpu, sizeof cpu, n);
    snprintf(mem, sizeof mem, "n%u-dram", n);
    fprintf(f, "  <zone id=\"n%u\" routing=\"Full\">\n", n);
    fprintf(f, "    <host id=\"%s\" speed=\"%.17gf\"/>\n", cpu, p->cpu_flops);
    if (p->gpudirect) {
        ks_platform_rdma(a, sizeof a, n);
        fprintf(f, "    <host id=\"%s\" speed=\"1f\"/>\n", a);
    }
    for (uint32_t g = 0; g < p->gpus_per_node; g++) {
        ks_platform_gpu(a, sizeof a, n, g);
        fprintf(f, "    <host id=\"%s\" speed=\"%.17gf\"/>\n", a, p->gpu_flops);
    }
    for (uint32_t s = 0; s < p->ssds_per_node; s++) {
        ks_platform_ssd(a, sizeof a, n, s);
        fprintf(f, "    <host id=\"%s\" speed=\"1f\"/>\n", a);
    }
    uint32_t switches = (p->gpus_per_node + p->gpus_per_switch - 1) / p->gpus_per_switch;
    put_link(f, mem, p->dram_bw, 0, 0);
    for (uint32_t g = 0; g < p->gpus_per_node; g++) {
        snprintf(l1, sizeof l1, "n%u-gpu%u-pcie", n, g);
        put_link(f, l1, p->pcie_bw, p->pcie_lat, 1);
        if (p->nvlink_bw > 0) {
            snprintf(l1, sizeof l1, "n%u-gpu%u-nvl", n, g);
            put_link(f, l1, p->nvlink_bw, p->nvlink_lat, 1);
        }
    }
    for (uint32_t s = 0; s < switches; s++) {
        snprintf(l1, sizeof l1, "n%u-sw%u", n, s);
        put_link(f, l1, p->uplink_bw, p->uplink_lat, 1);
    }
    for (uint32_t s = 0; s < p->ssds_per_node; s++) {
        snprintf(l1, sizeof l1, "n%u-ssd%u-rd", n, s);
        put_link(f, l1, p->ssd_read_bw, p->ssd_lat, 0);
        snprintf(l1, sizeof l1, "n%u-ssd%u-wr", n, s);
        put_link(f, l1, p->ssd_write_bw, p->ssd_lat, 0);
    }
    // GPU <-> CPU, and GPU <-> GPU (NVLink when there is one, else via the host)
    for (uint32_t g = 0; g < p->gpus_per_node; g++) {
        ks_platform_gpu(a, sizeof a, n, g);
        snprintf(l1, sizeof l1, "n%u-gpu%u-pcie", n, g);
        snprintf(l2, sizeof l2, "n%u-sw%u", n, g / p->gpus_per_switch);
        fprintf(f, "    <route src=\"%s\" dst=\"%s\">", a, cpu);
        ctn(f, l1, "UP");
        ctn(f, l2, "UP");
        ctn(f, mem, NULL);
        fprintf(f, "</route>\n");
        for (uint32_t h = g + 1; h < p->gpus_per_node; h++) {
            ks_platform_gpu(b, sizeof b, n, h);
            fprintf(f, "    <route src=\"%s\" dst=\"%s\">", a, b);
            if (p->nvlink_bw > 0) {
                snprintf(l3, sizeof l3, "n%u-gpu%u-nvl", n, g);
                snprintf(l4, sizeof l4, "n%u-gpu%u-nvl", n, h);
                ctn(f, l3, "UP");
                ctn(f, l4, "DOWN");
            } else {
                snprintf(l3, sizeof l3, "n%u-gpu%u-pcie", n, h);
                snprintf(l4, sizeof l4, "n%u-sw%u", n, h / p->gpus_per_switch);
                ctn(f, l1, "UP");
                if (g / p->gpus_per_switch != h / p->gpus_per_switch) {
                    ctn(f, l2, "UP");
                    ctn(f, l4, "DOWN");
                }
                ctn(f, l3, "DOWN");
            }
            fprintf(f, "</route>\n");
        }
    }
    // SSDs: reads and writes take different links, so each direction is its own route
    for (uint32_t s = 0; s < p->ssds_per_node; s++) {
        ks_platform_ssd(a, sizeof a, n, s);
        snprintf(l3, sizeof l3, "n%u-ssd%u-rd", n, s);
        snprintf(l4, sizeof l4, "n%u-ssd%u-wr", n, s);
        fprintf(f, "    <route src=\"%s\" dst=\"%s\" symmetrical=\"NO\">", a, cpu);
        ctn(f, l3, NULL);
        ctn(f, mem, NULL);
        fprintf(f, "</route>\n    <route src=\"%s\" dst=\"%s\" symmetrical=\"NO\">", cpu, a);
        ctn(f, mem, NULL);
        ctn(f, l4, NULL);
        fprintf(f, "</route>\n");
        for (uint32_t g = 0; g < p->gpus_per_node; g++) {
            ks_platform_gpu(b, sizeof b, n, g);
            snprintf(l1, sizeof l1, "n%u-gpu%u-pcie", n, g);
            snprintf(l2, sizeof l2, "n%u-sw%u", n, g / p->gpus_per_switch);
            // through a bounce buffer in host memory: written there, then read
            fprintf(f, "    <route src=\"%s\" dst=\"%s\" symmetrical=\"NO\">", a, b);
            ctn(f, l3, NULL);
            ctn(f, mem, NULL);
            ctn(f, mem, NULL);
            ctn(f, l2, "DOWN");
            ctn(f, l1, "DOWN");
            fprintf(f, "</route>\n    <route src=\"%s\" dst=\"%s\" symmetrical=\"NO\">", b, a);
            ctn(f, l1, "UP");
            ctn(f, l2, "UP");
            ctn(f, mem, NULL);
            ctn(f, mem, NULL);
            ctn(f, l4, NULL);
            fprintf(f, "</route>\n");
        }
    }
    if (p->gpudirect)
        rdma_routes(f, p, n, mem);
    fprintf(f, "  </zone>\n");
}

// Node n's gateway to other nodes and pools: its CPU, or with gpudirect its network endpoint.
static void gateway(char *buf, size_t len, const struct ks_platform_params *p, uint32_t n)
{
    if (p->gpudirect)
        ks_platform_rdma(buf, len, n);
    else
        ks_platform_cpu(buf, len, n);
}

int ks_platform_write(const struct ks_platform_params *p, FILE *f, char *err, size_t len)
{
    int st = ks_platform_check(p, err, len);
    if (st != KS_OK)
        return st;
    fprintf(f, "<?xml version='1.0'?>\n<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n");
    fprintf(f, "<!-- generated by kvstrata (sim/engine/platform.c) -->\n<platform version=\"4.1\">\n");
    fprintf(f, "<zone id=\"cluster\" routing=\"Full\">\n");
    for (uint32_t n = 0; n < p->nodes; n++)
        node_zone(f, p, n);
    if (p->remote) {
        fprintf(f, "  <zone id=\"remote-pool\" routing=\"Full\">\n");
        fprintf(f, "    <host id=\"%s\" speed=\"1f\"/>\n  </zone>\n", KS_PLATFORM_REMOTE);
    }
    if (p->prefill_pool) {
        fprintf(f, "  <zone id=\"prefill-pool\" routing=\"Full\">\n");
        fprintf(f, "    <host id=\"%s\" speed=\"1f\"/>\n  </zone>\n", KS_PLATFORM_PREFILL);
    }
    char l1[48], l2[48], ma[48], mb[48], ga[32], gb[32];
    for (uint32_t n = 0; n < p->nodes; n++) {
        snprintf(l1, sizeof l1, "n%u-nic", n);
        put_link(f, l1, p->nic_bw, p->nic_lat, 1);
    }
    int inter = p->nodes > 1 || p->remote || p->prefill_pool;
    if (inter)
        put_link(f, "core", p->core_bw, p->core_lat, 1);
    if (p->remote)
        put_link(f, "remote-link", p->remote_bw, p->remote_lat, 1);
    if (p->prefill_pool)
        put_link(f, "prefill-link", p->prefill_bw, p->prefill_lat, 1);
    // between nodes through their gateways: each node's CPU (host memory on
    // both ends of the route), or with gpudirect its network endpoint
    // (rdma_routes: host memory, when it is on the path, is there)
    for (uint32_t a = 0; a < p->nodes; a++) {
        snprintf(l1, sizeof l1, "n%u-nic", a);
        snprintf(ma, sizeof ma, "n%u-dram", a);
        gateway(ga, sizeof ga, p, a);
        const char *mem_a = p->gpudirect ? NULL : ma;
        for (uint32_t b = a + 1; b < p->nodes; b++) {
            snprintf(l2, sizeof l2, "n%u-nic", b);
            snprintf(mb, sizeof mb, "n%u-dram", b);
            gateway(gb, sizeof gb, p, b);
            fprintf(f, "  <zoneRoute src=\"n%u\" dst=\"n%u\" gw_src=\"%s\" gw_dst=\"%s\">", a, b, ga, gb);
            if (mem_a)
                ctn(f, ma, NULL);
            ctn(f, l1, "UP");
            ctn(f, "core", "UP");
            ctn(f, l2, "DOWN");
            if (mem_a)
                ctn(f, mb, NULL);
            fprintf(f, "</zoneRoute>\n");
        }
        if (p->remote) {
            fprintf(f, "  <zoneRoute src=\"n%u\" dst=\"remote-pool\" gw_src=\"%s\" gw_dst=\"%s\">", a, ga,
                    KS_PLATFORM_REMOTE);
            if (mem_a)
                ctn(f, ma, NULL);
            ctn(f, l1, "UP");
            ctn(f, "core", "UP");
            ctn(f, "remote-link", "DOWN");
            fprintf(f, "</zoneRoute>\n");
        }
        if (p->prefill_pool) { // pool -> node: the pool's link, the core, the node's NIC
            fprintf(f, "  <zoneRoute src=\"prefill-pool\" dst=\"n%u\" gw_src=\"%s\" gw_dst=\"%s\">",
                    a, KS_PLATFORM_PREFILL, ga);
            ctn(f, "prefill-link", "UP");
            ctn(f, "core", "UP");
            ctn(f, l1, "DOWN");
            if (mem_a)
                ctn(f, ma, NULL);
            fprintf(f, "</zoneRoute>\n");
        }
    }
    fprintf(f, "</zone>\n</platform>\n");
    if (fflush(f) != 0 || ferror(f)) {
        if (err)
            snprintf(err, len, "platform: cannot write the XML");
        return KS_EIO;
    }
    return KS_OK;
}

int ks_platform_load(const struct ks_platform_params *p, char *err, size_t len)
{
    char path[] = "/tmp/kvstrata-platform-XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0) {
        if (err)
            snprintf(err, len, "platform: cannot create a temporary file in /tmp");
        return KS_EIO;
    }
    FILE *f = fdopen(fd, "w");
    if (!f) {
        close(fd);
        unlink(path);
        if (err)
            snprintf(err, len, "platform: cannot open %s", path);
        return KS_EIO;
    }
    int st = ks_platform_write(p, f, err, len);
    if (fclose(f) != 0 && st == KS_OK) {
        if (err)
            snprintf(err, len, "platform: cannot write %s", path);
        st = KS_EIO;
    }
    if (st == KS_OK)
        simgrid_load_platform(path);
    unlink(path);
    return st;
}
