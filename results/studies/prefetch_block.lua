-- prefetch_block.lua - study 3: prefetch window 0 to 8 against block size 16,
-- 32 and 64, with top-k selection from synthetic (drifting) attention on the
-- small tiered setup of tests/fixtures/scenarios/policies.lua (L1 a third of the
-- batch's blocks), so that prefetching has misses to hide.
--   build/kvstrata sweep results/studies/prefetch_block.lua -o results/studies/prefetch_block
return {
  name = "prefetch_block",
  base = "../../tests/fixtures/scenarios/policies.lua",
  set = {["sparse.policy"] = "topk"},
  axes = {
    {field = "cache.prefetch_window", values = {0, 2, 4, 8}},
    {field = "cache.block_size", values = {16, 32, 64}},
  },
}
