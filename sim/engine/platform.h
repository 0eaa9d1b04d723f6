// platform.h - the SimGrid platform of a scenario, generated as XML.
//
// SimGrid's C API cannot build a platform in code, so the simulator writes
// one as XML and loads it. Per node: a zone holding the CPU host (host DRAM
// sits behind it), one host per GPU, one pseudo-host per SSD. Links:
//   n<i>-dram          the host memory: every byte a device's DMA reads from
//                      or writes to it crosses it once (one link for both:
//                      reads and writes share the memory channels)
//   n<i>-gpu<k>-pcie   GPU k's PCIe link to its switch (full duplex)
//   n<i>-sw<s>         uplink of PCIe switch s, shared by gpus_per_switch GPUs
//   n<i>-gpu<k>-nvl    GPU k's NVLink port into the node's NVSwitch
//   n<i>-ssd<j>-rd/wr  SSD j's read and write paths (separate links: an SSD
//                      reads and writes at different rates)
//   n<i>-nic           the node's NIC into the cluster network
//   core               the network core every inter-node flow crosses
//   remote-link        the remote memory pool's attachment
//   prefill-link       the disaggregated prefill pool's attachment
// Routes: GPU <-> CPU over pcie + switch uplink + dram; GPU <-> GPU (same
// node) over NVLink (without NVLink peer to peer over both PCIe links, host
// memory untouched); SSD <-> CPU over ssd-rd (ssd-wr) + dram; SSD -> GPU over
// ssd-rd + dram twice + uplink + pcie (through a bounce buffer in host
// memory: written, then read), GPU -> SSD the reverse over ssd-wr; between
// nodes dram, NIC, core, NIC, dram (the NICs read and write host memory); to
// the remote pool dram, NIC, core, remote-link; from the prefill pool
// prefill-link, core, NIC, dram. A route from the remote pool or another node
// to a GPU therefore crosses the node's dram twice, as a bounce buffer does:
// SimGrid charges a link once for each time it appears in a route.
// Full-duplex links use SPLITDUPLEX sharing, so the two directions of a link
// do not share bandwidth. The simulator must run SimGrid with
//   --cfg=network/model:CM02 --cfg=network/crosstraffic:0
// so that a lone transfer takes exactly latency + bytes / bandwidth (the
// default model scales both), and --cfg=network/optim:Full: with SimGrid
// 3.32's default lazy updates, flows that start together on a shared link
// and then part for different bottlenecks leave one group unconstrained by
// its own (a prefill pool sending to four nodes at once filled three of
// them at the pool's rate; tests/engine/test_platform.c checks it). Full
// updates cost no more wall time on the shipped scenarios. KS_PLATFORM_ARGV
// holds these options: argv = {name, KS_PLATFORM_ARGV, NULL}, argc = 1 +
// KS_PLATFORM_ARGC.
//
// NOTE: inter-node routes are listed pairwise (one zoneRoute per pair of
// nodes, SimGrid reverses it for the other direction): zoneRoutes chained
// through a router zone were refused by SimGrid 3.32 ("No route"). The count
// grows as nodes^2 / 2; cluster zones are the way past a few hundred nodes.
#ifndef KS_PLATFORM_H
#define KS_PLATFORM_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define KS_PLATFORM_ARGV \
    "--cfg=network/model:CM02", "--cfg=network/crosstraffic:0", "--cfg=network/optim:Full", "--log=root.thres:critical"
#define KS_PLATFORM_ARGC 4

struct ks_platform_params {
    uint32_t nodes;
    uint32_t gpus_per_node;
    uint32_t gpus_per_switch;  // GPUs sharing one PCIe switch uplink (>= 1)
    double gpu_flops;          // flop/s, a GPU host's speed
    double cpu_flops;          // flop/s, a CPU host's speed
    double pcie_bw, pcie_lat;  // bytes/s per direction, seconds: GPU <-> switch
    double uplink_bw, uplink_lat; // bytes/s per direction, seconds: switch <-> host
    double nvlink_bw, nvlink_lat; // bytes/s per direction, seconds; bw 0 = no NVLink
    double dram_bw;            // bytes/s the host memory moves, reads plus writes, per node
    uint32_t ssds_per_node;
    double ssd_read_bw, ssd_write_bw, ssd_lat; // bytes/s, bytes/s, seconds
    double nic_bw, nic_lat;    // bytes/s per direction, seconds
    double core_bw, core_lat;  // bytes/s per direction, seconds: the network core
    int remote;                // a remote memory pool is attached
    double remote_bw, remote_lat; // bytes/s per direction, seconds
    int prefill_pool;          // a disaggregated prefill pool is attached
    double prefill_bw, prefill_lat; // bytes/s per direction, seconds: the pool's attachment
    int gpudirect;             // GPU memory reaches the NIC over the GPU's PCIe link, not through host memory
};

// Host names, written into buf (at least 32 bytes).
void ks_platform_gpu(char *buf, size_t len, uint32_t node, uint32_t gpu);
void ks_platform_cpu(char *buf, size_t len, uint32_t node);
void ks_platform_ssd(char *buf, size_t len, uint32_t node, uint32_t ssd);
void ks_platform_rdma(char *buf, size_t len, uint32_t node); // gpudirect: the node's network endpoint
#define KS_PLATFORM_REMOTE "remote"
#define KS_PLATFORM_PREFILL "prefill"

// Checks the parameters (KS_OK or KS_EINVAL with the reason in err).
int ks_platform_check(const struct ks_platform_params *p, char *err, size_t len);

// Writes the platform as SimGrid XML. KS_OK, KS_EINVAL (bad parameters) or
// KS_EIO (the stream refused a write), with the reason in err.
int ks_platform_write(const struct ks_platform_params *p, FILE *f, char *err, size_t len);

// Writes the platform to a temporary file, has SimGrid load it (after
// simgrid_init) and removes the file. KS_OK or a status with err filled.
int ks_platform_load(const struct ks_platform_params *p, char *err, size_t len);

#endif
