-- hisparse_missrate.lua - the HiSparse miss-rate measurement (PUBLISHED.md
-- section 1, arXiv 2608.07009 Fig. 6): GLM-5.1 decoding with DSA's top-k of
-- 2048 tokens, each request's device buffer of device_buffer_size tokens per
-- layer managed by cache.evict, the host holding every token. The figure is
-- the share of top-k entries not found in the buffer. The selections come
-- from sparse.policy = "dsa", whose per-layer locality is fitted to the
-- calibration inputs of calib/locality/dsa.lua only (never to these miss
-- rates). One node as SGLang serves GLM-5.1-FP8 (tp 8, dp-attention 8);
-- 32K-token prompts (the headline run's; LongBench v2's contexts are of that
-- order), each request decoding 256 tokens; four requests, one per rank.
-- run.sh varies device_buffer_size and cache.evict.
local ks = require "kvstrata"
return {
  name = "hisparse_missrate",
  seed = 1,
  duration = "3600s",
  platform = {profile = "h200_sxm_pcie5", nodes = 1, gpus_per_node = 8},
  model = ks.merge(ks.models.glm_5_1, {max_context = 65536}),
  parallel = {tp = 8, dp_attention = 8, ep = 8},
  scheduler = {kind = "fused", max_batched_tokens = 65536, mem_fraction = 0.85},
  workload = {arrival = {kind = "closed", concurrency = 4}, prompt_tokens = 32768, output_tokens = 257,
              requests = 4},
  sparse = {policy = "dsa", budget_tokens = 2048, sink_blocks = 0, window_blocks = 0},
  cache = {block_size = 1, organisation = "per_request", device_buffer_size = 4096, host_to_device_ratio = 8,
           evict = "lru", prefetch_window = 0, l3 = "none", copy = "gather"},
}
