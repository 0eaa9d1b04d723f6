-- qwen_hisparse.lua - HiSparse in the GH200 figures (PUBLISHED.md section 1:
-- arXiv 2608.07009 Fig. 5, secondary; 4K 2668, 32K 1824, 200K 520 tok/s):
-- qwen_baseline.lua's GPU, model, scheduler and workload with Quest's page
-- selection under HiSparse. Quest (Tang et al., ICML 2024): pages of 16
-- tokens, each page's per-channel min and max key kept on the GPU and read
-- every step to score it (sparse.summaries = "minmax"), the top pages up to a
-- token budget attended. Assumed, as the summary we hold gives none of it:
-- the headline run's HiSparse configuration (a budget of 2048 tokens, device
-- buffers of 4096 tokens per request and layer, LRU within them, SGLang's
-- swap-in kernel of 30 warps per request with 8-byte loads) and the locality of Quest's pages on Qwen3:
-- none is measured, so the dsa model's (fitted to DeepSeek-V3.2's top-k of
-- tokens, calib/locality/dsa.lua) stands for it, applied to pages. The
-- host pool: 90% of Grace's 480 GB (cache.l2's default), as 8 times the
-- device pool (the headline's ratio) would need 490 GB.
local s = include "qwen_baseline.lua"
s.name = "qwen_hisparse"
s.sparse = {policy = "dsa", budget_tokens = 2048, sink_blocks = 0, window_blocks = 0, summaries = "minmax"}
s.cache = {block_size = 16, organisation = "per_request", device_buffer_size = 4096,
           evict = "lru", prefetch_window = 0, l3 = "none", copy = "gather", migration_batch = 65536,
           gather_warps = 30, gather_load_bytes = 8}
return s
