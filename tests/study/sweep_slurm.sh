#!/usr/bin/env bash
# tests/study/sweep_slurm.sh KVSTRATA SOURCE_DIR: --emit slurm writes a job-array
# script that bash accepts, with one task per point, and runs nothing;
# `--merge` on the folder names the points without a result (exit 1); the
# script's tasks, run here one by one as Slurm would, complete the points,
# after which --merge finds them all.
set -euo pipefail
ks=$1
src=$2
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail() { echo "sweep_slurm: $*" >&2; exit 1; }
num() { grep -o "\"$1\": [0-9.e+-]*" "$2" | head -1 | sed 's/.*: //'; }
expect() {
    [ "$(num "$1" "$3")" = "$2" ] || { cat "$3" >&2; fail "$1 is '$(num "$1" "$3")', expected $2"; }
}

# 3 values x 2 seeds = 6 points
cat > "$dir/grid.lua" <<EOF
return {
  base = "$src/tests/fixtures/scenarios/closed_form.lua",
  set = {["workload.output_tokens"] = 2},
  axes = {{field = "cache.block_size", values = {16, 32, 64}}},
  seeds = {1, 2},
}
EOF
out=$dir/out
"$ks" sweep "$dir/grid.lua" -o "$out" --emit slurm --json > "$dir/emit.json"
expect points 6 "$dir/emit.json"
expect complete 0 "$dir/emit.json"
[ -f "$out/sweep.slurm" ] || fail "no sweep.slurm"
bash -n "$out/sweep.slurm" || fail "bash -n rejects sweep.slurm"
grep -qx '#SBATCH --array=0-5' "$out/sweep.slurm" || fail "wrong --array: $(grep array "$out/sweep.slurm")"
[ "$(wc -l < "$out/commands.txt")" = 6 ] || fail "commands.txt should have 6 lines"
[ -z "$(ls "$out/points")" ] || fail "--emit ran points: $(ls "$out/points")"
# each command is the one the manifest records for that point, in order
grep '"command": ' "$out/sweep.json" | sed -e 's/^ *"command": "//' -e 's/",\?$//' -e 's/\\"/"/g' > "$dir/manifest_cmds"
cmp -s "$dir/manifest_cmds" "$out/commands.txt" || fail "commands.txt differs from the manifest's commands"
grep -q -- '--set seed=2 -o ' "$out/commands.txt" || fail "the seed axis is not in the commands"
# a point runs on one thread unless sweep --threads says otherwise (the points run side by side)
[ "$(grep -c -- ' --threads 1 --json ' "$out/commands.txt")" = 6 ] || fail "a command lacks --threads 1"

# nothing ran: --merge reports all 6 missing
st=0
"$ks" sweep --merge "$out" --json > "$dir/m0.json" 2> "$dir/m0.err" || st=$?
[ "$st" = 1 ] || fail "--merge with points missing: exit $st, expected 1"
expect missing 6 "$dir/m0.json"
expect merged 0 "$dir/m0.json"

# run tasks 0, 2 and 5 as Slurm would
for t in 0 2 5; do
    SLURM_ARRAY_TASK_ID=$t bash "$out/sweep.slurm" || fail "task $t failed"
done
st=0
"$ks" sweep --merge "$out" --json > "$dir/m1.json" 2> "$dir/m1.err" || st=$?
[ "$st" = 1 ] || fail "--merge with 3 points missing: exit $st, expected 1"
expect merged 3 "$dir/m1.json"
expect missing 3 "$dir/m1.json"
for t in 1 3 4; do
    id=$(sed -n "$((t + 1))p" "$out/commands.txt" | grep -o 'p000[0-9]-[0-9a-f]*' | head -1)
    grep -q "$id" "$dir/m1.err" || fail "--merge does not name the missing point $id: $(cat "$dir/m1.err")"
    grep -q "\"$id\"" "$dir/m1.json" || fail "--merge --json does not list $id"
done
[ "$(wc -l < "$out/summary.csv")" = 4 ] || fail "partial summary.csv: expected 3 rows"

for t in 1 3 4; do
    SLURM_ARRAY_TASK_ID=$t bash "$out/sweep.slurm" || fail "task $t failed"
done
"$ks" sweep --merge "$out" --json > "$dir/m2.json"
expect merged 6 "$dir/m2.json"
expect missing 0 "$dir/m2.json"
[ "$(wc -l < "$out/summary.csv")" = 7 ] || fail "summary.csv: expected 6 rows"
head -1 "$out/summary.csv" | grep -q '^id,cache.block_size,seed,sim_time,' || fail "header: $(head -1 "$out/summary.csv")"
[ "$(cut -d, -f2,3 "$out/summary.csv" | tail -n +2 | tr '\n' ' ')" = "16,1 16,2 32,1 32,2 64,1 64,2 " ] ||
    fail "rows: $(cut -d, -f2,3 "$out/summary.csv" | tr '\n' ' ')"
# a local rerun finds the cluster's results complete
"$ks" sweep "$dir/grid.lua" -o "$out" --json > "$dir/r.json"
expect ran 0 "$dir/r.json"
expect skipped 6 "$dir/r.json"
# --merge on a folder that is no sweep's
st=0
"$ks" sweep --merge "$dir" > /dev/null 2> "$dir/bad.err" || st=$?
[ "$st" = 2 ] && grep -q "sweep.json" "$dir/bad.err" || fail "--merge on a non-sweep folder: exit $st"
echo "sweep_slurm: 6 tasks emitted, run and merged"
