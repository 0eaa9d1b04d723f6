-- gh200_c2c.lua - datasheet-derived profile: NVIDIA GH200 Grace Hopper superchip, NVLink-C2C host link.
-- Every figure is {value, source, kind} (calib/README.md); its source names the document it
-- was read from, or says that it is an estimate or an assumption and where its number comes from.
return {
  name = "gh200_c2c",
  part = "NVIDIA GH200 Grace Hopper superchip, NVLink-C2C host link",
  notes = "one GPU per node (set platform.gpus_per_node = 1); pcie_bw is the C2C host->GPU rate",
  hbm_bytes = {value = "144GB", source = "NVIDIA GH200 Grace Hopper Superchip datasheet: up to 144 GB HBM3e", kind = "datasheet"},
  hbm_bw = {value = "4.9TBps", source = "NVIDIA GH200 Grace Hopper Superchip datasheet: up to 4.9 TB/s HBM3e", kind = "datasheet"},
  pcie_bw = {value = "377GBps", source = "GH200 NVLink-C2C, local socket: host->GPU 377-380 GB/s, GPU->host 297-298 GB/s (450 per direction in the specification), the other socket ~133 GB/s; a public GH200 benchmarking write-up, 2026-04 (title and URL not recorded)", kind = "measured (published)"},
  pcie_lat = {value = "1us", source = "no published figure at hand; order of a PCIe round trip (the per-copy cost is copy_overhead)", kind = "assumed"},
  host_read_lat = {value = "1us", source = "no published measurement at hand; taken as the PCIe profiles' 1 us (a GPU load from host memory returns in the order of a microsecond); NVLink-C2C may well be faster; used only where a scenario limits a gather kernel's warps per request (cache.gather_warps)", kind = "assumed"},
  gather_h2d_bw = {value = "97GBps", source = "SGLang issue #40278 (PUBLISHED.md section 5): on GB300, whose GPU reaches Grace's memory over NVLink-C2C as GH200's does, a register gather kernel moves 512 B rows host-to-device at 73 GB/s (2048 rows), 89 (8192), 97 (32768); the large-batch figure taken for GH200 (an older C2C generation: this may flatter it)", kind = "measured (published)"},
  gather_d2h_bw = {value = "97GBps", source = "no published device-to-host figure for a gather kernel over C2C at hand; the host-to-device figure taken (writes to host are posted)", kind = "assumed"},
  copy_overhead = {value = "6us", source = "DualPath (arXiv 2602.21548, https://arxiv.org/abs/2602.21548), sec. 5.2: a fixed cost of 5-7 us per cudaMemcpyAsync; the middle taken", kind = "measured (published)"},
  nvlink_bw = {value = "450GBps", source = "estimate, not read from a GH200 document: the H100/H200 SXM figure (NVIDIA H100 and H200 Tensor Core GPU datasheets: NVLink 900 GB/s per GPU, 450 GB/s per direction), taken for GH200's Hopper GPU", kind = "datasheet-derived"},
  gpus_per_switch = {value = 1, source = "one Grace Hopper superchip per C2C link: no shared switch uplink", kind = "datasheet-derived"},
  l2 = {value = "480GB", source = "NVIDIA GH200 Grace Hopper Superchip datasheet: Grace with up to 480 GB LPDDR5X", kind = "datasheet"},
  dram_bw = {value = "500GBps", source = "NVIDIA GH200 Grace Hopper Superchip datasheet: LPDDR5X bandwidth up to ~500 GB/s", kind = "datasheet"},
  ssd = {
    count = {value = 1, source = "one NVMe drive per superchip node; not from a measured source", kind = "assumed"},
    read_bw = {value = "14GBps", source = "estimate, not read from one drive's datasheet: ~14 GB/s sequential read is what vendors' datasheets of PCIe Gen5 x4 NVMe drives give (the class, no model chosen); a sequential figure, where the simulator's reads are random blocks", kind = "datasheet-derived"},
    write_bw = {value = "7GBps", source = "no published figure at hand; about half the sequential read rate, as NVMe datasheets of this class give", kind = "assumed"},
    lat = {value = "80us", source = "assumed, no document named: NVMe 4 KiB random reads at queue depth 1 are reported at ~50-80 us by public sources that were judged weak and not recorded; the upper end taken", kind = "assumed"},
  },
  network = {
    topology = {value = "fat_tree", source = "a fat-tree cluster network is the common choice; not a measured figure", kind = "assumed"},
    bw = {value = "190GBps", source = "Mooncake transfer engine over 8 x 400 Gbps RoCE: ~190 GB/s, measured and published by the Mooncake project (document and URL not recorded)", kind = "measured (published)"},
    lat = {value = "5us", source = "no published figure at hand; order of an RDMA one-way latency", kind = "assumed"},
  },
  flops = {value = "990TFLOPS", source = "estimate, not read from a GH200 document: the H100/H200 SXM datasheets' dense BF16 Tensor Core ~990 TFLOP/s (NVIDIA H100 and H200 Tensor Core GPU datasheets), taken for GH200's Hopper GPU", kind = "datasheet-derived"},
  flops_fp8 = {value = "1979TFLOPS", source = "estimate, not read from a GH200 document: the H100/H200 SXM datasheets' dense FP8 Tensor Core 1,979 TFLOP/s (3,958 with 2:4 sparsity), taken for GH200's Hopper GPU", kind = "datasheet-derived"},
  sched_overhead = {value = "50us", source = "no published figure at hand; host-side batch scheduling per decode step of a C++ runtime with CUDA graphs, order of tens of microseconds", kind = "assumed"},
  table_rebuild = {value = "10us", source = "no published figure at hand; one small host-to-device copy of the resident-block pointer table plus its launch, about one copy_overhead", kind = "assumed"},
  prefill_efficiency = {value = 0.5, source = "no measured figure at hand; long-context prefill reaches about half of the dense peak once attention dominates", kind = "assumed"},
}
