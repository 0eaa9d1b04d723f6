-- glm_baseline.lua - SGLang's baseline in the HiSparse headline run
-- (PUBLISHED.md section 1): GLM-5.1-FP8 on one 8xH200 node, --tp-size 8
-- --dp-size 8 --enable-dp-attention (experts split 8 ways), the fused
-- scheduler with --chunked-prefill-size 65536, --mem-fraction-static 0.85,
-- --max-running-requests 480 (60 per attention rank), every token's KV in
-- HBM, 32K-token prompts and 8K-token outputs from closed-loop clients. DSA
-- reads 2048 tokens of each request in every layer and scans every token's
-- index key; with everything in HBM which 2048 it reads does not change a
-- step's cost, so the cheap window rule stands for the top-k. Pages of 64
-- tokens (the cache's bookkeeping only: nothing moves). SGLang's admission:
-- each request reserves its context and new_token_ratio x its output left
-- (clipped at 4096), requests are retracted when outputs outgrow the pool
-- (scheduler.reserve = "estimate", SGLang's only mode). run.sh reads its
-- batch at saturation and its time per token at one request. Every forward
-- pass pays SGLang's fixed time per layer (launches, synchronisation, small
-- collectives) as fitted to DeepSeek-V3 on 8xH200 at batch 1, a calibration
-- input (overhead_fit.sh, overhead.md): GLM-5's layers are DeepSeek-V3.2's
-- with other sizes (SGLang issue #15025 runs both through one model file);
-- that the engine's time per layer carries over from DeepSeek-V3 and from
-- SGLang v0.4.1 (2024-12) to the version HiSparse ran on is assumed.
local ks = require "kvstrata"
return {
  name = "glm_baseline",
  seed = 1,
  duration = "60s",
  platform = {profile = "h200_sxm_pcie5", nodes = 1, gpus_per_node = 8},
  model = ks.merge(ks.models.glm_5_1, {max_context = 65536}),
  parallel = {tp = 8, dp_attention = 8, ep = 8},
  scheduler = {kind = "fused", max_batched_tokens = 65536, max_running_requests = 60, mem_fraction = 0.85,
               reserve = "estimate", layer_overhead = "0.4799ms"},
  workload = {arrival = {kind = "closed", concurrency = 256}, prompt_tokens = 32768, output_tokens = 8192},
  sparse = {policy = "window", budget_tokens = 2048, sink_blocks = 0, window_blocks = 0},
  cache = {block_size = 64, l3 = "none", prefetch_window = 0},
}
