-- runtime_tiny.lua - a small scenario for the runtime's tests: all three
-- tiers busy (L1 a quarter of the batch, L2 128 blocks, the rest on the
-- O_DIRECT L3 file), a noisy switching selection so that misses, prefetches
-- and demotions happen every step.
return {
  name = "runtime_tiny",
  seed = 3,
  duration = "600s",
  platform = {profile = "devvm_cpu_runtime", nodes = 1, gpus_per_node = 1, hbm_bytes = "2MB"},
  model = {layers = 4, kv_heads = 2, q_heads = 8, head_dim = 64, dtype = "fp16",
           weight_bytes = 0, max_context = 1024},
  workload = {
    arrival = {kind = "closed", concurrency = 4},
    requests = 6,
    prompt_tokens = {kind = "uniform", min = 256, max = 768},
    output_tokens = {kind = "constant", value = 24},
    shared_prefix = {tokens = 128, groups = 2, fraction = 0.5},
  },
  sparse = {policy = "mixed", budget_tokens = 128, sink_blocks = 1, window_blocks = 2, preset = "noisy",
            switch_prob = 0.3},
  cache = {block_size = 16, l1 = "25%", l2 = "1MB", l3 = "ssd", evict = "heat",
           prefetch_window = 4, migration_batch = 8},
}
