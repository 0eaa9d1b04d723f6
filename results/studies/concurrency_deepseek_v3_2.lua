-- concurrency_deepseek_v3_2.lua - study 5 (results/studies/concurrency.sh):
-- throughput and latency against the number of closed-loop clients for
-- DeepSeek-V3.2 on one 8xH200 node with data-parallel attention and 8-way
-- experts (scenarios/deepseek_v3_2_8xh200.lua), 300 s each, from one client
-- to past what the 8 KV pools hold (about 56 requests of 8192 + 1024 tokens
-- per GPU).
return {
  name = "concurrency_deepseek_v3_2",
  base = "../../scenarios/deepseek_v3_2_8xh200.lua",
  set = {duration = "300s"},
  axes = {
    {field = "workload.arrival.concurrency", values = {1, 8, 32, 64, 128, 256, 512}},
  },
}
