-- l2_bound.lua - validation: L1 holds half the batch, L2 the rest (kvstrata validate).
--
-- Question: when L1 holds about half of the batch's blocks and every miss is an L2
-- -> L1 memcpy, does the simulator predict the stall the copies add?
--   build/kvstrata validate scenarios/validation/l2_bound.lua
-- How to read: hit_rate_l2 > 0 and migrated_bytes_l2_l1 > 0, identical in
-- both; the ITL rows show whether copies overlapped with attention as modelled.
return {
  name = "l2_bound",
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
  },
  sparse = {policy = "topk", budget_tokens = 1024, sink_blocks = 1, window_blocks = 2, preset = "drifting"},
  cache = {block_size = 16, l1 = "50%", l2 = "256MB", l3 = "none", evict = "heat",
           prefetch_window = 4, migration_batch = 32},
}
