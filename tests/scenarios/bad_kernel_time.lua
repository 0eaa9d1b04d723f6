-- bad_kernel_time.lua - a kernel-time table whose block counts go down:
-- refused before anything runs, naming the file, line and field.
return {
  name = "bad_kernel_time",
  duration = "10s",
  platform = {
    nodes = 1, gpus_per_node = 1,
    profile = {
      hbm_bytes = "141GB", hbm_bw = "2TBps", pcie_bw = "50GBps", pcie_lat = "1us", copy_overhead = "0s",
      nvlink_bw = 0, gpus_per_switch = 1, l2 = "1TiB", dram_bw = "200GBps",
      ssd = {count = 1, read_bw = "7GBps", write_bw = "3GBps", lat = "80us"},
      network = {topology = "star", bw = "25GBps", lat = "5us"},
      flops = "990TFLOPS",
      kernel_time = {blocks = {8, 4}, seconds = {1e-6, 2e-6}, batch = 1, source = "bad"},
    },
  },
  model = {layers = 32, kv_heads = 8, head_dim = 128, dtype = "fp16", weight_bytes = 0, max_context = 8192},
  -- the prompt's 4095 tokens and the first output token are in the cache at the first decode step
  workload = {arrival = {kind = "closed", concurrency = 1}, prompt_tokens = 4095, output_tokens = 2, requests = 1},
  sparse = {policy = "dense"},
  cache = {l1 = "100%", l3 = "none"},
}
