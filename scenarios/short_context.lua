-- short_context.lua - short chat requests (< 1K tokens) on one 8-GPU node.
--
-- Question: when prompt + output stay under 1K tokens, is there anything for
-- tiering to do? A request's whole KV is at most 32 blocks per layer (4 MiB
-- per layer group at most), the sparse budget (2048 tokens) covers the whole
-- context, and the batch's KV is small next to HBM: tiering should not pay.
--   build/kvstrata run scenarios/short_context.lua -o /tmp/short.h5
-- How to read: hit_rate_l1 should be 1 and the migrated_bytes_* 0 (nothing
-- leaves HBM); output_throughput and itl_p50 are then set by the weights
-- (16 GB read per step) and the batch size alone.
local ks = require "kvstrata"

return {
  name = "short_context",
  seed = 1,
  duration = "20s",

  platform = {profile = "h200_sxm_pcie5", nodes = 1, gpus_per_node = 8},

  model = {layers = 32, kv_heads = 8, head_dim = 128, dtype = "fp16",
           weight_bytes = "16GB", max_context = 1024},

  workload = {
    arrival = ks.poisson(200),    -- requests/s over the node: a busy chat service
    prompt_tokens = {kind = "uniform", min = 64, max = 768},
    output_tokens = {kind = "uniform", min = 32, max = 256},
  },

  sparse = {policy = "window", budget_tokens = 2048, sink_blocks = 1, window_blocks = 4},

  cache = {block_size = 32, l1 = "85%", l2 = "90%", l3 = "ssd", evict = "heat",
           prefetch_window = 4, migration_batch = 32},

  slo = {itl_p99 = "50ms"},
}
