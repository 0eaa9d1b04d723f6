-- dense_vs_sparse.lua - the same workload, sparse + tiered against dense.
--
-- Question: on 32K-token contexts, how much output throughput and TPOT does
-- sparse attention (sink + recent window + 2048-token budget, about 2.2K of
-- the context read per step) buy over dense attention (every token read),
-- with the KV tiered between HBM and host DRAM?
--
-- This file is the sparse run. The dense baseline is this same file with
-- --set sparse.policy=dense (nothing else changes: same arrivals, same
-- prompts, same seed):
--   build/kvstrata run scenarios/dense_vs_sparse.lua -o /tmp/sparse.h5
--   build/kvstrata run scenarios/dense_vs_sparse.lua --set sparse.policy=dense -o /tmp/dense.h5
-- How to read: output_throughput and itl_p50 of the two runs; hit_rate_l1
-- and stall_fraction say whether tiering held up under each policy (dense
-- reads every block, so every block is hot).
local ks = require "kvstrata"

return {
  name = "dense_vs_sparse",
  seed = 1,
  duration = "20s",

  platform = {profile = "h200_sxm_pcie5", nodes = 1, gpus_per_node = 8},

  model = {layers = 32, kv_heads = 8, head_dim = 128, dtype = "fp16",
           weight_bytes = "16GB", max_context = 65536},

  workload = {
    arrival = ks.closed(64),      -- saturated: 8 requests per GPU in flight
    prompt_tokens = {kind = "lognormal", mu = 10.397, sigma = 0.3, min = 16384, max = 49152},  -- median 32K
    output_tokens = {kind = "uniform", min = 256, max = 1024},
  },

  sparse = {policy = "window", budget_tokens = 2048, sink_blocks = 1, window_blocks = 4},

  cache = {block_size = 32, l1 = "85%", l2 = "90%", l3 = "ssd", evict = "heat",
           prefetch_window = 4, migration_batch = 32},

  slo = {itl_p99 = "50ms"},
}
