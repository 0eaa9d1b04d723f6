-- h200_sxm_pcie5.lua - datasheet-derived profile: NVIDIA H200 SXM 141 GB, PCIe Gen5 x16 host link, NVMe Gen5.
-- Every figure is {value, source, kind} (calib/README.md); its source names the document it
-- was read from, or says that it is an estimate or an assumption and where its number comes from.
return {
  name = "h200_sxm_pcie5",
  part = "NVIDIA H200 SXM 141 GB, PCIe Gen5 x16 host link, NVMe Gen5",
  notes = "8-GPU HGX node. hbm_bw is the datasheet's 4.8 TB/s; a device-to-device copy on an H200 SXM was recorded at ~4.3 TB/s (8.6 GB read + written in 2.0 ms), with no publication to cite, so it is not used here",
  hbm_bytes = {value = "143771MiB", source = "what CUDA and nvidia-smi report on an H200 SXM: memory.total 143771 MiB (150.75e9 B; the datasheet's 141 GB is about 140.4 GiB), as printed by nvidia-smi on 8xH200 nodes in several public logs found with the project's code search (2026-12-01); the capacity serving engines divide (SGLang's mem_fraction_static, vLLM's gpu_memory_utilization are shares of it)", kind = "measured (published)"},
  hbm_bw = {value = "4.8TBps", source = "NVIDIA H200 Tensor Core GPU datasheet, H200 SXM: 4.8 TB/s", kind = "datasheet"},
  pcie_bw = {value = "50GBps", source = "PCIe Gen5 x16 on an H100, large copies, one direction: ~50 GB/s (~83 GB/s both directions at once through the copy engine); vLLM blog post on KV-cache offloading, 2025-12 (title and URL not recorded)", kind = "measured (published)"},
  pcie_lat = {value = "1us", source = "no published figure at hand; order of a PCIe round trip (the per-copy cost is copy_overhead)", kind = "assumed"},
  copy_overhead = {value = "6us", source = "DualPath (arXiv 2602.21548, https://arxiv.org/abs/2602.21548), sec. 5.2: a fixed cost of 5-7 us per cudaMemcpyAsync; the middle taken", kind = "measured (published)"},
  copy_item_h2d = {value = "0.83us", source = "ESS (Chen et al., arXiv 2512.10576; read in a summary, PUBLISHED.md section 2): cudaMemcpyAsync per 656 B item over PCIe Gen5 reaches 0.79 GB/s host-to-device: 656 B / 0.79 GB/s", kind = "measured (published)"},
  copy_item_d2h = {value = "2.85us", source = "ESS (arXiv 2512.10576; read in a summary, PUBLISHED.md section 2): 0.23 GB/s device-to-host for 656 B items: 656 B / 0.23 GB/s", kind = "measured (published)"},
  gather_h2d_bw = {value = "37GBps", source = "ESS (arXiv 2512.10576; read in a summary, PUBLISHED.md section 2): a gather kernel over unified virtual addressing, 656 B items, PCIe Gen5: 37 GB/s host-to-device", kind = "measured (published)"},
  gather_d2h_bw = {value = "43GBps", source = "ESS (arXiv 2512.10576; read in a summary, PUBLISHED.md section 2): the same kernel, device-to-host: 43 GB/s", kind = "measured (published)"},
  host_read_lat = {value = "1us", source = "no published measurement at hand; a GPU load from pinned host memory over PCIe returns in the order of a microsecond (a round trip through the switch and the root complex plus a DRAM access), the order pcie_lat takes too; used only where a scenario limits a gather kernel's warps per request (cache.gather_warps)", kind = "assumed"},
  nvlink_bw = {value = "450GBps", source = "NVIDIA H100 and H200 Tensor Core GPU datasheets, SXM: NVLink 900 GB/s per GPU, both directions together; 450 GB/s per direction", kind = "datasheet"},
  gpus_per_switch = {value = 2, source = "HGX 8-GPU baseboard with two GPUs behind each PCIe switch uplink; not from a measured source", kind = "assumed"},
  l2 = {value = "2TB", source = "two-socket host, 2 TB of DDR5, as on DGX H100/H200 class nodes; not from a measured source", kind = "assumed"},
  dram_bw = {value = "614GBps", source = "two sockets x 8 channels of DDR5-4800 (38.4 GB/s each): ~614 GB/s peak; derived, not measured", kind = "datasheet-derived"},
  ssd = {
    count = {value = 8, source = "eight NVMe drives per node, as on DGX H100/H200 class nodes; not from a measured source", kind = "assumed"},
    read_bw = {value = "14GBps", source = "estimate, not read from one drive's datasheet: ~14 GB/s sequential read is what vendors' datasheets of PCIe Gen5 x4 NVMe drives give (the class, no model chosen); a sequential figure, where the simulator's reads are random blocks", kind = "datasheet-derived"},
    write_bw = {value = "7GBps", source = "no published figure at hand; about half the sequential read rate, as NVMe datasheets of this class give", kind = "assumed"},
    lat = {value = "80us", source = "assumed, no document named: NVMe 4 KiB random reads at queue depth 1 are reported at ~50-80 us by public sources that were judged weak and not recorded; the upper end taken", kind = "assumed"},
  },
  network = {
    topology = {value = "fat_tree", source = "a fat-tree cluster network is the common choice; not a measured figure", kind = "assumed"},
    bw = {value = "190GBps", source = "Mooncake transfer engine over 8 x 400 Gbps RoCE: ~190 GB/s, measured and published by the Mooncake project (document and URL not recorded)", kind = "measured (published)"},
    lat = {value = "5us", source = "no published figure at hand; order of an RDMA one-way latency", kind = "assumed"},
  },
  flops = {value = "990TFLOPS", source = "NVIDIA H100 and H200 Tensor Core GPU datasheets, SXM: dense BF16 Tensor Core ~990 TFLOP/s", kind = "datasheet"},
  flops_fp8 = {value = "1979TFLOPS", source = "NVIDIA H100 and H200 Tensor Core GPU datasheets, SXM: FP8 Tensor Core 3,958 TFLOP/s with 2:4 sparsity, 1,979 dense", kind = "datasheet"},
  sched_overhead = {value = "50us", source = "no published figure at hand; host-side batch scheduling per decode step of a C++ runtime with CUDA graphs, order of tens of microseconds", kind = "assumed"},
  table_rebuild = {value = "10us", source = "no published figure at hand; one small host-to-device copy of the resident-block pointer table plus its launch, about one copy_overhead", kind = "assumed"},
  prefill_efficiency = {value = 0.5, source = "no measured figure at hand; long-context prefill reaches about half of the dense peak once attention dominates", kind = "assumed"},
}
