-- code_completion_repo.lua - repo-level code completion on one 8-GPU node.
--
-- Question: with long prompts (repository context, median ~24K tokens) and
-- short outputs (8-128 tokens of completion), where does a request's time
-- go? Prefill (2 x 8e9 x prompt FLOPs plus causal attention, at the
-- profile's prefill efficiency: ~1.1 s for 24K tokens) should dominate TTFT
-- and the GPU's time, so decode-side tiering has little left to win.
--   build/kvstrata run scenarios/code_completion_repo.lua -o /tmp/code.h5
--   build/kvstrata run scenarios/code_completion_repo.lua --set cache.l1=100% -o /tmp/code_hbm.h5
-- How to read: ttft_p50/ttft_p99 (prefill and queueing) against
-- itl_p50 x the mean output (~68 tokens); request_throughput is the
-- completions served per second; peak_batch and hit_rate_l1 show how much
-- the cache was used.
local ks = require "kvstrata"

return {
  name = "code_completion_repo",
  seed = 1,
  duration = "30s",

  platform = {profile = "h200_sxm_pcie5", nodes = 1, gpus_per_node = 8},

  model = {layers = 32, kv_heads = 8, head_dim = 128, dtype = "fp16",
           weight_bytes = "16GB", max_context = 65536},

  workload = {
    arrival = ks.poisson(5),      -- completions/s over the node (~2/3 of prefill capacity)
    -- ln 24576 = 10.11: median 24K tokens of repository context, 4K to 60K
    prompt_tokens = {kind = "lognormal", mu = 10.11, sigma = 0.6, min = 4096, max = 61440},
    output_tokens = {kind = "uniform", min = 8, max = 128},
  },

  sparse = {policy = "window", budget_tokens = 2048, sink_blocks = 1, window_blocks = 4},

  cache = {block_size = 32, l1 = "85%", l2 = "90%", l3 = "ssd", evict = "heat",
           prefetch_window = 4, migration_batch = 32},

  slo = {ttft_p99 = "2s", itl_p99 = "50ms"},
}
