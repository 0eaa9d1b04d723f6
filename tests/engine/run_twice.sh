#!/usr/bin/env bash
# tests/engine/run_twice.sh KVSTRATA SCENARIO [ARGS...]: the same scenario and seed give
# the same JSON summary, wall-clock and result path aside; a failed run leaves
# no result file.
set -euo pipefail
ks=$1
shift
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
strip() { grep -v -e '"wall_s"' -e '"result"'; }
"$ks" run "$@" -o "$dir/a.h5" --json | strip > "$dir/a.json"
"$ks" run "$@" -o "$dir/b.h5" --json | strip > "$dir/b.json"
if ! cmp -s "$dir/a.json" "$dir/b.json"; then
    echo "run_twice: summaries differ:" >&2
    diff "$dir/a.json" "$dir/b.json" >&2 || true
    exit 1
fi
[ -s "$dir/a.h5" ] || { echo "run_twice: no result file" >&2; exit 1; }
# a bad override fails before anything runs and writes nothing
if "$ks" run "$@" --set cache.block_size=-1 -o "$dir/bad.h5" > "$dir/bad.out" 2> "$dir/bad.err"; then
    echo "run_twice: a negative block size was accepted" >&2
    exit 1
fi
[ ! -e "$dir/bad.h5" ] || { echo "run_twice: a failed run left a result file" >&2; exit 1; }
[ ! -s "$dir/bad.out" ] || { echo "run_twice: a failed run printed on stdout" >&2; exit 1; }
ls "$dir" | grep -q part && { echo "run_twice: a partial file was left" >&2; exit 1; }
echo "run_twice: $(wc -l < "$dir/a.json") summary lines identical"
