-- bad_fit.lua - the access model's fit and the replayed trace are not HDF5
-- files (this file and policies.lua): refused at load, at their lines.
local s = dofile(debug.getinfo(1, "S").source:match("^@(.*/)") .. "policies.lua")
s.sparse = {policy = "model",
            fit = "bad_fit.lua",
            file = "policies.lua"}
return s
