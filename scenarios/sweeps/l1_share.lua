-- l1_share.lua - the default scenario with L1 holding 50%, 75% and 100% of the
-- batch's active blocks, 10 simulated seconds each (issue 6, study 1, short).
-- Run it with: build/kvstrata sweep scenarios/sweeps/l1_share.lua -o results/l1_share
return {
  name = "l1_share",
  base = "../default.lua",
  set = {duration = "10s"},
  axes = {
    {field = "cache.l1", values = {"50%", "75%", "100%"}},
  },
}
