-- l1_capacity.lua - study 1: the seed's defaults on one 8-GPU node, L1 from
-- 50% to 100% of the batch's active blocks, at the default load (2 requests/s)
-- and an overload (8 requests/s) that fills the batch to what L1 admits.
--   build/kvstrata sweep results/studies/l1_capacity.lua -o results/studies/l1_capacity
--   build/kvstrata report results/studies/l1_capacity -o results/studies/l1_capacity/report
return {
  name = "l1_capacity",
  base = "../../tests/fixtures/scenarios/seed_default.lua", -- the seed's parameters, poisson arrivals
  set = {duration = "120s"},
  axes = {
    {field = "cache.l1", values = {"50%", "60%", "70%", "85%", "100%"}},
    {field = "workload.arrival.rate", values = {2, 8}},
  },
}
