#!/usr/bin/env bash
# tests/engine/detail_nodes_scale.sh KVSTRATA F WHOLE_ARGS... -- PART_ARGS...
# detail.nodes, its closed form: a run of WHOLE_ARGS (a cluster with
# --set detail.nodes = K, F = platform.nodes / K) simulates what a run of
# PART_ARGS (K nodes on their own, with the workload divided by F) does, so
# its summary is PART's with every sum over the GPUs (counts, throughputs,
# bytes, seconds, flops) exactly F times PART's and every other figure (the
# distributions, the hit rates, the fractions, the largest batch, the
# simulated time) PART's (relative 1e-10: the summary prints 12 digits).
# Fails on any other difference, on keys that differ, and where the part
# makes no token or migrates nothing up to L1 (the run would exercise little).
set -euo pipefail
ks=$1 f=$2
shift 2
whole=() part=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do whole+=("$1"); shift; done
[ $# -gt 0 ] || { echo "detail_nodes_scale: no -- between the two runs' arguments" >&2; exit 2; }
shift
part=("$@")
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
"$ks" run "${whole[@]}" -o "$dir/whole.h5" --json > "$dir/whole.json"
"$ks" run "${part[@]}" -o "$dir/part.h5" --json > "$dir/part.json"
# the summary's sums over GPUs (README, detail.nodes)
sums='["requests_arrived","requests_admitted","requests_finished","tokens","request_throughput",
       "output_throughput","total_token_throughput","block_accesses","accesses_aggregated",
       "migrated_bytes_l1_l2","migrated_bytes_l2_l1","migrated_bytes_l2_l3","migrated_bytes_l3_l1","steps",
       "misses_unplanned","outside_reads","table_rebuilds","prefill_seconds","kv_sent_bytes","sat_out",
       "retracted","backup_bytes","weight_read_bytes","index_read_bytes","decode_flops"]'
jq -r -n --slurpfile w "$dir/whole.json" --slurpfile p "$dir/part.json" --argjson f "$f" --argjson sums "$sums" '
    ($w[0]) as $a | ($p[0]) as $b
    | if ($a | keys) != ($b | keys) then "keys differ: \($a | keys - ($b | keys)) / \($b | keys - ($a | keys))"
      else empty end,
      (($a | keys_unsorted[]) | select(. != "wall_s" and . != "result") as $k
       | ($a[$k]) as $x | ($b[$k]) as $y
       | if ($sums | index([$k])) then
             (if ($y * $f) == 0 then ($x | fabs) else (($x - $y * $f) / ($y * $f) | fabs) end) as $r
             | if $r > 1e-10 then "\($k): \($x), not \($f) x \($y)" else empty end
         elif $x != $y then "\($k): \($x) against \($y) (a distribution or a ratio: the same)"
         else empty end),
      (["tokens", "migrated_bytes_l2_l1"][] as $k | select(($b[$k] // 0) == 0) | "\($k) is 0: the run exercises nothing")
    ' > "$dir/bad"
if [ -s "$dir/bad" ]; then
    sed 's/^/detail_nodes_scale: /' "$dir/bad" >&2
    exit 1
fi
echo "detail_nodes_scale: $(jq 'keys | length' "$dir/whole.json") keys: the sums $f times the part's, the rest equal" \
     "(tokens $(jq .tokens "$dir/whole.json") = $f x $(jq .tokens "$dir/part.json"))"
