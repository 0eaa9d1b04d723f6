#!/usr/bin/env bash
# tests/engine/accounting_same.sh KVSTRATA ARGS...: `kvstrata run ARGS` gives
# the same summary, figure for figure, with cache.accounting = "aggregate"
# (the default) and "per_block" (but wall_s, the result file's name and
# accesses_aggregated), and the aggregate run accounted some accesses so
# (with the access model: selections deferred, drawn when the cache read
# their blocks or never). Needs jq; skips (77) without it.
set -euo pipefail
command -v jq > /dev/null || { echo "accounting_same: jq is not installed: skipped"; exit 77; }
ks=$1
shift
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for way in aggregate per_block; do
    "$ks" run "$@" --set cache.accounting=$way --json -o "$tmp/$way.h5" > "$tmp/$way.raw"
    jq -S 'del(.wall_s, .result, .accesses_aggregated)' "$tmp/$way.raw" > "$tmp/$way.json"
done
if ! diff "$tmp/aggregate.json" "$tmp/per_block.json" >&2; then
    echo "accounting_same: the summaries above differ (< aggregate, > per_block)" >&2
    exit 1
fi
a=$(jq .accesses_aggregated "$tmp/aggregate.raw")
if [ "$(jq -n "$a > 0")" != true ] || [ "$(jq .accesses_aggregated "$tmp/per_block.raw")" != 0 ]; then
    echo "accounting_same: $a accesses in aggregate (none per block expected, some in aggregate)" >&2
    exit 1
fi
echo "accounting_same: equal; $a of $(jq .block_accesses "$tmp/aggregate.raw") accesses in aggregate," \
     "L1 hit rate $(jq .hit_rate_l1 "$tmp/aggregate.raw"), $(jq .retracted "$tmp/aggregate.raw") retracted," \
     "wall $(jq .wall_s "$tmp/aggregate.raw") s against $(jq .wall_s "$tmp/per_block.raw") s"
