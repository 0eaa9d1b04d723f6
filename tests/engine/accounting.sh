#!/usr/bin/env bash
# tests/engine/accounting.sh KVSTRATA ROOT: cache.accounting = "aggregate"
# (the default) and "per_block" give the same run, figure for figure, on
# every scenario of ROOT/scenarios and ROOT/tests/fixtures/scenarios that
# runs, as shipped and with dense attention (sparse.policy = "dense", where
# the scenario accepts it: aggregate accounting serves dense steps only).
# Each run is cut to 4 simulated seconds (the clusters to 2 nodes at their
# load per GPU; the loaded one to 1 s of 1 node with 5 clients per GPU) to
# keep the test short. The summaries must be equal but for wall_s, the
# result file's name and accesses_aggregated, which must be 0 block by block
# and, over the dense runs, positive (the aggregate path was taken).
# Needs jq; skips (77) without it.
set -euo pipefail
command -v jq > /dev/null || { echo "accounting: jq is not installed: skipped"; exit 77; }
ks=$1
root=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
compared=0
aggregated=0
# run NAME ARGS...: one run, its summary without the figures that may differ in $tmp/NAME.json
run() {
    local name=$1
    shift
    "$ks" run "$@" --json -o "$tmp/$name.h5" > "$tmp/$name.raw" 2> "$tmp/$name.err" || return 1
    jq -S 'del(.wall_s, .result, .accesses_aggregated)' "$tmp/$name.raw" > "$tmp/$name.json"
}
for f in "$root"/scenarios/*.lua "$root"/tests/fixtures/scenarios/*.lua; do
    base=$(basename "$f" .lua)
    cut=(--set duration=4s)
    case $base in
    *_loaded) cut=(--set duration=1s --set platform.nodes=1 --set workload.arrival.concurrency=40) ;;
    cluster_*) cut+=(--set platform.nodes=2 --set workload.arrival.rate=6.25) ;;
    esac
    for variant in shipped dense; do
        extra=()
        [ "$variant" = dense ] && extra=(--set sparse.policy=dense)
        if ! run agg "$f" "${cut[@]}" "${extra[@]}"; then
            continue # not a runnable scenario (a bad_* fixture, a plan or sweep input), or no dense variant
        fi
        if ! run per "$f" "${cut[@]}" "${extra[@]}" --set cache.accounting=per_block; then
            echo "accounting: $base ($variant) runs in aggregate but not per_block:" >&2
            cat "$tmp/per.err" >&2
            exit 1
        fi
        if ! diff "$tmp/agg.json" "$tmp/per.json" >&2; then
            echo "accounting: $base ($variant): the summaries above differ (< aggregate, > per_block)" >&2
            exit 1
        fi
        a=$(jq '.accesses_aggregated' "$tmp/agg.raw")
        p=$(jq '.accesses_aggregated' "$tmp/per.raw")
        if [ "$p" != 0 ]; then
            echo "accounting: $base ($variant): per_block accounted $p accesses in aggregate" >&2
            exit 1
        fi
        [ "$variant" = dense ] && aggregated=$(jq -n "$aggregated + $a")
        compared=$((compared + 1))
        echo "accounting: $base ($variant): equal, $a accesses in aggregate, $(jq .steps "$tmp/agg.raw") steps"
    done
done
if [ "$compared" -lt 40 ]; then
    echo "accounting: only $compared runs compared (40 expected at least)" >&2
    exit 1
fi
if [ "$(jq -n "$aggregated > 0")" != true ]; then
    echo "accounting: no dense run accounted anything in aggregate" >&2
    exit 1
fi
echo "accounting: $compared runs equal both ways; $aggregated accesses in aggregate over the dense ones"
