-- qa_cluster_hbm.lua - study 4 without the tiered cache (every block in HBM:
-- L1 = 100%), otherwise as qa_cluster_tiered.lua.
--   build/kvstrata plan results/studies/qa_cluster_hbm.lua -o results/studies/qa_cluster_hbm
return {
  base = "qa_cluster_base.lua",
  set = {["cache.l1"] = "100%"},
  search = {field = "platform.nodes", from = 1, to = 16, goal = "smallest"},
}
