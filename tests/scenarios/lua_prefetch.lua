-- lua_prefetch.lua - the small tiered setup of policies.lua with random
-- selection (misses open prefetch windows), prefetching by a Lua rule that
-- always answers 4: it must match the built-in prefetch_window = 4 exactly.
local s = dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "") .. "policies.lua")
s.name = "lua_prefetch"
s.sparse.policy = "random"
s.sparse.budget_tokens = 256
s.cache.prefetch_window = function(b) return 4 end
return s
