#!/usr/bin/env bash
# tests/study/sweep_hostile.sh KVSTRATA SOURCE_DIR: sweeps against the hostile
# inputs of issue 16 (README "Sweeps"):
# - seeds beyond 2^53 (a Lua integer up to 2^63 - 1, a string above) reach each
#   point and its summary exactly; a seed above 2^64 - 1 is refused;
# - editing the base scenario gives every point a new id, so a rerun runs them
#   all again instead of keeping results made from the old base (an unchanged
#   rerun still skips them);
# - a second sweep into a folder that a sweep holds (flock on DIR/sweep.lock)
#   refuses with the holder's pid and runs nothing; once the lock is released
#   (the holder ends, or dies) the sweep runs.
set -euo pipefail
ks=$1
src=$2
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail() { echo "sweep_hostile: $*" >&2; exit 1; }
hostile=$src/tests/fixtures/hostile
jqn() { jq -r "$1" "$2"; }

# ---- seeds, exact end to end
"$ks" sweep "$hostile/sweep_seeds.lua" -j 2 -o "$dir/seeds" --json > "$dir/s.json" ||
    { cat "$dir/s.json"; fail "the seeds sweep failed"; }
[ "$(jqn .ran "$dir/s.json")" = 3 ] && [ "$(jqn .failed "$dir/s.json")" = 0 ] || fail "seeds: $(cat "$dir/s.json")"
got=$(jq -r '.points[].settings[]' "$dir/seeds/sweep.json" | tr '\n' ' ')
[ "$got" = "seed=9007199254740993 seed=9223372036854775807 seed=18446744073709551615 " ] ||
    fail "seeds: settings are '$got'"
# each point's summary records its seed exactly (read as text: jq would round past 2^53)
seeds=""
for id in $(jq -r '.points[].id' "$dir/seeds/sweep.json"); do
    seeds+="$(grep -o '"seed": [^,]*' "$dir/seeds/points/$id.json" | sed 's/"seed": //') "
done
[ "$seeds" = '9007199254740993 9223372036854775807 "18446744073709551615" ' ] || fail "seeds: summaries say $seeds"
# and the merged CSV holds them as written, not rounded
for s in 9007199254740993 9223372036854775807 18446744073709551615; do
    grep -q ",$s," "$dir/seeds/summary.csv" || fail "seeds: summary.csv lacks $s: $(cut -c1-200 "$dir/seeds/summary.csv")"
done
set +e
"$ks" sweep "$hostile/sweep_bad_seed.lua" -o "$dir/bad" > "$dir/b.out" 2> "$dir/b.err"
rc=$?
set -e
[ "$rc" = 2 ] || fail "a seed above 2^64 - 1: exit $rc, expected 2"
grep -q "sweep_bad_seed.lua: seeds\[1\]: expected a whole number from 0 to 2^64 - 1" "$dir/b.err" ||
    fail "a seed above 2^64 - 1: $(cat "$dir/b.err")"
[ ! -e "$dir/bad" ] || fail "a refused sweep made its folder"

# ---- the base scenario's content is part of every point's id
cp "$src/tests/fixtures/scenarios/closed_form.lua" "$dir/base.lua"
cat > "$dir/edit.lua" <<EOF
return {
  name = "edit",
  base = "base.lua",
  axes = {{field = "workload.output_tokens", values = {2, 3}}},
}
EOF
out=$dir/edit
"$ks" sweep "$dir/edit.lua" -j 2 -o "$out" --json > "$dir/e1.json"
[ "$(jqn .ran "$dir/e1.json")" = 2 ] || fail "base edit: first run: $(cat "$dir/e1.json")"
ids1=$(jq -r '.points[].id' "$out/sweep.json" | tr '\n' ' ')
ttft1=$(jq -r '.ttft_p99' "$out/points/${ids1%% *}.json")
"$ks" sweep "$dir/edit.lua" -j 2 -o "$out" --json > "$dir/e2.json"
[ "$(jqn .ran "$dir/e2.json")" = 0 ] && [ "$(jqn .skipped "$dir/e2.json")" = 2 ] ||
    fail "base edit: an unchanged rerun did not skip both points: $(cat "$dir/e2.json")"
sed -i 's/prompt_tokens = 4095/prompt_tokens = 2047/' "$dir/base.lua"
grep -q "prompt_tokens = 2047" "$dir/base.lua" || fail "base edit: the fixture changed; fix the sed"
"$ks" sweep "$dir/edit.lua" -j 2 -o "$out" --json > "$dir/e3.json"
[ "$(jqn .ran "$dir/e3.json")" = 2 ] && [ "$(jqn .skipped "$dir/e3.json")" = 0 ] ||
    fail "base edit: the rerun after editing the base did not run both points: $(cat "$dir/e3.json")"
ids3=$(jq -r '.points[].id' "$out/sweep.json" | tr '\n' ' ')
[ "$ids1" != "$ids3" ] || fail "base edit: ids unchanged ($ids1)"
for id in $ids3; do
    [[ $id =~ ^p000[01]-[0-9a-f]{8}$ ]] || fail "base edit: id '$id'"
    case " $ids1 " in *" $id "*) fail "base edit: id $id kept";; esac
done
ttft3=$(jq -r '.ttft_p99' "$out/points/${ids3%% *}.json")
[ "$ttft1" != "$ttft3" ] || fail "base edit: the point's result still comes from the old base (ttft_p99 $ttft1)"

# ---- a point that measured nothing (null figures, NaN in its file) is complete, not failed
cat > "$dir/none.lua" <<EOF
return {name = "none", base = "$hostile/verdict_no_token.lua"}
EOF
"$ks" sweep "$dir/none.lua" -o "$dir/none" --json > "$dir/n1.json" || fail "no token: $(cat "$dir/n1.json")"
[ "$(jqn .failed "$dir/n1.json")" = 0 ] && [ "$(jqn .merged "$dir/n1.json")" = 1 ] || fail "no token: $(cat "$dir/n1.json")"
"$ks" sweep "$dir/none.lua" -o "$dir/none" --json > "$dir/n2.json"
[ "$(jqn .skipped "$dir/n2.json")" = 1 ] || fail "no token: the rerun did not reuse the point: $(cat "$dir/n2.json")"
col=$(head -1 "$dir/none/summary.csv" | tr ',' '\n' | grep -n '^tpot_p99$' | cut -d: -f1)
[ -n "$col" ] && [ "$(tail -1 "$dir/none/summary.csv" | cut -d, -f"$col")" = "" ] ||
    fail "no token: summary.csv tpot_p99 is not empty: $(cat "$dir/none/summary.csv")"

# ---- one sweep per folder
lockdir=$dir/locked
mkdir -p "$lockdir"
exec 9> "$lockdir/sweep.lock"
flock -n 9 || fail "lock: cannot take the lock for the test"
echo 4242 >&9
set +e
"$ks" sweep "$dir/edit.lua" -j 2 -o "$lockdir" > "$dir/l.out" 2> "$dir/l.err"
rc=$?
set -e
exec 9>&-
[ "$rc" = 1 ] || fail "lock: a second sweep exited $rc, expected 1 ($(cat "$dir/l.err"))"
grep -q "$lockdir: another kvstrata sweep (pid 4242) is writing into this folder" "$dir/l.err" ||
    fail "lock: message: $(cat "$dir/l.err")"
[ ! -e "$lockdir/points" ] && [ ! -e "$lockdir/sweep.json" ] || fail "lock: the refused sweep wrote: $(ls "$lockdir")"
# released (as when the holder ends or is killed): the sweep runs
"$ks" sweep "$dir/edit.lua" -j 2 -o "$lockdir" --json > "$dir/l2.json"
[ "$(jqn .ran "$dir/l2.json")" = 2 ] || fail "lock: after release: $(cat "$dir/l2.json")"
# --merge of a folder a sweep holds is refused too (the points would change under it)
exec 9> "$lockdir/sweep.lock"
flock -n 9 || fail "lock: cannot take the lock again"
echo 4243 >&9
set +e
"$ks" sweep --merge "$lockdir" > "$dir/m.out" 2> "$dir/m.err"
rc=$?
set -e
exec 9>&-
[ "$rc" = 1 ] || fail "lock: --merge under the lock exited $rc, expected 1"
grep -q "another kvstrata sweep (pid 4243)" "$dir/m.err" || fail "lock: --merge message: $(cat "$dir/m.err")"
"$ks" sweep --merge "$lockdir" > /dev/null || fail "lock: --merge after release failed"
echo "sweep_hostile: ok"
