-- sweep_report.lua - a 2 x 2 sweep of the closed form for the sweep report
-- test: HBM bandwidth (numeric) by dtype (categorical).
return {
  base = "closed_form.lua",
  axes = {
    {field = "platform.hbm_bw", values = {"1TBps", "2TBps"}},
    {field = "model.dtype", values = {"fp16", "fp8"}},
  },
}
