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
-- The node, model and scheduler are glm_baseline.lua's.
local s = include "glm_baseline.lua"
s.name = "hisparse_missrate"
s.duration = "3600s"
s.scheduler.max_running_requests = nil
s.scheduler.reserve = "full" -- one request a rank, nothing to retract; Belady's replay needs it
s.workload = {arrival = {kind = "closed", concurrency = 4}, prompt_tokens = 32768, output_tokens = 257, requests = 4}
s.sparse = {policy = "dsa", budget_tokens = 2048, sink_blocks = 0, window_blocks = 0}
s.cache = {block_size = 1, organisation = "per_request", device_buffer_size = 4096, host_to_device_ratio = 8,
           evict = "lru", prefetch_window = 0, l3 = "none", copy = "gather",
           migration_batch = 65536, -- one gather kernel per layer for all its misses
           -- SGLang's swap-in kernel gives each request one thread block (HiSparseCoordinator's
           -- swap_in_block_size, 960 threads: 30 warps), a warp copies one token's KV at a time with
           -- 8-byte loads per lane (transfer_item_warp, ld.global.nc.b64), each waiting on host memory
           gather_warps = 30, gather_load_bytes = 8}
return s
