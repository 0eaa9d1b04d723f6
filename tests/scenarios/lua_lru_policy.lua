-- lua_lru_policy.lua - LRU as a Lua function, for `bench cache --lua`.
return {evict = function(b) return b.last end}
