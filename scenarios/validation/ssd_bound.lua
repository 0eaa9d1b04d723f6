-- ssd_bound.lua - validation: most of the KV on the SSD tier (kvstrata validate).
--
-- Question: when L2 is small and most blocks live in an O_DIRECT file, does the
-- simulator's SSD model (latency, per-request time, bandwidth) predict the stall?
--   build/kvstrata validate scenarios/validation/ssd_bound.lua
-- How to read: hit_rate_l3 > 0 and migrated_bytes_l3_l1 > 0 (identical);
-- TPOT is set by the SSD reads of the misses.
return {
  name = "ssd_bound",
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
  cache = {block_size = 16, l1 = "50%", l2 = "8MB", l3 = "ssd", evict = "heat",
           prefetch_window = 4, migration_batch = 32},
}
