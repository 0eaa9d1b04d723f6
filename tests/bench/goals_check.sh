#!/usr/bin/env bash
# tests/bench/goals_check.sh KVSTRATA: `tests/bench/goals.sh --quick --reps 1`
# with KVSTRATA (no build) prints a header naming the CPU, one row per goal
# of issue 19 (12) with a figure (a number, or what was not run: the loaded
# 512 GPUs at full detail, the 1,024 GPUs at full detail without
# --full-1024; the loaded cluster's level with the seeds of the error study
# within 2%), the verdict "-" (a quick run judges nothing) and the command
# that ran, then speed.sh's JSON lines and the 1,024-GPU run's; --out keeps
# what it printed, and --table-only on that folder prints the same table
# without running anything. A usage error exits 2.
set -euo pipefail
ks=$1
here=$(cd "$(dirname "$0")" && pwd)
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail() { echo "goals_check: $*" >&2; cat "$dir/out" >&2 2> /dev/null || true; exit 1; }

"$here/goals.sh" --quick --reps 1 --new "$ks" --out "$dir/rec" > "$dir/out" 2> "$dir/err" ||
    { cat "$dir/err" >&2; fail "goals.sh failed"; }
cpu=$("$ks" info --json | jq -r .cpu)
head -n 1 "$dir/out" | grep -q "^kvstrata against issue 19's goals, " || fail "no header"
head -n 1 "$dir/out" | grep -Fq ", $cpu, $(nproc) cores, median of 1" || fail "the header does not name the CPU"
grep -q '^--quick: ' "$dir/out" || fail "no line saying the run was quick"

# the rows: the goal's text, then the figure, "-" and the command, in the
# columns goals.sh prints them (goal 70 wide, figure 46, verdict 7; a longer
# figure pushes the verdict and the command right, one space after it)
rows=$(grep -E '^(bench cache|dense|512 GPUs|loaded 512|1,024 GPUs)' "$dir/out") || fail "no goal rows"
[ "$(echo "$rows" | wc -l)" = 12 ] || fail "expected 12 goal rows"
echo "$rows" | awk '
    {
        goal = substr($0, 1, 70); rest = substr($0, 72); w = 46
        if (substr(rest, w + 1, 1) != " ") # the figure overflowed: it ends at the next space
            w += index(substr(rest, w + 1), " ") - 1
        fig = substr(rest, 1, w); v = substr(rest, w + 2, 7); cmd = substr(rest, w + 10)
        sub(/ +$/, "", fig); sub(/ +$/, "", v)
        if (v != "-") { print "verdict not \"-\": " $0; bad = 1 }
        if (goal ~ /full detail: < 10 min/) {
            if (fig != "not run (--full-1024)" || cmd != "-") { print "full 1,024 row: " $0; bad = 1 }
        } else if (goal ~ /^loaded 512 GPUs, full detail/) {
            if (fig !~ /^not run \(about [0-9]+ GB\); 8 GPUs [0-9.]+ x 64 = [0-9]+$/) { print "loaded row: " $0; bad = 1 }
        } else if (goal ~ /^loaded 512 GPUs, a level/) { # its speed, and the seeds of the error study within 2%
            if (fig !~ /^[0-9][0-9.]*; [0-9]+ of [1-9][0-9]* seeds within 2%$/ || !(fig + 0 > 0)) { print "loaded level row: " $0; bad = 1 }
        } else if (fig !~ /^[0-9][0-9.]*( M| B| s| MB| s, [0-9.]+ GB)?$/ || !(fig + 0 > 0)) {
            print "bad figure: " $0; bad = 1
        }
        if (goal !~ /bytes a block|MB per GPU|full detail: < 10 min/ && cmd !~ /^(bench cache|run scenarios\/)/) {
            print "bad command: " $0; bad = 1
        }
    }
    END { exit bad }' || fail "bad rows"

grep '^{"speed"' "$dir/out" > "$dir/lines" || fail "no JSON line"
jq -e -s 'map(.case) | sort == (["cache_heat", "cache_lru", "cluster", "cluster_lod", "dense", "loaded", "loaded_time"] | sort)' \
    "$dir/lines" > /dev/null || fail "not the seven speed.sh cases"
grep -q '^{"command":"run scenarios/cluster_128x8.lua --set duration=10s --set detail.gpus=64 --set detail.layers=4",' \
    "$dir/out" || fail "no 1,024-GPU run"

# the record: table.txt is the printed table, and --table-only reprints it
for f in header.txt speed.txt loaded.txt k_lod.json k_full.json lod_error.json table.txt; do
    [ -s "$dir/rec/$f" ] || fail "--out kept no $f"
done
sed -n '/^{/q;p' "$dir/out" | sed '$d' | cmp -s - "$dir/rec/table.txt" || fail "table.txt is not the printed table"
"$here/goals.sh" --table-only "$dir/rec" | cmp -s - "$dir/rec/table.txt" || fail "--table-only prints another table"
st=0
"$here/goals.sh" --reps 0 > /dev/null 2>&1 || st=$?
[ $st = 2 ] || fail "--reps 0 exited $st, not 2"
echo "goals_check: ok"
