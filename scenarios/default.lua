-- default.lua - where a tiered KV cache decides the batch: long-context,
-- decode-heavy serving at high concurrency on one H200. 96 closed-loop
-- clients send ~32K-token prompts and read 2-4K-token answers; a pool of 8
-- prefill GPUs (disaggregated prefill) sends each prompt's KV into this
-- GPU's host DRAM. HBM holds the KV of about 31 such requests after the
-- weights; with L1 a quarter of the batch's active blocks (the rest in host
-- DRAM, L2) the GPU admits every client. The cache is the seed's (DESIGN.md
-- "Seed defaults": 32-token blocks, heat eviction with a 256-step half-life,
-- prefetch window 4, batches of 32 blocks) and so is the model (32 layers,
-- 8 KV heads, head dim 128, fp16 KV: 128 KiB per block per layer).
-- Check it with: build/kvstrata scenario check scenarios/default.lua
-- The same run with every block in HBM (the batch is what HBM holds):
--   build/kvstrata run scenarios/default.lua --set cache.l1=100%
-- README ("The default run") shows both side by side.
local ks = require "kvstrata"

return {
  name = "default",
  seed = 1,
  duration = "60s",               -- simulated time

  platform = {
    profile = "h200_sxm_pcie5",   -- calib/profiles/h200_sxm_pcie5.lua (datasheet figures)
    nodes = 1,
    gpus_per_node = 1,
  },

  model = {
    layers = 32,
    kv_heads = 8,
    head_dim = 128,
    dtype = "fp16",
    weight_bytes = "16GB",        -- ~8B parameters of fp16 weights
    max_context = 131072,
  },

  workload = {
    arrival = {kind = "closed", concurrency = 96},   -- clients, each sending its next request on a reply
    -- prompts with a median of 32K tokens (ln 32768 = 10.397), 16K to 64K
    prompt_tokens = {kind = "lognormal", mu = 10.397, sigma = 0.25, min = 16384, max = 65536},
    output_tokens = {kind = "uniform", min = 2048, max = 4096},
    shared_prefix = {tokens = 0, groups = 1, fraction = 0},
  },

  prefill = {mode = "disaggregated", gpus = 8},       -- a prefill pool; the prompt's KV lands in host DRAM

  sparse = {
    policy = "window",            -- sink + recent window + budget; topk, retrieval, mixed, trace, model, dsa: README.md
    budget_tokens = 2048,         -- tokens selected per step beyond sink and window
    sink_blocks = 1,
    window_blocks = 4,
  },

  cache = {
    block_size = 32,              -- tokens per block
    l1 = "25%",                   -- share of the batch's active blocks kept in HBM: the batch may be 4x HBM's
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
