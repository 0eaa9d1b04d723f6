#!/usr/bin/env bash
# tests/calib/calib_spread_check.sh KVSTRATA ARGS...: runs `kvstrata ARGS... --json`
# (a calib host or calib check) and checks every measured DRAM and SSD point
# of its report: bytes_per_s_min <= bytes_per_s (the median window) <=
# bytes_per_s_max, and window_spread = (max - min) / median; and that each
# DRAM or SSD goal carries worst_window_spread and points_spread_beyond_goal
# computed from its points (the largest spread, and how many spread beyond
# the goal) - DRAM: the points above 64 KiB, SSD: every read point (the two
# read goals) and every write point (the write goal).
# Wake-ups (the `wake` array: always in calib host, in calib check when the
# profile has host_wake): every point has idle_s, samples, seconds (the
# median), p10_s and p90_s with min_s <= p10_s <= seconds <= p90_s <= max_s
# and spread = (p90 - p10) / median, idle times strictly increasing; in
# calib check also predicted_s and rel_error = (predicted - median) / median,
# and one "host wake-up" goal over them, whose worst_rel_error is theirs (no
# wake array: no such goal, and host_wake false).
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
# NOTE: reals are printed with 12 significant digits, so a ratio computed
# from them (a spread, a relative error) is compared within 1e-9 of its value
# or, below 1, within 1e-9 absolute: a relative error near 0 is a difference
# of two nearly equal printed figures and carries about 1e-12 absolute, which
# is far more than 1e-9 of itself (CI, 2026-12-01: a wake-up predicted within
# 0.02% failed the purely relative comparison)
jq -e '
    def num: type == "number";
    def close($a; $b): ($a - $b) as $d | ($d * $d) <= 1e-18 * ([$b * $b, 1] | max);
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
    def wake_ok($check):
        (.idle_s | num) and (.samples | num) and (.seconds | num) and (.p10_s | num) and (.p90_s | num)
        and (.min_s | num) and (.max_s | num) and (.spread | num)
        and .idle_s > 0 and .samples >= 1 and .seconds > 0
        and .min_s <= .p10_s and .p10_s <= .seconds and .seconds <= .p90_s and .p90_s <= .max_s
        and close(.spread; (.p90_s - .p10_s) / .seconds)
        and (if $check then (.predicted_s | num) and (.rel_error | num)
                            and close(.rel_error; (.predicted_s - .seconds) / .seconds)
             else true end);
    def increasing: . as $a | all(range(1; $a | length); $a[.] > $a[. - 1]);
    def wake_series_ok($check): length > 0 and all(.[]; wake_ok($check)) and ([.[] | .idle_s] | increasing);
    def abs: if . < 0 then -. else . end;
    . as $r
    | ([.dram, .dram_one_thread, .dram_all_threads, .ssd_read, .ssd_write] | map(select(. != null))) as $series
    | ($series | length) > 0
    and all($series[]; length > 0 and all(.[]; point_ok))
    # calib check has goals (with --dir the SSD ones), calib host none
    and (if .goals == null then .dram == null and (.wake | type == "array" and wake_series_ok(false))
         else (goals("dram") | length == 1 and all(.[]; goal_ok([$r.dram[] | select(.bytes > 65536)])))
              and (if .ssd_read then (goals("ssd reads") | length == 2 and all(.[]; goal_ok($r.ssd_read)))
                       and (goals("ssd writes") | length == 1 and all(.[]; goal_ok($r.ssd_write)))
                   else goals("ssd") == [] and .ssd_write == null end)
              and (if .host_wake then
                       (.wake | wake_series_ok(true))
                       and (goals("host wake-up") | length == 1 and all(.[];
                           .points == ($r.wake | length)
                           and close(.worst_rel_error; [$r.wake[] | .rel_error | abs] | max)
                           and .met == (.worst_rel_error <= .goal)))
                   else .host_wake == false and .wake == null and goals("host wake-up") == [] end)
         end)
' "$out" > /dev/null || {
    echo "calib_spread_check: a point or goal fails the checks above; the report:" >&2
    cat "$out" >&2
    exit 1
}
echo "calib_spread_check: every point and goal consistent"
