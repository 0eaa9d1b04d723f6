#!/usr/bin/env bash
# tests/study/seed_exact.sh KVSTRATA SOURCE_DIR: seeds are 64-bit integers end to
# end (README "The simulator", results/README.md /summary): --seed takes 0 to
# 2^64 - 1; the result file's seed attribute is a 64-bit integer holding the exact
# value (a string above 2^63 - 1); 2^53 and 2^53 + 1, one double apart, give
# different runs; and the seed a run recorded reproduces it.
set -euo pipefail
ks=$1
src=$2
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail() { echo "seed_exact: $*" >&2; exit 1; }
# poisson arrivals, so the seed shapes the run
sc=$src/tests/fixtures/scenarios/seed_default.lua
args=(--set duration=2s --set workload.arrival.rate=20)
strip() { grep -v -e '"wall_s"' -e '"result"' "$1"; }

"$ks" run "$sc" "${args[@]}" --seed 9007199254740993 -o "$dir/a.h5" --json > "$dir/a.json"
"$ks" run "$sc" "${args[@]}" --seed 9007199254740992 -o "$dir/b.h5" --json > "$dir/b.json"
grep -q '"seed": 9007199254740993,' "$dir/a.json" || fail "JSON: $(grep seed "$dir/a.json")"
h5dump -a /summary/seed "$dir/a.h5" > "$dir/a.dump"
grep -q "H5T_STD_I64LE" "$dir/a.dump" || fail "the seed attribute is not a 64-bit integer: $(cat "$dir/a.dump")"
grep -q "(0): 9007199254740993$" "$dir/a.dump" || fail "the seed attribute is not exact: $(cat "$dir/a.dump")"
[ "$(strip "$dir/a.json" | grep -v '"seed"')" != "$(strip "$dir/b.json" | grep -v '"seed"')" ] ||
    fail "seeds 2^53 + 1 and 2^53 gave the same run: the seed was rounded"

# the recorded seed reproduces the run
seed=$(grep -o '"seed": [0-9]*' "$dir/a.json" | sed 's/.*: //')
"$ks" run "$sc" "${args[@]}" --seed "$seed" -o "$dir/c.h5" --json > "$dir/c.json"
diff <(strip "$dir/a.json") <(strip "$dir/c.json") > /dev/null || fail "the recorded seed $seed does not reproduce the run"

# the largest seed: a string in JSON and in the file
"$ks" run "$sc" "${args[@]}" --seed 18446744073709551615 -o "$dir/d.h5" --json > "$dir/d.json"
grep -q '"seed": "18446744073709551615",' "$dir/d.json" || fail "JSON: $(grep seed "$dir/d.json")"
h5dump -a /summary/seed "$dir/d.h5" | grep -q '(0): "18446744073709551615"' ||
    fail "the seed attribute: $(h5dump -a /summary/seed "$dir/d.h5")"
echo "seed_exact: ok"
