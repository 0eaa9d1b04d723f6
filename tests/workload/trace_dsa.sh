#!/usr/bin/env bash
# tests/workload/trace_dsa.sh KVSTRATA SCENARIO: a dsa scenario (dsa_small.lua)
# recorded by `trace record` (sim/workload/selrecord.h) and replayed.
# 1. With 1- and 16-token blocks, a run with sparse.policy = "dsa" and one
#    replaying the trace (sparse.policy = "trace"), both under cache.evict =
#    "lru", give the same summary, figure for figure (wall_s and the result's
#    name aside): the replay selects what the model selects. trace stats reads
#    the trace, its source says dsa, every layer's overlap lies in (0, 1).
# 2. Per-request device buffers (cache.organisation = "per_request", 1-token
#    blocks, 384-token buffers against a 256-token top-k): eviction happens,
#    and Belady on the replay hits L1 at least as often as LRU.
set -euo pipefail
ks=$1 sc=$2
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
steps=64 # the scenario's 65 output tokens: decode steps 0 .. 63, none wrapped
get() { sed -n "s/^ *\"$1\": *\([-0-9.eE+]*\),\{0,1\}$/\1/p" "$2"; }
for bs in 1 16; do
    "$ks" trace record "$sc" --set cache.block_size=$bs -o "$dir/t$bs.h5" --requests 4 --steps $steps --json \
        > "$dir/rec.json"
    "$ks" trace stats "$dir/t$bs.h5" --json > "$dir/stats.json"
    grep -q '"source": "kvstrata trace record: sparse.policy dsa' "$dir/stats.json"
    jq -e '(.per_layer | length) == 4 and all(.per_layer[]; .overlap > 0 and .overlap < 1)' "$dir/stats.json" \
        > /dev/null || { echo "trace_dsa: block_size $bs: per-layer overlaps out of (0, 1)" >&2; exit 1; }
    "$ks" run "$sc" --set cache.block_size=$bs --set cache.evict=lru -o "$dir/dsa.h5" --json > "$dir/dsa.json"
    "$ks" run "$sc" --set cache.block_size=$bs --set cache.evict=lru --set sparse.policy=trace \
        --set sparse.file="$dir/t$bs.h5" -o "$dir/replay.h5" --json > "$dir/replay.json"
    if ! jq -e -n --slurpfile a "$dir/dsa.json" --slurpfile b "$dir/replay.json" \
            '($a[0] | del(.wall_s, .result)) == ($b[0] | del(.wall_s, .result))' > /dev/null; then
        echo "trace_dsa: block_size $bs: the replay's summary differs from the dsa run's:" >&2
        diff "$dir/dsa.json" "$dir/replay.json" >&2 || true
        exit 1
    fi
    hit=$(get hit_rate_l1 "$dir/dsa.json")
    awk -v h="$hit" 'BEGIN { exit !(h > 0 && h < 1) }' ||
        { echo "trace_dsa: block_size $bs: hit_rate_l1 $hit, nothing evicted" >&2; exit 1; }
    echo "trace_dsa: block_size $bs: dsa run and replay identical, hit_rate_l1 $hit"
done
buf=(--set cache.block_size=1 --set cache.organisation=per_request --set cache.device_buffer_size=384
     --set sparse.policy=trace --set sparse.file="$dir/t1.h5")
"$ks" run "$sc" "${buf[@]}" --set cache.evict=lru -o "$dir/lru.h5" --json > "$dir/lru.json"
"$ks" run "$sc" "${buf[@]}" --set cache.evict=belady -o "$dir/bel.h5" --json > "$dir/bel.json"
lru=$(get hit_rate_l1 "$dir/lru.json") bel=$(get hit_rate_l1 "$dir/bel.json")
if ! awk -v b="$bel" -v l="$lru" 'BEGIN { exit !(l > 0 && l < 1 && b >= l && b <= 1) }'; then
    echo "trace_dsa: device buffers: belady hit_rate_l1 $bel, lru $lru (belady must bound lru, lru < 1)" >&2
    exit 1
fi
echo "trace_dsa: device buffers of 384 tokens: hit_rate_l1 lru $lru, belady $bel"
