-- llama3_8b_h100.lua - dense serving of Llama-3-8B on one H100 SXM, as vLLM
-- and SGLang run it: the fused scheduler with a token budget of 8192, the
-- KV pool what 90% of HBM holds after the weights (vLLM's default
-- gpu_memory_utilization), every block in HBM (no tier below L1 is used:
-- the batch is what the pool holds). A chat-like load: closed-loop clients,
-- 2048-token prompts, 256-token answers. The study
-- results/studies/concurrency.sh sweeps the clients.
local ks = require "kvstrata"
return {
  name = "llama3_8b_h100",
  duration = "60s",
  platform = {profile = "h100_sxm_pcie5", nodes = 1, gpus_per_node = 1},
  model = ks.merge(ks.models.llama3_8b, {max_context = 8192}),
  scheduler = {kind = "fused", max_batched_tokens = 8192, mem_fraction = 0.9},
  workload = {arrival = {kind = "closed", concurrency = 64}, prompt_tokens = 2048, output_tokens = 256},
  sparse = {policy = "dense"},
  cache = {l3 = "none"},
}
