#!/usr/bin/env bash
# tests/engine/threads_same.sh KVSTRATA SCENARIO [ARGS...]: `run --threads N`
# gives the same result for N = 1, 2 and 4 (README "kvstrata run", --threads):
# the JSON summary, wall_s and the result path aside, and every record of the
# result file's /requests, /steps, /tiers and /links, number for number.
set -euo pipefail
ks=$1
shift
here=$(cd "$(dirname "$0")/.." && pwd)
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
strip() { grep -v -e '"wall_s"' -e '"result"'; }
for n in 1 2 4; do
    "$ks" run "$@" --threads "$n" -o "$dir/t$n.h5" --json | strip > "$dir/t$n.json"
    for d in requests steps tiers links; do
        bash "$here/h5_rows.sh" "$dir/t$n.h5" "/$d" > "$dir/t$n.$d"
    done
done
fail=0
for n in 2 4; do
    for f in json requests steps tiers links; do
        if ! cmp -s "$dir/t1.$f" "$dir/t$n.$f"; then
            echo "threads_same: $f differs between --threads 1 and --threads $n:" >&2
            diff "$dir/t1.$f" "$dir/t$n.$f" | head -20 >&2 || true
            fail=1
        fi
    done
done
[ "$fail" = 0 ] || exit 1
[ -s "$dir/t1.requests" ] || { echo "threads_same: no request records" >&2; exit 1; }
echo "threads_same: $(wc -l < "$dir/t1.json") summary lines, $(wc -l < "$dir/t1.requests") requests," \
     "$(wc -l < "$dir/t1.steps") step records identical for --threads 1, 2, 4"
