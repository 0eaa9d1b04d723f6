-- base.lua - a small valid scenario the tests vary with --set.
return {
  platform = {profile = "h200_sxm_pcie5"},
  workload = {prompt_tokens = 8192, output_tokens = {kind = "uniform", min = 64, max = 256}},
}
