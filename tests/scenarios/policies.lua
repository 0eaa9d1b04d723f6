-- policies.lua - a small run for the score-driven and replayed selection
-- policies: one GPU, 4 layers, 4K-token prompts, L1 of 40 MB (320 blocks,
-- a third of the batch's 1064) so that blocks move between HBM and host DRAM.
return {
  name = "policies",
  duration = "60s",
  platform = {profile = "h200_sxm_pcie5", nodes = 1, gpus_per_node = 1},
  model = {layers = 4, kv_heads = 8, q_heads = 32, head_dim = 128, weight_bytes = "16GB", max_context = 16384},
  workload = {arrival = {kind = "closed", concurrency = 2}, prompt_tokens = 4096, output_tokens = 128, requests = 4},
  sparse = {policy = "topk", budget_tokens = 512, sink_blocks = 1, window_blocks = 2},
  cache = {l1 = "40MB", l3 = "none"},
}
