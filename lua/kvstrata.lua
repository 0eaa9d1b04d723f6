-- kvstrata.lua - helpers for scenario files: `local ks = require "kvstrata"`.
--
-- Every helper returns plain values (numbers, strings, tables): a scenario is
-- a plain table, and the helpers only spare some typing. What the simulator
-- accepts is decided by the C loader (sim/scenario/scenario.c), not here; these
-- helpers check just enough to fail early with a clear message.
--
-- Files run in kvstrata's Lua sandbox (README: "The Lua sandbox"): no io, os
-- or debug; `require` finds only these helpers; another scenario is composed
-- with include "FILE.lua" (relative to the including file's folder), also
-- reachable as ks.include.
local M = {}

M.include = include

-- Sizes in bytes (integers when exact).
local function scale(f)
  return function(n)
    local v = n * f
    return math.tointeger(v) or v
  end
end
M.B = scale(1)
M.kB, M.MB, M.GB, M.TB = scale(10 ^ 3), scale(10 ^ 6), scale(10 ^ 9), scale(10 ^ 12)
M.KiB, M.MiB, M.GiB, M.TiB = scale(1 << 10), scale(1 << 20), scale(1 << 30), scale(1 << 40)

-- Bandwidths in bytes/s; Gbps is bits.
M.MBps, M.GBps, M.TBps = scale(10 ^ 6), scale(10 ^ 9), scale(10 ^ 12)
M.GiBps = scale(1 << 30)
M.Gbps = scale(10 ^ 9 / 8)

-- Times in seconds.
M.ns, M.us, M.ms, M.s = scale(1e-9), scale(1e-6), scale(1e-3), scale(1)
M.min, M.h = scale(60), scale(3600)

-- A share as the loader reads it ("85%"): cache.l1 = ks.percent(85). A plain
-- number there would mean bytes.
function M.percent(p)
  return string.format("%.10g%%", p)
end

-- Token-count distributions.
function M.constant(n)
  return {kind = "constant", value = n}
end

function M.uniform(t)
  return {kind = "uniform", min = t.min or t[1], max = t.max or t[2]}
end

function M.lognormal(t)
  return {kind = "lognormal", mu = t.mu, sigma = t.sigma, min = t.min, max = t.max}
end

function M.normal(t)
  return {kind = "normal", mean = t.mean, stddev = t.stddev, min = t.min, max = t.max}
end

function M.trace(t)
  return {kind = "trace", file = type(t) == "table" and t.file or t}
end

-- Arrivals.
function M.poisson(rate)
  return {kind = "poisson", rate = rate}
end

function M.closed(concurrency)
  return {kind = "closed", concurrency = concurrency}
end

function M.arrival_trace(file)
  return {kind = "trace", file = file}
end

-- The value that deletes a field in ks.merge: {arrival = {rate = ks.delete}}
-- leaves no rate. It holds nothing and takes nothing.
M.delete = setmetatable({}, {
  __tostring = function() return "ks.delete" end,
  __newindex = function() error("ks.delete only marks a field for ks.merge to delete", 2) end,
})

-- A deep copy of base with the fields of over written over it (tables merge
-- field by field; anything else replaces; ks.delete removes the field):
-- variants of one scenario.
function M.merge(base, over)
  local out = {}
  for k, v in pairs(base or {}) do
    if v ~= M.delete then -- a deletion with nothing to delete
      out[k] = type(v) == "table" and M.merge(v, nil) or v
    end
  end
  for k, v in pairs(over or {}) do
    if v == M.delete then
      out[k] = nil
    elseif type(v) == "table" and type(out[k]) == "table" then
      out[k] = M.merge(out[k], v)
    elseif type(v) == "table" then
      out[k] = M.merge(v, nil)
    else
      out[k] = v
    end
  end
  return out
end

-- Model presets, each field citing the public config it comes from
-- (lua/models.lua): model = ks.models.llama3_8b.
M.models = require "models"

-- A profile figure with its provenance (profiles use this shape).
function M.figure(value, source, kind)
  return {value = value, source = source, kind = kind or "datasheet"}
end

return M
