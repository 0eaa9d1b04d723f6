-- A miss, in closed form: one layer, L1 of one 128 KiB block. The 2048-token
-- prompt leaves block 0 in L1 and blocks 1-63 in L2; the first output token
-- opens block 64, which lands in L2 too. The first decode step reads only the
-- newest block (window of 1): a miss, so block 0 is demoted (GPU -> host) and
-- block 64 promoted (host -> GPU) after it, each one batch of one block:
-- 1 us + 131072 B / 50 GB/s = 3.62144 us. The step then reads one token's KV
-- (4096 B) at 2 TB/s: 2.048 ns. TPOT = 2 x 3.62144 us + 2.048 ns = 7.244928 us.
return {
  name = "closed_form_miss",
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
  model = {layers = 1, kv_heads = 8, head_dim = 128, dtype = "fp16", weight_bytes = 0, max_context = 8192},
  workload = {arrival = {kind = "closed", concurrency = 1}, prompt_tokens = 2048, output_tokens = 2, requests = 1},
  sparse = {policy = "window", sink_blocks = 0, window_blocks = 1, budget_tokens = 0},
  cache = {l1 = 131072, l3 = "none", prefetch_window = 0},
}
