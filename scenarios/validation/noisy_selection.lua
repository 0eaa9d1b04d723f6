-- noisy_selection.lua - validation: selection that switches strategy and drifts fast (kvstrata validate).
--
-- Question: when the selection switches between the window rule and top-k over a
-- noisy attention (the case that starves a heat map), does the simulator still
-- predict ITL (the gaps between tokens)?
--   build/kvstrata validate scenarios/validation/noisy_selection.lua
-- How to read: hit_rate_l1 is lower than in l2_bound and identical in both;
-- ITL carries many misses per step.
return {
  name = "noisy_selection",
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
  sparse = {policy = "mixed", budget_tokens = 384, sink_blocks = 1, window_blocks = 2, preset = "noisy",
            switch_prob = 0.2},
  cache = {block_size = 16, l1 = "50%", l2 = "256MB", l3 = "none", evict = "heat",
           prefetch_window = 4, migration_batch = 32},
}
