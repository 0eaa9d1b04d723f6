-- closed_form_miss.lua with a host_wake table whose idle times go backwards
-- and that has a field it does not know.
local s = dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "") .. "closed_form_miss.lua")
s.platform.host_wake = {idle = {1e-3, 1e-4}, seconds = {40e-6, 10e-6}, source = "a test figure", kind = "assumed",
                        samples = 3}
return s
