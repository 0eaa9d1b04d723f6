return {
  platform = {profile = "h200_sxm_pcie5"},
  model = {
    weight_bytes = -5,
    layers = "many",
  },
  cache = {l2 = "-10GB"},
}
