-- cold_regions.lua - cold regions warming up aside (cache.cold_share, the
-- seed's section 5.5), on and off. One H100 with a small model (32 layers,
-- 4 of them computing synthetic attention, the rest sharing), 16 closed-loop
-- clients with 16K-token prompts prefilled by a disaggregated pool (so each
-- request starts with its whole prompt in host DRAM: a cold region) and
-- synthetic top-k attention with long-range retrieval episodes
-- (retrieval_prob 0.02 a step, sparse.preset drifting). L1 holds 10 GiB
-- (about 20 requests' active blocks: misses come from cold starts and
-- retrievals). results/studies/cold_regions.sh runs it with cold_share 0 and
-- 0.3 and writes cold_regions.md.
return {
  name = "cold_regions", seed = 1, duration = "600s",
  platform = {profile = "h100_sxm_pcie5", nodes = 1, gpus_per_node = 1},
  model = {layers = 32, kv_heads = 8, head_dim = 128, dtype = "fp16", weight_bytes = "2GB", max_context = 32768},
  workload = {arrival = {kind = "closed", concurrency = 16}, prompt_tokens = 16384, output_tokens = 513, requests = 32},
  sparse = {policy = "topk", preset = "drifting", retrieval_prob = 0.02, budget_tokens = 1024, sink_blocks = 1,
            window_blocks = 2, attention_layers = 4},
  cache = {block_size = 32, l1 = "10GiB", l2 = "64GiB", l3 = "none"},
  prefill = {mode = "disaggregated", gpus = 8},
}
