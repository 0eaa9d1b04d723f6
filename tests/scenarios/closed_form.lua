-- The closed form of DESIGN.md section 1: one request, everything resident,
-- no contention, no weights, no fixed costs. A decode step reads the KV of
-- 4096 tokens: 32 layers x 8 heads x 128 dims x 2 (K, V) x 2 bytes x 4096 =
-- 536,870,912 bytes; at 2 TB/s that is 268.435456 us per output token.
return {
  name = "closed_form",
  duration = "10s",
  platform = {
    nodes = 1, gpus_per_node = 1,
    profile = {
      hbm_bytes = "141GB", hbm_bw = "2TBps", pcie_bw = "50GBps", pcie_lat = "1us", copy_overhead = "0s",
      nvlink_bw = 0, gpus_per_switch = 1, l2 = "1TiB", dram_bw = "200GBps",
      ssd = {count = 1, read_bw = "7GBps", write_bw = "3GBps", lat = "80us"},
      network = {topology = "star", bw = "25GBps", lat = "5us"},
      flops = "990TFLOPS",
    },
  },
  model = {layers = 32, kv_heads = 8, head_dim = 128, dtype = "fp16", weight_bytes = 0, max_context = 8192},
  -- the prompt's 4095 tokens and the first output token are in the cache at the first decode step
  workload = {arrival = {kind = "closed", concurrency = 1}, prompt_tokens = 4095, output_tokens = 2, requests = 1},
  sparse = {policy = "dense"},
  cache = {l1 = "100%", l3 = "none"},
}
