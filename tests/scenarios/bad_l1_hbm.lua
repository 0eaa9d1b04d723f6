return {
  platform = {profile = "h100_sxm_pcie5"},
  model = {weight_bytes = "16GB"},
  cache = {
    l1 = "70GB",
  },
}
