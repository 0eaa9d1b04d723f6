-- concurrency_llama3_8b.lua - study 5 (results/studies/concurrency.sh):
-- throughput and latency against the number of closed-loop clients for
-- Llama-3-8B served dense on one H100 (scenarios/llama3_8b_h100.lua), 300 s
-- each, from one client to past what the KV pool holds (about 186 requests
-- of 2048 + 256 tokens).
return {
  name = "concurrency_llama3_8b",
  base = "../../scenarios/llama3_8b_h100.lua",
  set = {duration = "300s"},
  axes = {
    {field = "workload.arrival.concurrency", values = {1, 8, 32, 64, 128, 256, 512}},
  },
}
