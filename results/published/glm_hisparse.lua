-- glm_hisparse.lua - the HiSparse headline run (PUBLISHED.md section 1):
-- glm_baseline.lua's node, model, scheduler and workload with SGLang's
-- HiSparse configuration: DSA's top-k of 2048 tokens (sparse.policy "dsa",
-- its locality fitted to calibration inputs only), a device buffer of 4096
-- tokens per request and layer, LRU within it, the host pool 8 times the
-- device pool, pages of one token, swap-in by a gather kernel (a thread block
-- per request, its round trips to host memory counted), up to 480
-- requests (60 per attention rank).
local s = include "glm_baseline.lua"
s.name = "glm_hisparse"
s.sparse = {policy = "dsa", budget_tokens = 2048, sink_blocks = 0, window_blocks = 0}
s.cache = {block_size = 1, organisation = "per_request", device_buffer_size = 4096, host_to_device_ratio = 8,
           evict = "lru", prefetch_window = 0, l3 = "none", copy = "gather",
           migration_batch = 65536, -- one gather kernel per layer for all its misses
           -- SGLang's swap-in kernel gives each request one thread block (HiSparseCoordinator's
           -- swap_in_block_size, 960 threads: 30 warps), a warp copies one token's KV at a time with
           -- 8-byte loads per lane (transfer_item_warp, ld.global.nc.b64), each waiting on host memory
           gather_warps = 30, gather_load_bytes = 8}
return s
