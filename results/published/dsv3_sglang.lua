-- dsv3_sglang.lua - the calibration input of scheduler.layer_overhead (not
-- a target): DeepSeek-V3 on one 8xH200 node in SGLang v0.4.1.post2,
-- `--tp 8 --enable-dp-attention`, CUDA graphs and tuned FP8 GEMMs, prompts
-- of 128 tokens and outputs of 256, every token's KV in HBM. Published
-- (SGLang PR #2643, 2024-12-29, its description): output throughput 30.29
-- tok/s at batch 1, 206.32 at batch 8, 760.52 at batch 32. The hardware is
-- not named in the text we read: 8xH200 is inferred (DeepSeek-V3's 671 GB
-- of FP8 weights do not fit 8xH100's 640 GB, and the same release tuned its
-- fused MoE for NVIDIA_H200, SGLang issue #2591). overhead_fit.sh fits the
-- overhead to batch 1 and checks batches 8 and 32 with it.
-- DeepSeek-V3's layers are DeepSeek-V3.2's without the indexer; here the
-- indexer stays (its scan of at most 384 keys a layer costs under 0.1% of
-- a step) and every token is read (2048 > 384); the KV in BF16, as SGLang
-- held DeepSeek-V3's then.
local ks = require "kvstrata"
return {
  name = "dsv3_sglang",
  seed = 1,
  duration = "30s",
  platform = {profile = "h200_sxm_pcie5", nodes = 1, gpus_per_node = 8},
  model = ks.merge(ks.models.deepseek_v3_2, {dtype = "bf16", max_context = 4096}),
  parallel = {tp = 8, dp_attention = 8, ep = 1}, -- no --enable-ep-moe: experts split 8 ways
  scheduler = {kind = "fused", max_batched_tokens = 16384, mem_fraction = 0.85},
  workload = {arrival = {kind = "closed", concurrency = 1}, prompt_tokens = 128, output_tokens = 256},
  sparse = {policy = "window", budget_tokens = 2048, sink_blocks = 0, window_blocks = 0},
  cache = {block_size = 64, l3 = "none", prefetch_window = 0},
}
