-- eviction.lua - study 2: eviction policies heat, lru, lfu and belady (the
-- bound) on three access regimes, replayed from traces of synthetic attention
-- through the reference kernels (tests/fixtures/scenarios/policies.lua's shape: 4
-- layers, 4K-token prompts, L1 a third of the batch's blocks): stable,
-- drifting, and noisy strategy switching. The traces were recorded with
--   build/kvstrata trace record tests/fixtures/scenarios/policies.lua --requests 2 --steps 128 \
--     --preset P -o results/studies/traces/P.h5            (P = stable, drifting, noisy)
--   build/kvstrata sweep results/studies/eviction.lua -o results/studies/eviction
return {
  name = "eviction",
  base = "../../tests/fixtures/scenarios/policies.lua",
  set = {["sparse.policy"] = "trace"},
  axes = {
    -- relative to the base scenario's folder
    {field = "sparse.file", values = {"../../../results/studies/traces/stable.h5",
                                      "../../../results/studies/traces/drifting.h5",
                                      "../../../results/studies/traces/noisy.h5"}},
    {field = "cache.evict", values = {"heat", "lru", "lfu", "belady"}},
  },
}
