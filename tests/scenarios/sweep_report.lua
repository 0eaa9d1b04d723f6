-- sweep_report.lua - a 2 x 2 sweep of the closed form for the sweep report
-- test: HBM bandwidth (strings with units) by layers (numbers), so each
-- axis's plots have one line per value of the other axis.
return {
  base = "closed_form.lua",
  axes = {
    {field = "platform.hbm_bw", values = {"1TBps", "2TBps"}},
    {field = "model.layers", values = {16, 32}},
  },
}
