#!/usr/bin/env bash
# tests/engine/detail_close.sh KVSTRATA LEVEL TOLERANCE SCENARIO [ARGS...]
# Runs the scenario at full detail and at the level of detail LEVEL, a
# number of layers (--set detail.layers=LEVEL), `gpus=K` (--set
# detail.gpus=K), `time=K` (--set detail.gpus=K --set detail.follow=time)
# or `nodes=K` (--set detail.nodes=K), and checks every figure of the two summaries: each number
# within TOLERANCE (relative) of its full-detail value (0 stays 0), each
# other value (null, a string) the same. Left out: wall_s, result (the
# file's name), accesses_aggregated (how the cache counted the accesses, not
# a figure of the run: cache.accounting), steps_followed (the level's own
# count: 0 at full detail; `detail.gpus` must have followed, > 0) and
# block_accesses, which detail.layers shrinks by design (README,
# detail.layers: "the blocks handled (`block_accesses`, the cache's block
# counts) shrink"), and, with `time=K`, copy_bandwidth: followers in
# time copy nothing, the figure is the sampled GPUs' batches' alone (README,
# detail.follow); `detail.gpus` estimates block_accesses from its sample, as the
# cache's other counts, and is held to the tolerance; `detail.nodes` scales
# the sample's.
set -euo pipefail
ks=$1 level=$2 tol=$3
shift 3
follow=()
case $level in
    gpus=* | nodes=*) set_level=detail.$level skip='"none"' ;;
    time=*) set_level=detail.gpus=${level#time=} skip='"copy_bandwidth"' follow=(--set detail.follow=time) ;;
    *) set_level=detail.layers=$level skip='"block_accesses"' ;;
esac
# the keys left out (see above), once for both comparisons below
out="[\"wall_s\", \"result\", \"accesses_aggregated\", \"steps_followed\", $skip]"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
"$ks" run "$@" -o "$dir/full.h5" --json > "$dir/full.json"
"$ks" run "$@" --set "$set_level" "${follow[@]}" -o "$dir/part.h5" --json > "$dir/part.json"
jq -r -n --slurpfile f "$dir/full.json" --slurpfile p "$dir/part.json" --argjson tol "$tol" \
    --arg at "$set_level" --argjson out "$out" '
    ($f[0]) as $a | ($p[0]) as $b
    | ($a | keys_unsorted) as $keys
    | if ($keys | length) != ($b | keys_unsorted | length) then "keys: \($keys | length) at full detail, \($b | keys_unsorted | length) at \($at)" else empty end,
      ($keys[] | select(. as $k | $out | index($k) | not) as $k
       | ($a[$k]) as $x | ($b[$k]) as $y
       | if ($x | type) == "number" and ($y | type) == "number" then
             (if $x == 0 then ($y | fabs) else (($y - $x) / $x | fabs) end) as $r
             | if $r > $tol then "\($k): \($x) at full detail, \($y) at \($at) (relative \($r))" else empty end
         elif $x != $y then "\($k): \($x) at full detail, \($y) at \($at)"
         else empty end)' > "$dir/bad"
case $level in
    gpus=* | time=*) jq -r --slurpfile f "$dir/full.json" 'if $f[0].steps_followed != 0 or .steps_followed <= 0
        then "steps_followed: \($f[0].steps_followed) at full detail, \(.steps_followed) with followers" else empty end' \
        "$dir/part.json" >> "$dir/bad" ;;
esac
n=$(jq 'keys | length' "$dir/full.json")
if [ -s "$dir/bad" ]; then
    sed 's/^/detail_close: /' "$dir/bad" >&2
    exit 1
fi
worst=$(jq -n --slurpfile f "$dir/full.json" --slurpfile p "$dir/part.json" --argjson out "$out" '
    [($f[0] | to_entries[]) as $e | select($e.key as $k | $out | index($k) | not)
     | select(($e.value | type) == "number" and $e.value != 0)
     | {k: $e.key, r: ((($p[0][$e.key] - $e.value) / $e.value) | fabs)}] | max_by(.r) | "\(.k) \(.r)"')
echo "detail_close: $set_level against full detail, $n keys: every figure within $tol (the farthest: $worst)"
