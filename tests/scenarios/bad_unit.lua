return {
  platform = {
    profile = "h200_sxm_pcie5",
    pcie_lat = "25GBps",
    ssd = {read_bw = "7GBq"},
  },
}
