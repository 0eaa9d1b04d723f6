-- lua_lru.lua - the small tiered setup of policies.lua with random selection
-- (every step misses), evicting by a Lua function that scores a block by its
-- last access: LRU written in Lua, which must match the built-in lru exactly.
local s = dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "") .. "policies.lua")
s.name = "lua_lru"
s.sparse.policy = "random"
s.cache.evict = function(b) return b.last end
return s
