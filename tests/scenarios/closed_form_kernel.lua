-- The closed form with a measured kernel-time table: one request, everything
-- resident, no weights. The table says one layer of attention over k
-- selected blocks takes k us (batch 1); the step reads 4096 tokens = 128
-- blocks in each of 32 layers: 32 x 128 us = 4.096 ms per output token.
return {
  name = "closed_form_kernel",
  duration = "10s",
  platform = {
    nodes = 1, gpus_per_node = 1,
    profile = {
      hbm_bytes = "141GB", hbm_bw = "2TBps", pcie_bw = "50GBps", pcie_lat = "1us", copy_overhead = "0s",
      nvlink_bw = 0, gpus_per_switch = 1, l2 = "1TiB", dram_bw = "200GBps",
      ssd = {count = 1, read_bw = "7GBps", write_bw = "3GBps", lat = "80us"},
      network = {topology = "star", bw = "25GBps", lat = "5us"},
      flops = "990TFLOPS",
      kernel_time = {blocks = {1, 1001}, seconds = {1e-6, 1.001e-3}, batch = 1, source = "a closed form"},
    },
  },
  model = {layers = 32, kv_heads = 8, head_dim = 128, dtype = "fp16", weight_bytes = 0, max_context = 8192},
  -- the prompt's 4095 tokens and the first output token are in the cache at the first decode step
  workload = {arrival = {kind = "closed", concurrency = 1}, prompt_tokens = 4095, output_tokens = 2, requests = 1},
  sparse = {policy = "dense"},
  cache = {l1 = "100%", l3 = "none"},
}
