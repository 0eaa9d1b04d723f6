-- h200_sxm_pcie4.lua - datasheet-derived profile: NVIDIA H200 SXM 141 GB, PCIe Gen4 x16 host link, NVMe Gen4.
-- Every figure is {value, source, kind} (calib/README.md); its source names the document it
-- was read from, or says that it is an estimate or an assumption and where its number comes from.
return {
  name = "h200_sxm_pcie4",
  part = "NVIDIA H200 SXM 141 GB, PCIe Gen4 x16 host link, NVMe Gen4",
  notes = "the H200 GPU behind a Gen4 host: the host link and drives are the difference from h200_sxm_pcie5",
  hbm_bytes = {value = "143771MiB", source = "what CUDA and nvidia-smi report on an H200 SXM: memory.total 143771 MiB (150.75e9 B; the datasheet's 141 GB is about 140.4 GiB), as printed by nvidia-smi on 8xH200 nodes in several public logs found with the project's code search (2026-12-01); the capacity serving engines divide (SGLang's mem_fraction_static, vLLM's gpu_memory_utilization are shares of it)", kind = "measured (published)"},
  hbm_bw = {value = "4.296TBps", source = "`kvstrata calib gpu` on a lent H200 SXM (PCIe Gen5 x16, driver 580.159.04, in a Firecracker VM with 16 Xeon vCPUs), 2026-12-04 (results/device/2026-12-04_h200/calib_gpu.lua): one kernel reading 1 GiB of device memory once (16-byte loads, grid-stride), timed with events, median of 21 (the GPU is the same whatever its host link); the datasheet gives 4.8 TB/s (NVIDIA H200 Tensor Core GPU datasheet, H200 SXM)", kind = "measured"},
  pcie_bw = {value = "25GBps", source = "estimate, not read from a datasheet: PCIe Gen4 x16 signals 16 GT/s per lane with 128b/130b coding, ~31.5 GB/s per direction raw (PCIe 4.0 base specification); large copies are taken to reach ~80% of that, the share they reached on Gen5 x16 (~50 of ~63 GB/s, vLLM blog post on KV-cache offloading, 2025-12 (title and URL not recorded))", kind = "datasheet-derived"},
  pcie_lat = {value = "1us", source = "no published figure at hand; order of a PCIe round trip (the per-copy cost is copy_overhead)", kind = "assumed"},
  copy_overhead = {value = "6us", source = "DualPath (arXiv 2602.21548, https://arxiv.org/abs/2602.21548), sec. 5.2: a fixed cost of 5-7 us per cudaMemcpyAsync; the middle taken", kind = "measured (published)"},
  nvlink_bw = {value = "450GBps", source = "NVIDIA H100 and H200 Tensor Core GPU datasheets, SXM: NVLink 900 GB/s per GPU, both directions together; 450 GB/s per direction", kind = "datasheet"},
  gpus_per_switch = {value = 2, source = "HGX 8-GPU baseboard with two GPUs behind each PCIe switch uplink; not from a measured source", kind = "assumed"},
  l2 = {value = "2TB", source = "two-socket host, 2 TB of DDR5, as on DGX H100/H200 class nodes; not from a measured source", kind = "assumed"},
  dram_bw = {value = "614GBps", source = "two sockets x 8 channels of DDR5-4800 (38.4 GB/s each): ~614 GB/s peak; derived, not measured", kind = "datasheet-derived"},
  ssd = {
    count = {value = 8, source = "eight NVMe drives per node, as on DGX H100/H200 class nodes; not from a measured source", kind = "assumed"},
    read_bw = {value = "7GBps", source = "estimate, not read from one drive's datasheet: ~7 GB/s sequential read is what vendors' datasheets of PCIe Gen4 x4 NVMe drives give (the class, no model chosen); a sequential figure, where the simulator's reads are random blocks", kind = "datasheet-derived"},
    write_bw = {value = "3.5GBps", source = "no published figure at hand; about half the sequential read rate, as NVMe datasheets of this class give", kind = "assumed"},
    lat = {value = "80us", source = "assumed, no document named: NVMe 4 KiB random reads at queue depth 1 are reported at ~50-80 us by public sources that were judged weak and not recorded; the upper end taken", kind = "assumed"},
  },
  network = {
    topology = {value = "fat_tree", source = "a fat-tree cluster network is the common choice; not a measured figure", kind = "assumed"},
    bw = {value = "87GBps", source = "Mooncake transfer engine over 4 x 200 Gbps RoCE: ~87 GB/s, measured and published by the Mooncake project (document and URL not recorded)", kind = "measured (published)"},
    lat = {value = "5us", source = "no published figure at hand; order of an RDMA one-way latency", kind = "assumed"},
  },
  flops = {value = "990TFLOPS", source = "NVIDIA H100 and H200 Tensor Core GPU datasheets, SXM: dense BF16 Tensor Core ~990 TFLOP/s", kind = "datasheet"},
  flops_fp8 = {value = "1979TFLOPS", source = "NVIDIA H100 and H200 Tensor Core GPU datasheets, SXM: FP8 Tensor Core 3,958 TFLOP/s with 2:4 sparsity, 1,979 dense", kind = "datasheet"},
  sched_overhead = {value = "50us", source = "no published figure at hand; host-side batch scheduling per decode step of a C++ runtime with CUDA graphs, order of tens of microseconds", kind = "assumed"},
  table_rebuild = {value = "10us", source = "no published figure at hand; one small host-to-device copy of the resident-block pointer table plus its launch, about one copy_overhead", kind = "assumed"},
  prefill_efficiency = {value = 0.5, source = "no measured figure at hand; long-context prefill reaches about half of the dense peak once attention dominates", kind = "assumed"},
}
