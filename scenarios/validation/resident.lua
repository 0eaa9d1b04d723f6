-- resident.lua - validation: everything fits in L1 (kvstrata validate).
--
-- Question: with no migration at all, does the simulator's step time (the
-- measured kernel time of the selected blocks) predict the runtime's ITL?
--   build/kvstrata validate scenarios/validation/resident.lua
-- How to read: hit_rate_l1 is 1 in both and no bytes move; the ITL rows
-- compare the kernel-time model with the real reference kernel.
return {
  name = "resident",
  seed = 1,
  duration = "600s",
  platform = {profile = "devvm_cpu_runtime", nodes = 1, gpus_per_node = 1, hbm_bytes = "160MB"},
  model = {layers = 8, kv_heads = 2, q_heads = 8, head_dim = 64, dtype = "fp16",
           weight_bytes = 0, max_context = 4096},
  workload = {
    arrival = {kind = "closed", concurrency = 8},
    requests = 12,
    prompt_tokens = {kind = "uniform", min = 1024, max = 3072},
    output_tokens = {kind = "constant", value = 48},
  },
  sparse = {policy = "topk", budget_tokens = 384, sink_blocks = 1, window_blocks = 2, preset = "drifting"},
  cache = {block_size = 16, l1 = "100%", l2 = "64MB", l3 = "none", evict = "heat",
           prefetch_window = 4, migration_batch = 32},
}
