-- qa_cluster_base.lua - the base of study 4: 128K-context document QA
-- (scenarios/doc_qa_128k.lua's model, prompts and answers) arriving at 1
-- request/s over a cluster of H200 nodes, P99 ITL at most 50 ms, and P99
-- TTFT at most 30 s: ITL alone does not see an overloaded cluster (its queue
-- grows without bound in TTFT while decoding stays fast). Prefill is
-- colocated in 256-token chunks: a larger chunk alone (attention over a 100K
-- context) takes longer than the 50 ms a token may wait.
local ks = require "kvstrata"
return {
  name = "qa_cluster",
  seed = 1,
  duration = "180s",
  platform = {profile = "h200_sxm_pcie5", nodes = 1, gpus_per_node = 8},
  model = {layers = 32, kv_heads = 8, head_dim = 128, dtype = "fp16", weight_bytes = "16GB", max_context = 131072},
  workload = {
    arrival = ks.poisson(1),
    prompt_tokens = {kind = "uniform", min = 98304, max = 129024},
    output_tokens = {kind = "uniform", min = 64, max = 512},
  },
  prefill = {chunk = 256},
  router = "least_loaded",
  sparse = {policy = "window", budget_tokens = 2048, sink_blocks = 1, window_blocks = 4},
  cache = {block_size = 32, l1 = "50%", l2 = "90%", l3 = "ssd"},
  slo = {itl_p99 = "50ms", ttft_p99 = "30s"},
}
