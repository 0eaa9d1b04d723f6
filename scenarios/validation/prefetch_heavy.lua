-- prefetch_heavy.lua - validation: a wide prefetch window over a sliding selection (kvstrata validate).
--
-- Question: with a stable selection and a window of 12 blocks, most blocks reach L1
-- by prefetch: does the simulator predict what the prefetch copies cost?
--   build/kvstrata validate scenarios/validation/prefetch_heavy.lua
-- How to read: prefetch_accuracy and migrated_bytes_l2_l1 are large and
-- identical; ITL shows the cost of the prefetch traffic.
return {
  name = "prefetch_heavy",
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
  sparse = {policy = "topk", budget_tokens = 384, sink_blocks = 1, window_blocks = 2, preset = "stable"},
  cache = {block_size = 16, l1 = "40%", l2 = "256MB", l3 = "none", evict = "heat",
           prefetch_window = 12, migration_batch = 32},
}
