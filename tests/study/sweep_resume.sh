#!/usr/bin/env bash
# tests/study/sweep_resume.sh KVSTRATA SOURCE_DIR: a 2x2 sweep of the closed-form
# scenario runs 4 points 2 at a time and merges them; a rerun after one point's
# files are deleted and another's result truncated runs exactly those two and
# merges the same table; a point whose run fails is reported, its stderr kept,
# the rest still merged, and the sweep exits 1.
set -euo pipefail
ks=$1
src=$2
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail() { echo "sweep_resume: $*" >&2; exit 1; }
num() { grep -o "\"$1\": [0-9.e+-]*" "$2" | head -1 | sed 's/.*: //'; }
expect() { # expect KEY VALUE FILE
    [ "$(num "$1" "$3")" = "$2" ] || { cat "$3" >&2; fail "$1 is '$(num "$1" "$3")', expected $2"; }
}
# the summary without its wall-clock column (the only figure a rerun changes)
strip_wall() {
    awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "wall_s") w = i }
             { out = ""; for (i = 1; i <= NF; i++) if (i != w) out = out (out == "" ? "" : ",") $i; print out }' "$1"
}

cat > "$dir/tiny.lua" <<EOF
return {
  name = "tiny",
  base = "$src/tests/fixtures/scenarios/closed_form.lua",
  axes = {
    {field = "cache.block_size", values = {16, 32}},
    {field = "workload.output_tokens", values = {2, 3}},
  },
}
EOF
out=$dir/out
"$ks" sweep "$dir/tiny.lua" -j 2 -o "$out" --json > "$dir/r1.json"
expect points 4 "$dir/r1.json"
expect ran 4 "$dir/r1.json"
expect skipped 0 "$dir/r1.json"
expect failed 0 "$dir/r1.json"
expect merged 4 "$dir/r1.json"
[ "$(ls "$out"/points/*.h5 | wc -l)" = 4 ] || fail "expected 4 point results: $(ls "$out/points")"
[ "$(ls "$out"/points/*.json | wc -l)" = 4 ] || fail "expected 4 point reports"
ls "$out/points" | grep -q part && fail "partial files left: $(ls "$out/points")"
[ -s "$out/sweep.json" ] && [ "$(wc -l < "$out/commands.txt")" = 4 ] || fail "no manifest or commands"
[ "$(grep -c '"status": "complete"' "$out/sweep.json")" = 4 ] || fail "the manifest lacks 4 complete points"

# the merged CSV: a header with the axis columns, 4 rows, the product in order
head -1 "$out/summary.csv" | grep -q '^id,cache.block_size,workload.output_tokens,seed,sim_time,' ||
    fail "CSV header: $(head -1 "$out/summary.csv")"
[ "$(wc -l < "$out/summary.csv")" = 5 ] || fail "CSV: expected a header and 4 rows"
[ "$(cut -d, -f2,3 "$out/summary.csv" | tail -n +2 | tr '\n' ' ')" = "16,2 16,3 32,2 32,3 " ] ||
    fail "CSV axis values: $(cut -d, -f2,3 "$out/summary.csv" | tr '\n' ' ')"
tokens=$(awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "tokens") t = i } NR > 1 { printf "%s ", $t }' \
    "$out/summary.csv")
[ "$tokens" = "2 3 2 3 " ] || fail "tokens per point: $tokens (expected 2 3 2 3)"
# the merged HDF5 table: 4 records, the id then the axis values as numbers
bash "$src/tests/h5_rows.sh" "$out/summary.h5" /summary > "$dir/rows"
[ "$(wc -l < "$dir/rows")" = 4 ] || fail "summary.h5: expected 4 records, got $(cat "$dir/rows")"
[ "$(cut -d, -f2,3 "$dir/rows" | tr '\n' ' ')" = "16,2 16,3 32,2 32,3 " ] ||
    fail "summary.h5 axis values: $(cut -d, -f1-3 "$dir/rows" | tr '\n' ' ')"
cut -d, -f1 "$dir/rows" | grep -qvE '^p000[0-3]-[0-9a-f]{8}$' && fail "summary.h5 ids: $(cut -d, -f1 "$dir/rows")"
strip_wall "$out/summary.csv" > "$dir/before.csv"

# resume: one point's files gone, another's result cut short
ids=($(cut -d, -f1 "$dir/rows"))
rm "$out/points/${ids[1]}.h5" "$out/points/${ids[1]}.json"
truncate -s 100 "$out/points/${ids[2]}.h5"
keep0=$(stat -c %Y.%i "$out/points/${ids[0]}.h5")
keep3=$(stat -c %Y.%i "$out/points/${ids[3]}.h5")
sleep 1
"$ks" sweep "$dir/tiny.lua" -j 2 -o "$out" --json > "$dir/r2.json"
expect ran 2 "$dir/r2.json"
expect skipped 2 "$dir/r2.json"
expect failed 0 "$dir/r2.json"
expect merged 4 "$dir/r2.json"
[ "$(stat -c %Y.%i "$out/points/${ids[0]}.h5")" = "$keep0" ] || fail "${ids[0]} was run again"
[ "$(stat -c %Y.%i "$out/points/${ids[3]}.h5")" = "$keep3" ] || fail "${ids[3]} was run again"
[ "$(stat -c %s "$out/points/${ids[2]}.h5")" -gt 100 ] || fail "${ids[2]} (truncated) was not run again"
strip_wall "$out/summary.csv" > "$dir/after.csv"
cmp -s "$dir/before.csv" "$dir/after.csv" || { diff "$dir/before.csv" "$dir/after.csv" >&2; fail "resumed summary differs"; }

# a rerun with everything complete runs nothing
"$ks" sweep "$dir/tiny.lua" -o "$out" --json > "$dir/r3.json"
expect ran 0 "$dir/r3.json"
expect skipped 4 "$dir/r3.json"

# a point that fails: its result path is taken by a folder, so the run cannot commit it
rm "$out/points/${ids[2]}.h5"
mkdir "$out/points/${ids[2]}.h5"
st=0
"$ks" sweep "$dir/tiny.lua" -j 2 -o "$out" --json > "$dir/r4.json" 2> "$dir/r4.err" || st=$?
[ "$st" = 1 ] || fail "a failed point: exit status $st, expected 1"
expect ran 1 "$dir/r4.json"
expect skipped 3 "$dir/r4.json"
expect failed 1 "$dir/r4.json"
expect merged 3 "$dir/r4.json"
expect missing 1 "$dir/r4.json"
grep -q "point ${ids[2]} failed (exit 1)" "$dir/r4.err" || fail "the failure is not reported: $(cat "$dir/r4.err")"
[ -s "$out/points/${ids[2]}.err" ] || fail "the failed point's stderr was not kept"
grep -q '"status": "failed"' "$out/sweep.json" || fail "the manifest does not record the failure"
[ "$(wc -l < "$out/summary.csv")" = 4 ] || fail "the summary should hold the 3 complete points"
echo "sweep_resume: 4 points run, 2 rerun after damage, 1 failure reported"
