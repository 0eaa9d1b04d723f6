-- glm_hisparse.lua - the HiSparse headline run (PUBLISHED.md section 1):
-- glm_baseline.lua's node, model, scheduler and workload with SGLang's
-- HiSparse configuration: DSA's top-k of 2048 tokens (sparse.policy "dsa",
-- its locality fitted to calibration inputs only), a device buffer of 4096
-- tokens per request and layer, LRU within it, the host pool 8 times the
-- device pool, pages of one token, swap-in by a gather kernel, up to 480
-- requests (60 per attention rank).
local s = include "glm_baseline.lua"
s.name = "glm_hisparse"
s.sparse = {policy = "dsa", budget_tokens = 2048, sink_blocks = 0, window_blocks = 0}
s.cache = {block_size = 1, organisation = "per_request", device_buffer_size = 4096, host_to_device_ratio = 8,
           evict = "lru", prefetch_window = 0, l3 = "none", copy = "gather",
           migration_batch = 65536} -- one gather kernel per layer for all its misses
return s
