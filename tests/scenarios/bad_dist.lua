local ks = require "kvstrata"
return {
  platform = {profile = "h200_sxm_pcie5"},
  workload = {
    prompt_tokens = {kind = "lognormal", mu = 8},
    output_tokens = ks.uniform{min = 500, max = 100},
    arrival = {kind = "closed", rate = 3},
  },
}
