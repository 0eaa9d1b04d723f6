-- deepseek_v3_2_8xh200.lua - DeepSeek-V3.2 on one 8xH200 node as SGLang
-- serves it: data-parallel attention on each GPU (its own batch and latent
-- cache: MLA's latent has no heads to split) and the experts split 8 ways
-- (--tp 8 --dp 8 --enable-dp-attention with expert parallelism), the fused
-- scheduler, the KV pool what 85% of HBM holds after the weights (SGLang's
-- mem_fraction_static as the HiSparse runs use it), everything in HBM. DSA
-- reads 2048 tokens of each request in every layer (its top-k) and scans
-- every token's index key; with every block in HBM which 2048 it selects
-- does not change a step's cost, so the cheap window rule stands for the
-- top-k here (sparse.policy = "topk" runs the synthetic attention through
-- the reference kernels: same figures, about 40 times slower to simulate).
-- A long-context load: closed-loop clients, 8192-token prompts, 1024-token
-- answers. The study results/studies/concurrency.sh sweeps the clients.
local ks = require "kvstrata"
return {
  name = "deepseek_v3_2_8xh200",
  duration = "60s",
  platform = {profile = "h200_sxm_pcie5", nodes = 1, gpus_per_node = 8},
  model = ks.merge(ks.models.deepseek_v3_2, {max_context = 65536}),
  parallel = {tp = 8, dp_attention = 8, ep = 8},
  scheduler = {kind = "fused", max_batched_tokens = 8192, mem_fraction = 0.85},
  workload = {arrival = {kind = "closed", concurrency = 64}, prompt_tokens = 8192, output_tokens = 1024},
  sparse = {policy = "window", budget_tokens = 2048, sink_blocks = 1, window_blocks = 2},
  cache = {block_size = 64, l3 = "none"},
}
