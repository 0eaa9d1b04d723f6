-- shared_prefix.lua - validation: requests that share a prompt prefix (kvstrata validate).
--
-- Question: when every request starts with one of two 1024-token prefixes mapped
-- onto shared blocks, does the simulator predict ITL and the tiers' traffic?
--   build/kvstrata validate scenarios/validation/shared_prefix.lua
-- How to read: the prefix's blocks are shared (never freed while shared);
-- hit rates identical; ITL compared as elsewhere.
return {
  name = "shared_prefix",
  seed = 1,
  duration = "600s",
  platform = {profile = "devvm_cpu_runtime", nodes = 1, gpus_per_node = 1, hbm_bytes = "24MB"},
  model = {layers = 8, kv_heads = 2, q_heads = 8, head_dim = 64, dtype = "fp16",
           weight_bytes = 0, max_context = 4096},
  workload = {
    arrival = {kind = "closed", concurrency = 8},
    requests = 12,
    prompt_tokens = {kind = "uniform", min = 1024, max = 3072},
    output_tokens = {kind = "constant", value = 48},
    shared_prefix = {tokens = 1024, groups = 2, fraction = 1},
  },
  sparse = {policy = "topk", budget_tokens = 384, sink_blocks = 1, window_blocks = 2, preset = "drifting"},
  cache = {block_size = 16, l1 = "50%", l2 = "256MB", l3 = "none", evict = "heat",
           prefetch_window = 4, migration_batch = 32},
}
