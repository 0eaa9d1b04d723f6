return {
  platform = {profile = "h200_sxm_pcie5"}
  cache = {},
}
