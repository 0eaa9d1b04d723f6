-- lua_bad.lua - a Lua eviction policy that returns a string: the run fails
-- with the function's complaint, and writes no result.
local s = dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "") .. "lua_lru.lua")
s.cache.evict = function(b) return "old" end
return s
