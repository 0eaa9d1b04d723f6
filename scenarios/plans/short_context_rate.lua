-- short_context_rate.lua - the largest arrival rate one 8-GPU node serves for
-- short chats (scenarios/short_context.lua) with P99 ITL at most 50 ms and
-- P99 TTFT at most 1 s.
--   build/kvstrata plan scenarios/plans/short_context_rate.lua
return {
  base = "../short_context.lua",
  set = {duration = "10s", ["slo.ttft_p99"] = "1s"},
  search = {field = "workload.arrival.rate", from = 50, to = 1600, goal = "largest", tolerance = 0.05},
}
