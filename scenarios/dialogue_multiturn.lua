-- dialogue_multiturn.lua - long multi-turn dialogues on one 8-GPU node.
--
-- Question: when conversations run 8 turns, each turn's prompt repeating the
-- whole history (previous prompt + answer) plus a new user message, how do
-- TTFT and TPOT degrade as contexts grow turn after turn, and does the KV
-- stay in HBM (hit_rate_l1) or spill to host DRAM?
--   build/kvstrata run scenarios/dialogue_multiturn.lua -o /tmp/dialogue.h5
-- How to read: ttft_p50 vs ttft_p99 (late turns have long histories to
-- prefill: the engine prefills each turn's whole prompt again), itl_p99,
-- hit_rate_l1 and stall_fraction; per-request figures (turn by turn) are in
-- /requests of the result file (prompt, first_token - arrival).
local ks = require "kvstrata"

return {
  name = "dialogue_multiturn",
  seed = 1,
  duration = "60s",

  platform = {profile = "h200_sxm_pcie5", nodes = 1, gpus_per_node = 8},

  model = {layers = 32, kv_heads = 8, head_dim = 128, dtype = "fp16",
           weight_bytes = "16GB", max_context = 131072},

  workload = {
    arrival = ks.poisson(2),      -- new conversations/s over the node (8 turns each)
    -- the first turn carries a 2K-8K context (a system prompt, a document);
    -- later turns add the history plus a new message from this distribution
    prompt_tokens = {kind = "uniform", min = 2048, max = 8192},
    output_tokens = {kind = "uniform", min = 128, max = 768},
    sessions = {turns = 8, think_time = "5s"},
  },

  sparse = {policy = "window", budget_tokens = 2048, sink_blocks = 1, window_blocks = 4},

  cache = {block_size = 32, l1 = "85%", l2 = "90%", l3 = "ssd", evict = "heat",
           prefetch_window = 4, migration_batch = 32},

  slo = {itl_p99 = "50ms"},
}
