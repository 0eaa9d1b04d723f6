-- an inline profile missing figures, one of them misspelt
return {
  platform = {
    profile = {
      hbm_bytes = "80GB",
      hbm_bww = "2TBps",
    },
  },
}
