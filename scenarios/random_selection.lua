-- random_selection.lua - sparse selection with no locality, on long contexts.
--
-- Question: when each decode step reads blocks drawn uniformly at random
-- from the context (sparse.policy = "random": no recency, no heat for the
-- cache to learn from), does tiering still pay, or do the misses to host
-- DRAM cost more than the larger batch gains?
--
-- The engine admits twice what HBM holds (cache.l1 = 50%); the model has 32
-- KV heads (MHA, a Llama-2-7B shape: 512 KiB of KV per token) so that the
-- batch's KV really outgrows HBM. Baselines, one flag each:
--   build/kvstrata run scenarios/random_selection.lua -o /tmp/random.h5
--   build/kvstrata run scenarios/random_selection.lua --set cache.l1=100% -o /tmp/untiered.h5
--   build/kvstrata run scenarios/random_selection.lua --set sparse.policy=window -o /tmp/window.h5
-- How to read: hit_rate_l1 (about the share of the context that is in HBM
-- when selection is random), stall_fraction (GPU time waiting for blocks),
-- prefetch_accuracy (prefetching neighbours of a random block rarely helps)
-- and output_throughput against the window run.
local ks = require "kvstrata"

return {
  name = "random_selection",
  seed = 1,
  duration = "20s",

  platform = {profile = "h200_sxm_pcie5", nodes = 1, gpus_per_node = 8},

  model = {layers = 32, kv_heads = 32, head_dim = 128, dtype = "fp16",
           weight_bytes = "13.5GB", max_context = 131072},

  workload = {
    arrival = ks.closed(256),     -- saturated: the batch is as large as the cache admits
    prompt_tokens = {kind = "lognormal", mu = 10.397, sigma = 0.3, min = 16384, max = 65536},  -- median 32K
    output_tokens = {kind = "uniform", min = 256, max = 1024},
  },

  sparse = {policy = "random", budget_tokens = 2048, sink_blocks = 1, window_blocks = 4},

  cache = {block_size = 32, l1 = "50%", l2 = "90%", l3 = "ssd", evict = "heat",
           prefetch_window = 4, migration_batch = 32},

  slo = {itl_p99 = "50ms"},
}
