-- an inline profile: plain values and one figure with its source
return {
  platform = {
    profile = {
      hbm_bytes = "80GB", hbm_bw = "2TBps", pcie_bw = "25GBps", pcie_lat = "1us", copy_overhead = "6us",
      nvlink_bw = 0, gpus_per_switch = 2, l2 = "1TiB", dram_bw = "200GBps",
      ssd = {count = 0, read_bw = "7GBps", write_bw = "3GBps", lat = "80us"},
      network = {topology = "star", bw = "25GBps", lat = "5us"},
      remote = {bw = "50GBps", lat = "10us", bytes = "8TiB"},
      flops = {value = "312TFLOPS", source = "A100 datasheet", kind = "datasheet"},
    },
    gpus_per_node = 4,
  },
  cache = {l3 = "remote", l1 = "40GiB", l2 = "512GiB"},
}
