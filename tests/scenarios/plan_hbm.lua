-- plan_hbm.lua - an SLO search with a closed-form answer: the closed-form
-- step reads 536,870,912 bytes, so P99 TPOT <= 1 ms needs an HBM bandwidth
-- of at least 536.870912 GB/s; bisection within 2% from above.
return {
  base = "closed_form.lua",
  set = {["slo.tpot_p99"] = "1ms"},
  search = {field = "platform.hbm_bw", from = 1e11, to = 2e12, goal = "smallest", tolerance = 0.02},
}
