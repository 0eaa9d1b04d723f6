-- huge_request.lua - one huge request at a time (batch 1-2) on one H200.
--
-- Question: with only one or two 120K-token requests on a GPU, what do
-- sparse attention and tiering gain? Everything fits in HBM (2 x 15 GiB of
-- KV beside 16 GB of weights), so tiering has no larger batch to admit, and
-- each decode step reads the 16 GB of weights whatever the attention does:
-- the gains should be limited to the KV share of a step.
--   build/kvstrata run scenarios/huge_request.lua -o /tmp/huge.h5
--   build/kvstrata run scenarios/huge_request.lua --set sparse.policy=dense -o /tmp/huge_dense.h5
--   build/kvstrata run scenarios/huge_request.lua --set cache.l1=100% -o /tmp/huge_hbm.h5
-- How to read: itl_p50 and output_throughput of the three runs; peak_batch
-- stays at 2; ttft_p50 is the prefill of ~12 s plus any wait behind the other
-- request.
local ks = require "kvstrata"

return {
  name = "huge_request",
  seed = 1,
  duration = "60s",

  platform = {profile = "h200_sxm_pcie5", nodes = 1, gpus_per_node = 1},

  model = {layers = 32, kv_heads = 8, head_dim = 128, dtype = "fp16",
           weight_bytes = "16GB", max_context = 131072},

  workload = {
    arrival = ks.closed(2),       -- two requests in flight: batch 1-2
    prompt_tokens = 122880,       -- 120K tokens
    output_tokens = 2048,
    requests = 8,
  },

  sparse = {policy = "window", budget_tokens = 2048, sink_blocks = 1, window_blocks = 4},

  cache = {block_size = 32, l1 = "85%", l2 = "90%", l3 = "ssd", evict = "heat",
           prefetch_window = 4, migration_batch = 32},

  slo = {itl_p99 = "50ms"},
}
