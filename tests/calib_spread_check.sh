#!/usr/bin/env bash
# tests/calib_spread_check.sh KVSTRATA ARGS...: runs `kvstrata ARGS... --json`
# (a calib host or calib check) and checks every measured DRAM and SSD point
# of its report: bytes_per_s_min <= bytes_per_s (the median window) <=
# bytes_per_s_max, and window_spread = (max - min) / median; and that each
# DRAM or SSD goal carries worst_window_spread and points_spread_beyond_goal
# computed from its points (the largest spread, and how many spread beyond
# the goal) - DRAM: the points above 64 KiB, SSD: every read point.
# Needs jq (a test dependency, tests/run.sh); skips (77) without it.
# Skips (77) too when --dir refuses O_DIRECT or is memory, as the other
# calib tests do.
set -euo pipefail
command -v jq > /dev/null || { echo "calib_spread_check: jq is not installed (apt-get install jq): skipped"; exit 77; }
ks=$1
shift
out=$(mktemp)
err=$(mktemp)
trap 'rm -f "$out" "$err"' EXIT
rc=0
"$ks" "$@" --json > "$out" 2> "$err" || rc=$?
if [ "$rc" != 0 ]; then
    cat "$err" >&2
    grep -q 'refuses O_DIRECT\|which is memory' "$err" && exit 77
    echo "calib_spread_check: exit status $rc" >&2
    exit 1
fi
# NOTE: reals are printed with 12 significant digits, so the spread is
# compared within 1e-9 of its value, not exactly
jq -e '
    def num: type == "number";
    def close($a; $b): ($a - $b) as $d | ($d * $d) <= 1e-18 * ($b * $b);
    def point_ok:
        (.bytes_per_s_min | num) and (.bytes_per_s | num) and (.bytes_per_s_max | num) and (.window_spread | num)
        and .bytes_per_s_min > 0 and .bytes_per_s_min <= .bytes_per_s and .bytes_per_s <= .bytes_per_s_max
        and close(.window_spread; (.bytes_per_s_max - .bytes_per_s_min) / .bytes_per_s);
    # a goal over the points $pts: its noise figures are theirs
    def goal_ok($pts):
        .goal as $goal
        | (.worst_window_spread | num) and (.points_spread_beyond_goal | num) and .points == ($pts | length)
        and close(.worst_window_spread; [$pts[] | .window_spread] | max)
        and .points_spread_beyond_goal == ([$pts[] | select(.window_spread > $goal)] | length);
    def goals($prefix): [.goals[] | select(.model | startswith($prefix))];
    . as $r
    | ([.dram, .dram_one_thread, .dram_all_threads, .ssd_read, .ssd_write] | map(select(. != null))) as $series
    | ($series | length) > 0
    and all($series[]; length > 0 and all(.[]; point_ok))
    # calib check has goals (with --dir the SSD ones), calib host none
    and (if .goals == null then .dram == null
         else (goals("dram") | length == 1 and all(.[]; goal_ok([$r.dram[] | select(.bytes > 65536)])))
              and (if .ssd_read then (goals("ssd") | length == 2 and all(.[]; goal_ok($r.ssd_read)))
                   else goals("ssd") == [] end)
         end)
' "$out" > /dev/null || {
    echo "calib_spread_check: a point or goal fails the checks above; the report:" >&2
    cat "$out" >&2
    exit 1
}
echo "calib_spread_check: every point and goal consistent"
