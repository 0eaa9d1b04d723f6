-- ssd_bound.lua - validation: the SSD tier on the critical path (kvstrata validate).
--
-- Question: when L1 holds under a third of the batch's active blocks, L2 is small
-- and attention moves noisily, so that over a quarter of the reads find their block
-- in an O_DIRECT file, does the simulator's SSD model (latency, per-request time,
-- bandwidth) predict the time those reads take? Misses are promoted in batches
-- while the kernel runs; misses that find no room in L1 are read one by one
-- before their layer (outside_reads), as the runtime does.
--   build/kvstrata validate scenarios/validation/ssd_bound.lua
-- How to read: hit_rate_l3 > 0.2 and outside_reads > 0 (identical); the runtime's
-- "other work" line is mostly those reads.
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
  sparse = {policy = "topk", budget_tokens = 1024, sink_blocks = 1, window_blocks = 2, preset = "noisy"},
  cache = {block_size = 16, l1 = "30%", l2 = "8MB", l3 = "ssd", evict = "heat",
           prefetch_window = 4, migration_batch = 32},
}
