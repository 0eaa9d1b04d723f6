-- cluster_128x8.lua - cluster_64x8.lua doubled: 128 nodes x 8 H200 GPUs (1,024 GPUs).
--
-- Question: what does a 1,024-GPU cluster cost the simulator, in wall time
-- per simulated second and in memory per GPU, at the same load per GPU as
-- cluster_64x8.lua (twice its arrival rate over twice its GPUs)? Issue 19's
-- goal is 10 simulated minutes in under 10 wall minutes.
--   /usr/bin/time -v build/kvstrata run scenarios/cluster_128x8.lua -o /tmp/cluster1024.h5
-- shortened: --set duration=10s. How to read: wall_s over sim_time, the peak
-- memory /usr/bin/time reports over 1,024; the figures per GPU should match
-- cluster_64x8.lua's.
local ks = require "kvstrata"
local base = include "cluster_64x8.lua"

return ks.merge(base, {
  name = "cluster_128x8",
  duration = "600s",
  platform = {nodes = 128},
  workload = {arrival = ks.poisson(400)},  -- requests/s over the cluster: cluster_64x8's per GPU
})
