#!/usr/bin/env bash
# results/studies/detail_seeds.sh [KVSTRATA] - issue 19's goal for the loaded
# 512-GPU cluster, over seeds: at most 1 wall second per simulated second with
# a level of detail whose error against full detail is at most 2% on every
# figure. The level runs the whole cluster_64x8_loaded.lua (64 nodes) at
# `detail.nodes=1` and `detail.layers=L`; full detail of 512 GPUs does not
# fit in this machine's 24 GB, so the reference is full detail of 8 of its
# nodes at the same load per GPU (what `detail.nodes=8` would simulate), and
# the level's sums (throughput, bytes), the 64 nodes', are divided by 8 to
# meet the reference's. Writes results/studies/detail_seeds.md, or
# detail_seeds_<DURATION>.md for another duration. Environment: DURATION
# (default 10s, the scenario's own), LEVEL (default "nodes": one node
# simulated, `detail.nodes=1`; "time": 8 nodes, the first one's GPUs sampled
# and the others' following them in time, `detail.nodes=8 detail.gpus=8
# detail.follow=time`, written to detail_seeds_time[_<DURATION>].md), SEEDS (default "1 2 3"), LAYERS
# (default "2 4 8"), REPS (default 3: each level's wall time is the median
# of REPS runs, to be read on a quiet machine), JOBS (default 1: references
# run at once; the levels always run one at a time), OUT (the table's file
# instead of the name above). Here (2026-12-04) a reference takes about 33 s
# of wall time per simulated second, a level 0.5-0.95 (in time, 2026-12-05:
# 0.6-1.1). The table's header gives `bench cache`'s speed before and after
# the levels ran, a yardstick for their wall times on a machine whose speed
# drifts (this VM's by up to 40% from one day to the next). REFS=DIR keeps
# the references: a seed's full-detail summary is read from DIR/ref.SEED.json
# when DIR/ref.SEED.txt names the same reference command (its first line),
# else made and written there, with the commit it was made at (second line);
# the table's header names the commits of the references it used. Reuse is
# for a change that leaves full detail as it was (its summaries the same):
# the references then cost nothing, and a level's study takes minutes.
# Seeds 4 and 5 at 4 layers in time, detail_seeds_time_seeds45.md:
# LEVEL=time SEEDS="4 5" LAYERS=4 OUT=results/studies/detail_seeds_time_seeds45.md
set -euo pipefail
cd "$(dirname "$0")/../.."
ks=${1:-build/kvstrata}
dur=${DURATION:-10s}
level_name=${LEVEL:-nodes}
case $level_name in
    nodes) level=(--set detail.nodes=1) stem=detail_seeds
        level_text="one node simulated" ;;
    time) level=(--set detail.nodes=8 --set detail.gpus=8 --set detail.follow=time) stem=detail_seeds_time
        level_text="8 nodes simulated, the first one's 8 GPUs in full and the 56 others following them in time" ;;
    *) echo "detail_seeds: LEVEL is nodes or time, not $level_name" >&2; exit 2 ;;
esac
out=results/studies/$stem.md
[ "$dur" = 10s ] || out=results/studies/${stem}_$dur.md
out=${OUT:-$out}
jobs=${JOBS:-1}
read -ra seeds <<< "${SEEDS:-1 2 3}"
read -ra layers <<< "${LAYERS:-2 4 8}"
reps=${REPS:-3}
scen=scenarios/cluster_64x8_loaded.lua
nodes=64 gpn=8 per_node=320 ref_nodes=8 # the scenario's nodes, GPUs and clients per node; the reference's nodes
scale=$((nodes / ref_nodes))       # the level's sums over the reference's
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
figures=(output_throughput tpot_p50 tpot_p99 itl_p50 itl_p99 ttft_p50 hit_rate_l1 hit_rate_l2 stall_fraction migrated_bytes_l2_l1 migrated_bytes_l1_l2)
sums=(output_throughput migrated_bytes_l2_l1 migrated_bytes_l1_l2) # the level's are all the nodes'
refs_dir=${REFS:-}
ref_args() { # seed: the reference's command line after the binary
    echo "run $scen --set platform.nodes=$ref_nodes --set workload.arrival.concurrency=$((ref_nodes * per_node)) --set duration=$dur --set seed=$1"
}
ref() { # seed
    local args
    args=$(ref_args "$1")
    if [ -n "$refs_dir" ] && [ -f "$refs_dir/ref.$1.json" ] && [ "$(sed -n 1p "$refs_dir/ref.$1.txt" 2> /dev/null)" = "$args" ]; then
        cp "$refs_dir/ref.$1.json" "$tmp/ref.$1.json"
        echo "detail_seeds: seed $1, full detail of $ref_nodes nodes: kept in $refs_dir (kvstrata $(sed -n 2p "$refs_dir/ref.$1.txt"))" >&2
        return 0
    fi
    # shellcheck disable=SC2086 # the arguments are words without spaces
    "$ks" $args -o "$tmp/ref.$1.h5" --json > "$tmp/ref.$1.json" 2> "$tmp/err.$1" || { cat "$tmp/err.$1" >&2; return 1; }
    rm -f "$tmp/ref.$1.h5"
    echo "detail_seeds: seed $1, full detail of $ref_nodes nodes: $(jq .wall_s "$tmp/ref.$1.json") s" >&2
    if [ -n "$refs_dir" ]; then
        mkdir -p "$refs_dir"
        cp "$tmp/ref.$1.json" "$refs_dir/ref.$1.json"
        printf '%s\n%s\n' "$args" "$(git rev-parse --short HEAD)" > "$refs_dir/ref.$1.txt"
    fi
}
pids=()
for s in "${seeds[@]}"; do
    ref "$s" & pids+=($!)
    if [ "${#pids[@]}" -ge "$jobs" ]; then wait "${pids[0]}"; pids=("${pids[@]:1}"); fi
done
for p in "${pids[@]}"; do wait "$p"; done
# the yardstick (the header above): accesses per second, median of 3, in millions
yard=(bench cache --blocks 1000000 --topk 64 --steps 20000 --policy heat)
yardstick() {
    for r in 1 2 3; do
        "$ks" "${yard[@]}" --json | jq .accesses_per_s
    done | sort -g | sed -n 2p | awk '{printf "%.1f", $1 / 1e6}'
}
yard_before=$(yardstick)
for l in "${layers[@]}"; do
    for s in "${seeds[@]}"; do
        for r in $(seq "$reps"); do
            "$ks" run "$scen" --set duration="$dur" "${level[@]}" --set detail.layers="$l" --set seed="$s" \
                -o "$tmp/at.h5" --json > "$tmp/at.$l.$s.$r.json" 2> "$tmp/err" || { cat "$tmp/err" >&2; exit 1; }
        done
        echo "detail_seeds: seed $s, ${level[*]} --set detail.layers=$l: $(jq -s 'map(.wall_s)' "$tmp"/at."$l"."$s".*.json | tr -d ' \n') s" >&2
    done
done
yard_after=$(yardstick)
list() { printf '%s\n' "$@" | jq -R . | jq -s -c .; }
# one level and seed: {fig: error} and the wall time's median over the runs,
# into $tmp/errors.L.S.json
errors() { # level seed
    jq -n -c --argjson figs "$(list "${figures[@]}")" --argjson sums "$(list "${sums[@]}")" --argjson scale "$scale" \
        --slurpfile ref "$tmp/ref.$2.json" --slurpfile at <(jq -s . "$tmp"/at."$1"."$2".*.json) '
        ($ref[0]) as $f | ($at[0]) as $runs | ($runs[0]) as $a
        | {wall: ($runs | map(.wall_s / .sim_time) | sort | .[(length - 1) / 2 | floor]),
           err: [$figs[] as $g
                 | (if $a[$g] != null and ($sums | index($g)) then $a[$g] / $scale else $a[$g] end) as $v
                 | {key: $g, value: (if $f[$g] == 0 or $f[$g] == null or $v == null then null else ($v - $f[$g]) / $f[$g] end)}] | from_entries}' > "$tmp/errors.$1.$2.json"
}
for l in "${layers[@]}"; do
    for s in "${seeds[@]}"; do errors "$l" "$s"; done
done
{
    echo "# The loaded 512-GPU cluster at a level of detail, over seeds"
    echo
    cpu=$("$ks" info --json | jq -r '.cpu // "unknown CPU"')
    echo "\`results/studies/detail_seeds.sh\`, $(date -u +%Y-%m-%d), $(uname -m), $cpu, $(nproc) cores, kvstrata $(git rev-parse --short HEAD)."
    echo "Issue 19's goal: at most 1 wall second per simulated second, with every figure within 2% of full detail."
    echo "Level: \`$scen --set duration=$dur ${level[*]} --set detail.layers=L --set seed=S\` (the"
    echo "whole cluster, $level_text, L of the 32 layers). Reference: full detail of $ref_nodes nodes at the same"
    echo "load per GPU (\`--set platform.nodes=$ref_nodes --set workload.arrival.concurrency=$((ref_nodes * per_node)) --set duration=$dur\`): $((nodes * gpn))"
    echo "GPUs at full detail do not fit in this machine's memory. The level's sums (${sums[*]}) are"
    echo "divided by $scale. Figures: ${figures[*]}. Wall s per simulated s: the median of $reps runs (wall_s / sim_time)."
    if [ -n "$refs_dir" ]; then
        made=$(for s in "${seeds[@]}"; do sed -n 2p "$refs_dir/ref.$s.txt"; done | sort -u | tr '\n' ' ')
        echo "References kept in \`$refs_dir\`, made by kvstrata ${made% }."
    fi
    echo "The machine's speed before and after the levels ran (\`kvstrata ${yard[*]}\`, median of 3):"
    echo "$yard_before and $yard_after M accesses/s; the wall times scale with it."
    echo
    echo "| L | seed | wall s per simulated s | largest error | figure | next largest | goal |"
    echo "| ---: | ---: | ---: | ---: | --- | --- | --- |"
    for l in "${layers[@]}"; do
        for s in "${seeds[@]}"; do
            jq -r --arg l "$l" --arg s "$s" '
                def pc: . * 10000 | round / 100 | tostring + "%";
                (.err | to_entries | map(select(.value != null)) | sort_by(-(.value | fabs))) as $e
                | ([if .wall > 1 then "time" else empty end, if ($e[0].value | fabs) > 0.02 then "error" else empty end]) as $miss
                | "| \($l) | \($s) | \(.wall * 100 | round / 100) | \($e[0].value | pc) | \($e[0].key) | \($e[1].key) \($e[1].value | pc) | \(if $miss == [] then "met" else "missed: " + ($miss | join(", ")) end) |"' "$tmp/errors.$l.$s.json"
        done
    done
    echo
    echo "Each figure's error at each level and seed, in % (full detail's value in the first rows):"
    echo
    echo -n "| L | seed |"
    for f in "${figures[@]}"; do echo -n " $f |"; done
    echo
    echo -n "| ---: | ---: |"
    for f in "${figures[@]}"; do echo -n " ---: |"; done
    echo
    for s in "${seeds[@]}"; do
        jq -r --arg s "$s" --argjson figs "$(list "${figures[@]}")" \
            '"| all | \($s) |" + ([$figs[] as $g | (.[$g] | if . == null then " - |" else " \(. * 1e6 | round / 1e6) |" end)] | join(""))' "$tmp/ref.$s.json"
    done
    refs=()
    for s in "${seeds[@]}"; do refs+=("$tmp/ref.$s.json"); done
    # the reference's own spread over the seeds: (largest - smallest) / mean
    jq -s -r --argjson figs "$(list "${figures[@]}")" '
        "| spread | all |" + ([$figs[] as $g | map(.[$g]) as $v | (if ($v | any(. == null)) then 0 else $v | add / length end) as $m
            | if $m == 0 then " - |" else " \((($v | max) - ($v | min)) / $m * 10000 | round / 100)% |" end] | join(""))' \
        "${refs[@]}"
    for l in "${layers[@]}"; do
        for s in "${seeds[@]}"; do
            jq -r --arg l "$l" --arg s "$s" --argjson figs "$(list "${figures[@]}")" '
                "| \($l) | \($s) |" + ([$figs[] as $g | .err[$g] | if . == null then " - |" else " \(. * 10000 | round / 100)% |" end] | join(""))' "$tmp/errors.$l.$s.json"
        done
    done
    echo
    echo "spread: the reference's own (largest - smallest) / mean over the seeds. A figure whose spread is"
    echo "near 2% moves that much from seed to seed at full detail; a single run cannot pin it closer."
} > "$out"
echo "detail_seeds: wrote $out" >&2
