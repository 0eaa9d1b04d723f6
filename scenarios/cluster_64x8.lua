-- cluster_64x8.lua - a cluster of 64 nodes x 8 H200 GPUs (512 GPUs).
--
-- Question: does the simulator scale to a 512-GPU cluster (fat-tree network,
-- 64 hosts' DRAM, 64 x drives) in minutes of wall time, and does a 32K-context
-- load spread by the least-loaded router keep every GPU's ITL within the
-- SLO? The run is short (10 s simulated): about 3 s of wall time here.
-- `--set sparse.policy=window` gives the same run with position-rule selection.
-- Faster, at a level of detail: `--set detail.nodes=8` simulates 8 of the 64
-- nodes with their share of the arrivals (README, detail.nodes: its error,
-- most of it the least-loaded router balancing over fewer GPUs).
--   /usr/bin/time -v build/kvstrata run scenarios/cluster_64x8.lua -o /tmp/cluster.h5
-- How to read: wall_s (and the peak memory /usr/bin/time reports) for the
-- simulator's cost; itl_p99 against slo_itl_p99 (slo_met), output_throughput
-- over the cluster, requests_arrived vs requests_admitted.
local ks = require "kvstrata"

return {
  name = "cluster_64x8",
  seed = 1,
  duration = "10s",

  platform = {
    profile = "h200_sxm_pcie5",
    nodes = 64,
    gpus_per_node = 8,
    network = {topology = "fat_tree"},
  },

  model = {layers = 32, kv_heads = 8, head_dim = 128, dtype = "fp16",
           weight_bytes = "16GB", max_context = 65536},

  workload = {
    arrival = ks.poisson(200),    -- requests/s over the cluster (~0.4/s per GPU: ~60% of prefill capacity)
    prompt_tokens = {kind = "lognormal", mu = 10.397, sigma = 0.5, min = 4096, max = 61440},  -- median 32K
    output_tokens = {kind = "uniform", min = 128, max = 1024},
  },

  router = "least_loaded",

  -- selections drawn from the access model fitted to a recorded trace (32 layers,
  -- synthetic drifting attention through the reference kernels, 8K contexts):
  -- per-layer, attention-like accesses at O(selected blocks) per request and step
  sparse = {policy = "model", fit = "../results/traces/synthetic_drifting_8k.h5",
            budget_tokens = 2048, sink_blocks = 1, window_blocks = 4},

  cache = {block_size = 32, l1 = "85%", l2 = "90%", l3 = "ssd", evict = "heat",
           prefetch_window = 4, migration_batch = 32},

  slo = {itl_p99 = "50ms"},
}
