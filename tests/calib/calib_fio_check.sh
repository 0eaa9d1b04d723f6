#!/usr/bin/env bash
# tests/calib/calib_fio_check.sh ARGS...: runs `calib/fio_compare.sh ARGS...` and
# checks that fio's side of every point is windows, as its header promises:
# every point's fio_n (how many of fio's windows were kept) is 1 to 5 or
# "run" (none: fio's whole-run figure), the closing line names exactly the
# points whose fio_n is not 5, and at least half the points have all 5
# windows (quick mode once logged none at most points and took fio's
# whole-run figure without saying so). Passes fio_compare.sh's exit status
# on otherwise (77: skipped, 1: a point beyond the tolerance).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=$(mktemp)
trap 'rm -f "$out"' EXIT
"$here/../../calib/fio_compare.sh" "$@" > "$out"
rc=$?
cat "$out"
[ "$rc" = 77 ] && exit 77
# the point lines: op bytes qd ours ours_windows fio fio_windows fio_n diff ranges verdict
awk '
    $1 == "op" { head = ($8 == "fio_n") ; next }
    $1 == "read" || $1 == "write" {
        n++
        if ($8 == 5) full++
        else if ($8 == "run" || ($8 ~ /^[1-4]$/)) want = want " " $1 " " $2 "x" $3 " (" $8 ")"
        else { print "calib_fio_check: bad fio_n " $8 " at " $1 " " $2 "x" $3; bad = 1 }
        next }
    /^fio logged 5 windows at every point$/ { said = "" ; closing = 1; next }
    /^fio logged fewer than 5 windows at / { sub(/^[^)]*\)\):/, ""); said = $0; closing = 1; next }
    END {
        if (!head) { print "calib_fio_check: no fio_n column"; exit 1 }
        if (!closing) { print "calib_fio_check: no closing line on fio windows"; exit 1 }
        if (said != want) { print "calib_fio_check: closing line names" said "; points short of 5:" want; exit 1 }
        if (bad || n == 0) exit 1
        if (2 * full < n) { print "calib_fio_check: only " full + 0 " of " n " points with 5 fio windows"; exit 1 }
        print "calib_fio_check: " full " of " n " points with 5 fio windows; the others named"
    }' "$out" || exit 1
exit "$rc"
