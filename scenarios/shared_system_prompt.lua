-- shared_system_prompt.lua - a long shared system prompt, routed by affinity.
--
-- Question: when 90% of requests start with one of 4 long system prompts
-- (16K tokens each: 2 GiB of KV per copy), does routing a request to the
-- GPU that already holds its prefix (router = "prefix_affinity") serve more
-- than spreading requests in turn (round_robin), where each GPU ends up
-- holding a copy of every prefix?
--   build/kvstrata run scenarios/shared_system_prompt.lua -o /tmp/affinity.h5
--   build/kvstrata run scenarios/shared_system_prompt.lua --set router=round_robin -o /tmp/rr.h5
-- How to read: output_throughput, ttft_p50/ttft_p99 and peak_batch of the
-- two runs. A prefix already on a GPU is not prefilled again, under either
-- router; affinity keeps one copy of a prefix per group instead of one per
-- GPU, and yields to load (a home more than 4 requests busier than the least
-- loaded GPU sends the request there). Measured (30 s): affinity 4990
-- tokens/s, ttft_p99 0.34 s; round robin 4998 tokens/s, ttft_p99 0.33 s:
-- with 4 groups and HBM to spare, every GPU holds every prefix anyway and
-- affinity gains nothing here.
local ks = require "kvstrata"

return {
  name = "shared_system_prompt",
  seed = 1,
  duration = "30s",

  platform = {profile = "h200_sxm_pcie5", nodes = 1, gpus_per_node = 8},

  model = {layers = 32, kv_heads = 8, head_dim = 128, dtype = "fp16",
           weight_bytes = "16GB", max_context = 32768},

  workload = {
    arrival = ks.poisson(16),     -- requests/s over the node
    -- prompts include the prefix: 16K of system prompt + 256 to 4K of user turn
    prompt_tokens = {kind = "uniform", min = 16640, max = 20480},
    output_tokens = {kind = "uniform", min = 64, max = 512},
    shared_prefix = {tokens = 16384, groups = 4, fraction = 0.9},
  },

  router = "prefix_affinity",

  sparse = {policy = "window", budget_tokens = 2048, sink_blocks = 1, window_blocks = 4},

  cache = {block_size = 32, l1 = "85%", l2 = "90%", l3 = "ssd", evict = "heat",
           prefetch_window = 4, migration_batch = 32},

  slo = {itl_p99 = "50ms"},
}
