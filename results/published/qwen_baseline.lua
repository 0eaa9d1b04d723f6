-- qwen_baseline.lua - the baseline of the GH200 figures (PUBLISHED.md
-- section 1: arXiv 2608.07009 Fig. 5, secondary; 4K 2430, 32K 511, 200K 111
-- tok/s): Qwen3-30B-A3B in BF16 on one GH200 (144 GB HBM3e, NVLink-C2C to
-- Grace's LPDDR5X), SGLang, every token's KV in HBM and every token read
-- (dense attention: the baseline's 4K figure is below HiSparse's, whose
-- selection reads at most 2048 tokens). What the summary we hold does not
-- give, assumed and to be confirmed: the GH200's 144 GB (not the 96 GB
-- model), the headline run's harness (closed-loop clients, 8K-token outputs,
-- --mem-fraction-static 0.85), SGLang's default chunked prefill of 8192
-- tokens, no cap on running requests (memory decides), YaRN for contexts past
-- the model's 40960 tokens (no cost of its own). Pages of 16 tokens (Quest's:
-- nothing moves here). qwen_contexts.sh reads its throughput at saturation.
local ks = require "kvstrata"
return {
  name = "qwen_baseline",
  seed = 1,
  duration = "60s",
  platform = {profile = "gh200_c2c", nodes = 1, gpus_per_node = 1},
  model = ks.merge(ks.models.qwen3_30b_a3b, {max_context = 212992}),
  scheduler = {kind = "fused", max_batched_tokens = 8192, mem_fraction = 0.85, reserve = "estimate"},
  workload = {arrival = {kind = "closed", concurrency = 64}, prompt_tokens = 32768, output_tokens = 8192},
  sparse = {policy = "dense"},
  cache = {block_size = 16, l3 = "none", prefetch_window = 0},
}
