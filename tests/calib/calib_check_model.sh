#!/usr/bin/env bash
# tests/calib/calib_check_model.sh KVSTRATA DIR SCENARIO [PROFILE]: recomputes the
# numbers of `calib check --quick --dir DIR --json` from the profile's
# figures, and compares.
#
# PROFILE is a profile file; without it one is made first, as the other calib
# tests make theirs: `calib host --quick --dir DIR -o DIR/calib_model.lua`.
# The figures come from the scenario loader, not from calib check: a scenario
# that takes SCENARIO (scenarios/default.lua) with PROFILE inline, through
# `kvstrata scenario check --json` (the simulator's own reading, defaults
# included: a profile without op times charges 0). host_wake, which that
# report lacks, is read with lua5.4 when it is installed.
#
# Per point, with the closed forms of calib/README.md:
#   DRAM:      predicted_s = threads * bytes * moved / dram_bw (check's model
#              has no latency term), moved = 3 below dram_nt_threshold, 2 at
#              or above it (2 everywhere when the threshold is 0: unknown);
#   SSD reads: predicted_s = ssd.lat + qd * read_op_time + qd * bytes / read_bw;
#   writes:    predicted_s = ssd.lat + qd * write_op_time + qd * bytes / write_bw
#              (the simulator's write link has ssd.lat, sim/engine/platform.c);
#   wake-ups:  predicted_s = the profile's host_wake seconds at that idle time;
#   every point: rel_error = (predicted - measured) / measured (and the SSD
#   reads' sim_rel_error from simulated_s).
# Per goal: its points (DRAM: above 64 KiB), worst_rel_error = their largest
# |rel_error|, goal (5% DRAM, 10% SSD, 25% wake-ups), met = worst <= goal;
# all_goals_met = every goal met.
# Needs jq (skips, 77, without it); skips too when DIR refuses O_DIRECT.
set -euo pipefail
command -v jq > /dev/null || { echo "calib_check_model: jq is not installed (apt-get install jq): skipped"; exit 77; }
[ $# -ge 3 ] && [ $# -le 4 ] || { echo "usage: calib_check_model.sh KVSTRATA DIR SCENARIO [PROFILE]" >&2; exit 2; }
ks=$1 dir=$2 scen=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# runs kvstrata ARGS > $tmp/out; a directory that refuses O_DIRECT is a skip
run() {
    local rc=0
    "$ks" "$@" > "$tmp/out" 2> "$tmp/err" || rc=$?
    [ "$rc" = 0 ] && return 0
    cat "$tmp/err" >&2
    grep -q 'refuses O_DIRECT\|which is memory' "$tmp/err" && exit 77
    echo "calib_check_model: kvstrata $* exited $rc" >&2
    exit 1
}

if [ $# = 4 ]; then
    profile=$4
else
    profile=$dir/calib_model.lua
    run calib host --quick --dir "$dir" -o "$profile"
fi
cat > "$tmp/scenario.lua" << EOF
local s = include("$scen")
s.platform.profile = include("$profile")
return s
EOF
run scenario check "$tmp/scenario.lua" --json
mv "$tmp/out" "$tmp/figures.json"
wake='null'
if command -v lua5.4 > /dev/null; then
    # {idle: [...], seconds: [...]}, or null when the profile has none
    wake=$(lua5.4 - "$profile" << 'LUA'
local w = dofile(arg[1]).host_wake
if not w then print("null") return end
local function list(t)
    local o = {}
    for i, v in ipairs(t) do o[i] = string.format("%.17g", v) end
    return "[" .. table.concat(o, ",") .. "]"
end
print("{\"idle\":" .. list(w.idle) .. ",\"seconds\":" .. list(w.seconds) .. "}")
LUA
)
else
    echo "calib_check_model: no lua5.4: host_wake's predicted_s not checked against the profile"
fi
run calib check "$profile" --quick --dir "$dir" --json
mv "$tmp/out" "$tmp/check.json"

# NOTE: reals are printed with 12 significant digits, so figures are compared
# within 1e-9 of their value. A relative error is compared within 1e-9 of
# predicted / measured = 1 + rel_error, the ratio it is computed from: an
# error near 0 carries the rounding of both times, not 1e-9 of itself.
jq -e --slurpfile f "$tmp/figures.json" --argjson wake "$wake" '
    def abs: if . < 0 then -. else . end;
    def close($a; $b): ($a - $b | abs) <= 1e-9 * ($b | abs);
    def close_rel($a; $b): ($a - $b | abs) <= 1e-9 * (1 + $b | abs);
    def rel_ok($measured): close_rel(.rel_error; (.predicted_s - $measured) / $measured);
    def goal($prefix): [.goals[] | select(.model | startswith($prefix))];
    # one goal over the errors $e, with the goal $g
    def goal_ok($e; $g):
        length == 1 and (.[0] | .points == ($e | length) and .goal == $g
            and close(.worst_rel_error; [$e[] | abs] | max) and .met == (.worst_rel_error <= .goal));
    . as $r | $f[0] as $p
    | $p["platform.dram_bw"] as $dram_bw | $p["platform.ssd.lat"] as $lat
    | $p["platform.ssd.read_bw"] as $rbw | ($p["platform.ssd.read_op_time"] // 0) as $rop
    | $p["platform.ssd.write_bw"] as $wbw | ($p["platform.ssd.write_op_time"] // 0) as $wop
    | .dram_nt_threshold as $nt | .threads as $thr
    | def moved($b): if $nt > 0 and $b < $nt then 3 else 2 end;
    close(.dram_bw; $dram_bw)
    # DRAM
    and (.dram | length > 0) and all(.dram[];
        .threads == $thr and close(.predicted_s; .threads * .bytes * moved(.bytes) / $dram_bw)
        and rel_ok(.seconds_per_copy))
    and (goal("dram") | goal_ok([$r.dram[] | select(.bytes > 65536) | .rel_error]; 0.05))
    # SSD reads, their simulation, SSD writes
    and (.ssd_read | length > 0) and all(.ssd_read[];
        close(.predicted_s; $lat + .qd * $rop + .qd * .bytes / $rbw) and rel_ok(.seconds_per_request)
        and close_rel(.sim_rel_error; (.simulated_s - .seconds_per_request) / .seconds_per_request))
    and (goal("ssd reads:") | goal_ok([$r.ssd_read[] | .rel_error]; 0.10))
    and (goal("ssd reads simulated") | goal_ok([$r.ssd_read[] | .sim_rel_error]; 0.10))
    and (.ssd_write | length == ($r.ssd_read | length)) and all(.ssd_write[];
        close(.predicted_s; $lat + .qd * $wop + .qd * .bytes / $wbw) and rel_ok(.seconds_per_request))
    and ([.ssd_write[] | [.bytes, .qd]] == [.ssd_read[] | [.bytes, .qd]])
    and (goal("ssd writes") | goal_ok([$r.ssd_write[] | .rel_error]; 0.10))
    # wake-ups: the profile host_wake points, when it has them
    and (if .host_wake then
            all(.wake[]; rel_ok(.seconds))
            and (goal("host wake-up") | goal_ok([$r.wake[] | .rel_error]; 0.25))
            and (if $wake == null then true
                 else (.wake | length) == ($wake.idle | length)
                      and all(range(.wake | length); . as $i | $r.wake[$i]
                              | close(.idle_s; $wake.idle[$i]) and close(.predicted_s; $wake.seconds[$i])) end)
         else .wake == null and goal("host wake-up") == [] end)
    and .all_goals_met == all(.goals[]; .met)
' "$tmp/check.json" > /dev/null || {
    echo "calib_check_model: a prediction, error or goal differs from the profile's closed form; figures:" >&2
    jq '{dram_bw: ."platform.dram_bw", ssd_lat: ."platform.ssd.lat", read_bw: ."platform.ssd.read_bw",
         read_op_time: ."platform.ssd.read_op_time", write_bw: ."platform.ssd.write_bw",
         write_op_time: ."platform.ssd.write_op_time"}' "$tmp/figures.json" >&2
    echo "host_wake: $wake; the report:" >&2
    cat "$tmp/check.json" >&2
    exit 1
}
echo "calib_check_model: every predicted_s, rel_error, worst_rel_error and met agrees with $profile's figures"
