-- h100_sxm_pcie5.lua - datasheet-derived profile: NVIDIA H100 SXM 80 GB, PCIe Gen5 x16 host link, NVMe Gen5.
-- Every figure is {value, source, kind}; see calib/README.md. Sources are the ones
-- collected in the team's HARDWARE.md unless the source says otherwise.
return {
  name = "h100_sxm_pcie5",
  part = "NVIDIA H100 SXM 80 GB, PCIe Gen5 x16 host link, NVMe Gen5",
  notes = "8-GPU HGX node",
  hbm_bytes = {value = "80GB", source = "NVIDIA H100 SXM datasheet: 80 GB HBM3", kind = "datasheet"},
  hbm_bw = {value = "3.35TBps", source = "NVIDIA H100 SXM datasheet: 3.35 TB/s", kind = "datasheet"},
  pcie_bw = {value = "50GBps", source = "PCIe Gen5 x16 on H100, large copies, one direction: ~50 GB/s (vLLM KV-offloading blog, 2025-12)", kind = "measured (published)"},
  pcie_lat = {value = "1us", source = "no published figure at hand; order of a PCIe round trip (the per-copy cost is copy_overhead)", kind = "assumed"},
  copy_overhead = {value = "6us", source = "fixed cost per cudaMemcpyAsync: 5-7 us (DualPath, arXiv 2602.21548, sec. 5.2)", kind = "measured (published)"},
  nvlink_bw = {value = "450GBps", source = "NVLink 4 (H100/H200 SXM): 900 GB/s total per GPU, 450 GB/s per direction (NVIDIA datasheet)", kind = "datasheet"},
  gpus_per_switch = {value = 2, source = "HGX 8-GPU baseboard with two GPUs behind each PCIe switch uplink; not from a measured source", kind = "assumed"},
  l2 = {value = "2TB", source = "two-socket host, 2 TB of DDR5, as on DGX H100/H200 class nodes; not from a measured source", kind = "assumed"},
  dram_bw = {value = "614GBps", source = "two sockets x 8 channels of DDR5-4800 (38.4 GB/s each): ~614 GB/s peak; derived, not measured", kind = "datasheet-derived"},
  ssd = {
    count = {value = 8, source = "eight NVMe drives per node, as on DGX H100/H200 class nodes; not from a measured source", kind = "assumed"},
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
