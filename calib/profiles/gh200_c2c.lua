-- gh200_c2c.lua - datasheet-derived profile: NVIDIA GH200 Grace Hopper superchip, NVLink-C2C host link.
-- Every figure is {value, source, kind}; see calib/README.md. Sources are the ones
-- collected in the team's HARDWARE.md unless the source says otherwise.
return {
  name = "gh200_c2c",
  part = "NVIDIA GH200 Grace Hopper superchip, NVLink-C2C host link",
  notes = "one GPU per node (set platform.gpus_per_node = 1); pcie_bw is the C2C host->GPU rate",
  hbm_bytes = {value = "144GB", source = "NVIDIA GH200 datasheet: up to 144 GB HBM3e (not in HARDWARE.md)", kind = "datasheet"},
  hbm_bw = {value = "4.9TBps", source = "NVIDIA GH200 datasheet: up to 4.9 TB/s HBM3e (not in HARDWARE.md)", kind = "datasheet"},
  pcie_bw = {value = "377GBps", source = "GH200 NVLink-C2C, local socket: host->GPU 377-380 GB/s, GPU->host 297-298 GB/s (spec 450 per direction); public GH200 benchmarking write-up, 2026-04", kind = "measured (published)"},
  pcie_lat = {value = "1us", source = "no published figure at hand; order of a PCIe round trip (the per-copy cost is copy_overhead)", kind = "assumed"},
  copy_overhead = {value = "6us", source = "fixed cost per cudaMemcpyAsync: 5-7 us (DualPath, arXiv 2602.21548, sec. 5.2)", kind = "measured (published)"},
  nvlink_bw = {value = "450GBps", source = "NVLink 4 (H100/H200 SXM): 900 GB/s total per GPU, 450 GB/s per direction (NVIDIA datasheet)", kind = "datasheet"},
  gpus_per_switch = {value = 1, source = "one Grace Hopper superchip per C2C link: no shared switch uplink", kind = "datasheet-derived"},
  l2 = {value = "480GB", source = "NVIDIA GH200 datasheet: Grace with up to 480 GB LPDDR5X (not in HARDWARE.md)", kind = "datasheet"},
  dram_bw = {value = "500GBps", source = "NVIDIA GH200 datasheet: LPDDR5X up to ~500 GB/s (not in HARDWARE.md)", kind = "datasheet"},
  ssd = {
    count = {value = 1, source = "one NVMe drive per superchip node; not from a measured source", kind = "assumed"},
    read_bw = {value = "14GBps", source = "NVMe Gen5: ~14 GB/s sequential read per drive (datasheet class)", kind = "datasheet"},
    write_bw = {value = "7GBps", source = "no published figure at hand; about half the sequential read rate, as NVMe datasheets of this class give", kind = "assumed"},
    lat = {value = "80us", source = "NVMe 4 KiB random read at QD1: ~50-80 us (weak public sources)", kind = "measured (published)"},
  },
  network = {
    topology = {value = "fat_tree", source = "a fat-tree cluster network is the common choice; not a measured figure", kind = "assumed"},
    bw = {value = "190GBps", source = "Mooncake transfer engine, 8x400 Gbps RoCE: ~190 GB/s (measured, Mooncake)", kind = "measured (published)"},
    lat = {value = "5us", source = "no published figure at hand; order of an RDMA one-way latency", kind = "assumed"},
  },
  flops = {value = "990TFLOPS", source = "H100/H200 SXM dense BF16: ~990 TFLOP/s (NVIDIA datasheet)", kind = "datasheet"},
  sched_overhead = {value = "50us", source = "no published figure at hand; host-side batch scheduling per decode step of a C++ runtime with CUDA graphs, order of tens of microseconds", kind = "assumed"},
  table_rebuild = {value = "10us", source = "no published figure at hand; one small host-to-device copy of the resident-block pointer table plus its launch, about one copy_overhead", kind = "assumed"},
  prefill_efficiency = {value = 0.5, source = "no measured figure at hand; long-context prefill reaches about half of the dense peak once attention dominates", kind = "assumed"},
}
