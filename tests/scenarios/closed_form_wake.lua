-- closed_form_miss.lua with a host that takes 10 us to wake an idle thread
-- (platform.host_wake, one point: the same whatever the idleness). The step's
-- plan wakes a migration lane (10 us) before the demotion; the lane that
-- lands the demotion takes the promotion awake; the decode loop, which
-- waited for it, runs 10 us after it lands. TPOT = 7.244928 us + 2 x 10 us
-- = 27.244928 us.
local s = dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "") .. "closed_form_miss.lua")
s.name = "closed_form_wake"
s.platform.host_wake = {idle = {1}, seconds = {10e-6}, source = "a test figure", kind = "assumed"}
return s
