-- qa_cluster_tiered.lua - study 4, with the tiered cache (L1 = 50% of the
-- batch's blocks): the smallest number of 8-GPU H200 nodes that serves 128K
-- document QA at 1 request/s with P99 ITL <= 50 ms and P99 TTFT <= 30 s (qa_cluster_base.lua).
--   build/kvstrata plan results/studies/qa_cluster_tiered.lua -o results/studies/qa_cluster_tiered
return {
  base = "qa_cluster_base.lua",
  search = {field = "platform.nodes", from = 1, to = 16, goal = "smallest"},
}
