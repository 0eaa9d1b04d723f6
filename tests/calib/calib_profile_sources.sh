#!/usr/bin/env bash
# tests/calib/calib_profile_sources.sh DIR: every figure of the profiles in DIR
# (calib/profiles/*.lua) says where it comes from in the profile itself. No profile refers
# to a file outside the repository (the team's HARDWARE.md, once); a figure
# of kind "datasheet" names the datasheet it was read from; a figure whose
# source calls it an estimate is not of kind "datasheet" (calib/README.md,
# Profiles). Reads the profiles with lua5.4; skips (77) without it.
set -euo pipefail
command -v lua5.4 > /dev/null || { echo "calib_profile_sources: lua5.4 is not installed: skipped"; exit 77; }
[ $# = 1 ] && [ -d "$1" ] || { echo "usage: calib_profile_sources.sh DIR" >&2; exit 2; }
set -- "$1"/*.lua
bad=0
for f in "$@"; do
    if grep -n "HARDWARE" "$f"; then
        echo "calib_profile_sources: $f refers to a file that is not in the repository" >&2
        bad=1
    fi
done
lua5.4 - "$@" << 'LUA' || bad=1
local bad = false
local function walk(file, t, path)
    for k, v in pairs(t) do
        if type(v) == "table" and v.source ~= nil then
            local what = file .. ": " .. path .. k
            if v.kind == "datasheet" and not v.source:find("datasheet") then
                print(what .. ": kind datasheet, but its source names no datasheet: " .. v.source)
                bad = true
            end
            if v.kind == "datasheet" and v.source:find("estimate") then
                print(what .. ": an estimate of kind datasheet: " .. v.source)
                bad = true
            end
        elseif type(v) == "table" and k ~= "host_wake" and k ~= "kernel_time" then
            walk(file, v, path .. k .. ".")
        end
    end
end
for _, file in ipairs(arg) do walk(file, dofile(file), "") end
os.exit(bad and 1 or 0)
LUA
[ "$bad" = 0 ] && echo "calib_profile_sources: $# profiles, every figure's source in order"
exit "$bad"
