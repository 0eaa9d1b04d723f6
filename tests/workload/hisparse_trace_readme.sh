#!/usr/bin/env bash
# tests/workload/hisparse_trace_readme.sh KVSTRATA SCENARIO DIR STEP: README
# "Recording the dsa model", on results/published/hisparse_missrate.lua (one
# request of 128 decode steps, as results/published/run.sh records and replays
# it at 256). The trace lies in DIR between the steps (workload.cmake).
#   record  trace record --requests 1 --steps 128 -> DIR/trace.h5 (the fixture)
#   shape   "one request of 128 steps is 9,984 records and 20.4M selected
#           entries, 80.7 MB on disk": records exactly 9984 (the record
#           command's JSON and trace stats'), selections (trace stats) in
#           [20.35e6, 20.45e6), the file in [80.65e6, 80.75e6) bytes (MB as
#           10^6 bytes: the file is 80,708,753 bytes, 77.0 MiB; 86,688,381
#           before the dsa model's layers were correlated, whose adjacent
#           layers' alike selections deflate better)
#   lru     "Its replay reproduces the dsa run's hit_rate_l1 (0.769 with LRU,
#           one request decoding 128 steps)": the dsa run's hit_rate_l1 in
#           [0.7685, 0.7695), and the LRU replay's the same figure exactly
#   belady  "Belady on it hits 0.864": the Belady replay's hit_rate_l1 in
#           [0.8635, 0.8645) (about 35 s and 3.4 GB resident here)
#   clean   removes DIR/trace.h5 (87 MB)
# A run decodes output_tokens - 1 steps: output_tokens = 129 for 128 steps.
set -euo pipefail
ks=$1 sc=$2 dir=$3 step=$4
trace=$dir/trace.h5
one=(--set workload.requests=1 --set workload.arrival.concurrency=1 --set workload.output_tokens=129)
replay=(--set sparse.policy=trace --set "sparse.file=$trace")
mkdir -p "$dir"
# within NAME X LO HI: X lies in [LO, HI), or the test fails naming NAME
within() {
    awk -v x="$2" -v lo="$3" -v hi="$4" 'BEGIN { exit !(x != "" && x + 0 >= lo && x + 0 < hi) }' ||
        { echo "hisparse_trace_readme: $1 is ${2:-missing}, not in [$3, $4)" >&2; exit 1; }
    echo "hisparse_trace_readme: $1 $2"
}
run() { # run NAME ARGS...: the run's summary in $dir/NAME.json, its hit_rate_l1 printed
    local name=$1
    shift
    "$ks" run "$sc" "${one[@]}" "$@" -o "$dir/$name.h5" --json > "$dir/$name.json"
    rm -f "$dir/$name.h5"
    jq -r .hit_rate_l1 "$dir/$name.json"
}
case $step in
record)
    rm -f "$trace"
    "$ks" trace record "$sc" --requests 1 --steps 128 -o "$trace" --json > "$dir/record.json"
    ;;
shape)
    within "records (trace record)" "$(jq -r .records "$dir/record.json")" 9984 9985
    "$ks" trace stats "$trace" --json > "$dir/stats.json"
    within "records (trace stats)" "$(jq -r .records "$dir/stats.json")" 9984 9985
    within "selections" "$(jq -r .selections "$dir/stats.json")" 20350000 20450000
    within "file bytes" "$(stat -c %s "$trace")" 80650000 80750000
    ;;
lru)
    dsa=$(run dsa)
    within "dsa run's hit_rate_l1" "$dsa" 0.7685 0.7695
    lru=$(run lru_replay "${replay[@]}")
    [ "$lru" = "$dsa" ] ||
        { echo "hisparse_trace_readme: the LRU replay's hit_rate_l1 $lru is not the dsa run's $dsa" >&2; exit 1; }
    echo "hisparse_trace_readme: LRU replay's hit_rate_l1 $lru"
    ;;
belady)
    within "Belady replay's hit_rate_l1" "$(run belady_replay "${replay[@]}" --set cache.evict=belady)" 0.8635 0.8645
    ;;
clean)
    rm -f "$trace"
    ;;
*)
    echo "hisparse_trace_readme: unknown step $step" >&2
    exit 2
    ;;
esac
