return {
  platform = {profile = "h200_sxm_pcie5"},
  cache = {
    blok_size = 16,
  },
  worklaod = {},
}
