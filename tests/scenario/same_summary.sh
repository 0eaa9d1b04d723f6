#!/usr/bin/env bash
# tests/scenario/same_summary.sh KVSTRATA ARGS_A... -- ARGS_B...: two runs give the same
# JSON summary (wall_s, the result path and the name aside).
set -euo pipefail
ks=$1
shift
a=() b=()
while [ $# -gt 0 ] && [ "$1" != -- ]; do a+=("$1"); shift; done
shift
b=("$@")
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
"$ks" run "${a[@]}" -o "$dir/a.h5" --json | grep -v -e '"wall_s"' -e '"result"' -e '"name"' > "$dir/a.json"
"$ks" run "${b[@]}" -o "$dir/b.h5" --json | grep -v -e '"wall_s"' -e '"result"' -e '"name"' > "$dir/b.json"
if ! diff -u "$dir/a.json" "$dir/b.json"; then
    echo "same_summary: the two runs differ (see the diff above)" >&2
    exit 1
fi
echo "same_summary: $(wc -l < "$dir/a.json") lines identical"
