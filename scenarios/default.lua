-- default.lua - the seed's parameter table (DESIGN.md "Seed defaults") on one
-- 8-GPU H200 node: blocks of 32 tokens, L1 holding ~85% of the batch's active
-- blocks, a large L2, prefetch window 4, heat half-life 256 steps, migration
-- batches of 32 blocks, long-context requests (where tiering should pay).
-- Check it with: build/kvstrata scenario check scenarios/default.lua
local ks = require "kvstrata"

return {
  name = "default",
  seed = 1,
  duration = "600s",              -- simulated time limit

  platform = {
    profile = "h200_sxm_pcie5",   -- calib/profiles/h200_sxm_pcie5.lua (datasheet figures)
    nodes = 1,
    gpus_per_node = 8,
  },

  -- the seed's example model: 32 layers, 8 KV heads, head dim 128, fp16 KV
  -- (128 KiB per 32-token block per layer); ~8B parameters of fp16 weights
  model = {
    layers = 32,
    kv_heads = 8,
    head_dim = 128,
    dtype = "fp16",
    weight_bytes = "16GB",        -- per GPU (each GPU holds a replica)
    max_context = 131072,
  },

  workload = {
    arrival = ks.poisson(2),      -- requests/s over the node
    -- prompts with a median of 32K tokens (ln 32768 = 10.397), 4K to 120K
    prompt_tokens = {kind = "lognormal", mu = 10.397, sigma = 0.5, min = 4096, max = 120000},
    output_tokens = {kind = "uniform", min = 128, max = 1024},
    shared_prefix = {tokens = 0, groups = 1, fraction = 0},
    requests = 2000,
  },

  sparse = {
    policy = "window",            -- sink + recent window + budget; topk, retrieval, mixed, trace, model: README.md
    budget_tokens = 2048,         -- tokens selected per step beyond sink and window
    sink_blocks = 1,
    window_blocks = 4,
  },

  cache = {
    block_size = 32,              -- tokens per block
    l1 = "85%",                   -- share of the batch's active blocks kept in HBM
    l2 = "90%",                   -- share of host DRAM (platform.l2) for L2
    l3 = "ssd",
    evict = "heat",
    heat_half_life = 256,         -- steps
    prefetch_window = 4,          -- blocks after an accessed block
    migration_batch = 32,         -- blocks per copy batch
    compression = "none",
  },

  slo = {
    itl_p99 = "50ms",
  },
}
