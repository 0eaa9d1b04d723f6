#!/usr/bin/env bash
# results/studies/detail.sh [KVSTRATA] - the levels of detail against full
# detail, on the shipped scenarios: `detail.layers` (the cache and
# selections of 8 or 4 of the 32 layers simulated, each standing for 4 or
# 8) where it divides their layers, `detail.gpus` (4 or 2 of the GPUs
# sampled, the others following them) where they have several GPUs,
# `detail.nodes` (4, 2 or 1 of 8 nodes simulated, each standing for the
# others) on the clusters, followers in time (`detail.gpus=8
# detail.follow=time`: the first node's GPUs sampled, the other nodes'
# following their waits) on the clusters, and combinations; writes results/studies/detail.md: per scenario and level, the wall
# time and the relative error of each figure against full detail. Runs are
# cut as the cases below say (the clusters to a few nodes at their load per
# GPU). About 7 to 15 minutes here (2026-12-03).
set -euo pipefail
cd "$(dirname "$0")/../.."
ks=${1:-build/kvstrata}
out=results/studies/detail.md
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# a level: comma-separated L (detail.layers=L), gpus=K (detail.gpus=K),
# time=K (detail.gpus=K detail.follow=time), nodes=K (detail.nodes=K); 0 is
# full detail
one=(0 8 4)                       # one GPU
several=(0 8 4 gpus=4 gpus=2)     # 8 GPUs
cluster=(0 8 4 gpus=4 4,gpus=4 time=8 4,time=8) # 16 GPUs
nodes=(0 nodes=4 nodes=2 nodes=1 4,gpus=2,nodes=1 time=8 4,time=8) # 8 nodes
# name|scenario|options|levels (the name of one of the arrays above)
cases=(
    "seed_default tiered|tests/fixtures/scenarios/seed_default.lua|--set duration=5s --set workload.arrival.rate=40 --set cache.l1=20GB --set prefill.mode=disaggregated --set prefill.gpus=64|several"
    "default|scenarios/default.lua|--set duration=20s|one"
    "cluster_64x8 (2 nodes)|scenarios/cluster_64x8.lua|--set platform.nodes=2 --set workload.arrival.rate=6.25 --set duration=20s|cluster"
    "cluster_64x8_loaded (1 node)|scenarios/cluster_64x8_loaded.lua|--set platform.nodes=1 --set workload.arrival.concurrency=320 --set duration=1s|several"
    "cluster_64x8_loaded (2 nodes, 3 s)|scenarios/cluster_64x8_loaded.lua|--set platform.nodes=2 --set workload.arrival.concurrency=640 --set duration=3s|cluster"
    "cluster_64x8 (8 nodes)|scenarios/cluster_64x8.lua|--set platform.nodes=8 --set workload.arrival.rate=25 --set duration=20s|nodes"
    "cluster_64x8_loaded (8 nodes, 2 s)|scenarios/cluster_64x8_loaded.lua|--set platform.nodes=8 --set workload.arrival.concurrency=2560 --set duration=2s|nodes"
    "code_completion_repo|scenarios/code_completion_repo.lua|--set duration=30s|several"
    "dialogue_multiturn|scenarios/dialogue_multiturn.lua|--set duration=30s|several"
    "doc_qa_128k|scenarios/doc_qa_128k.lua|--set duration=60s|several"
    "random_selection|scenarios/random_selection.lua||several"
    "shared_system_prompt|scenarios/shared_system_prompt.lua||several"
    "short_context|scenarios/short_context.lua||several"
    "llama3_8b_h100|scenarios/llama3_8b_h100.lua||one"
)
# the --set options of a level
level_opts() {
    local t o=""
    local -a parts
    IFS=, read -ra parts <<< "$1"
    for t in "${parts[@]}"; do
        case $t in
            gpus=* | nodes=*) o+=" --set detail.$t" ;;
            time=*) o+=" --set detail.gpus=${t#time=} --set detail.follow=time" ;;
            *) o+=" --set detail.layers=$t" ;;
        esac
    done
    echo "$o"
}
# a level's file name
level_tag() { echo "$1" | tr ',=' '__'; }
figures=(output_throughput tpot_p50 tpot_p99 itl_p50 itl_p99 ttft_p50 hit_rate_l1 hit_rate_l2 stall_fraction migrated_bytes_l2_l1 migrated_bytes_l1_l2)
i=0
for c in "${cases[@]}"; do
    IFS='|' read -r name file opts set <<< "$c"
    declare -n levels=$set
    for k in "${levels[@]}"; do
        t=$(level_tag "$k")
        # shellcheck disable=SC2086,SC2046
        "$ks" run "$file" $opts $(level_opts "$k") -o "$tmp/$i.$t.h5" --json > "$tmp/$i.$t.json" 2> "$tmp/$i.$t.err" ||
            { cat "$tmp/$i.$t.err" >&2; exit 1; }
        echo "detail: $name, level $k: $(jq .wall_s "$tmp/$i.$t.json") s" >&2
    done
    unset -n levels
    i=$((i + 1))
done
{
    echo "# Levels of detail against full detail"
    echo
    cpu=$("$ks" info --json | jq -r '.cpu // "unknown CPU"')
    echo "\`results/studies/detail.sh\`, $(date -u +%Y-%m-%d), $(uname -m), $cpu, $(nproc) cores, kvstrata $(git rev-parse --short HEAD)."
    echo "\`detail.layers = K\` simulates the cache and the selections of K of the model's 32 layers (a"
    echo "request's those of one layer of each run of 32/K, drawn per request), each standing for 32/K"
    echo "layers: its blocks carry their KV, and its batches are copied as one per model layer, so"
    echo "capacities, migrated bytes and times are the model's while the blocks handled shrink 32/K-fold."
    echo "\`detail.gpus = K\` (gpus=K) simulates the caches of K of the GPUs, evenly spaced, in full; the"
    echo "others follow them (README, detail.gpus): block_accesses and the cache's counts are the sample's,"
    echo "scaled by all GPUs' tokens over its own. \`detail.nodes = K\` (nodes=K) simulates K of the nodes with"
    echo "their share of the workload, each standing for the others (README, detail.nodes): the sums"
    echo "(throughput, bytes, counts) are the sample's times nodes/K, the distributions the sample's."
    echo "\`time=K\` is \`detail.gpus = K\` with \`detail.follow = \"time\"\`: the first K GPUs (whole nodes) in full, the"
    echo "others taking their steps' waits without copying (README, detail.follow); copy_bandwidth is then the"
    echo "sampled GPUs' alone."
    echo "A level with commas combines them (\`4,gpus=2,nodes=1\`: 4 layers, 2 of one node's GPUs)."
    echo "Each cell is (figure at K - figure at full detail) / figure at full detail, in %; a figure"
    echo "that is 0 at full detail shows its value at K. wall: seconds of the run, and the speedup."
    echo
    echo -n "| scenario | K | wall s (x) |"
    for f in "${figures[@]}"; do echo -n " $f |"; done
    echo
    echo -n "| --- | ---: | ---: |"
    for f in "${figures[@]}"; do echo -n " ---: |"; done
    echo
    i=0
    for c in "${cases[@]}"; do
        IFS='|' read -r name file opts set <<< "$c"
        declare -n levels=$set
        for k in "${levels[@]}"; do
            t=$(level_tag "$k")
            jq -r -n --arg name "$name" --arg k "$k" --argjson figs "$(printf '%s\n' "${figures[@]}" | jq -R . | jq -s .)" \
                --slurpfile full "$tmp/$i.0.json" --slurpfile at "$tmp/$i.$t.json" '
                def r2: . * 100 | round / 100;
                ($full[0]) as $f | ($at[0]) as $a
                | ($f.wall_s / $a.wall_s) as $x
                | "| \($name) | \(if $k == "0" then "all" else $k end) | \($a.wall_s | r2) (\($x * 10 | round / 10)) |"
                  + ([$figs[] as $g
                      | if $k == "0" then " \($f[$g] | if type == "number" then (. * 1e6 | round / 1e6) else . end) |"
                        elif ($f[$g] == null or $a[$g] == null) then " - |"
                        elif $f[$g] == 0 then " =\($a[$g]) |"
                        else " \((($a[$g] - $f[$g]) / $f[$g] * 100) | r2)% |" end] | join(""))'
        done
        unset -n levels
        i=$((i + 1))
    done
    echo
    echo "The rows \"all\" give each figure at full detail; the others its error there."
    echo "The clusters' nodes=K rows are a sample's: on the light cluster_64x8 (Poisson arrivals, a few"
    echo "requests per GPU in 20 s) the sampled nodes draw other arrivals, the least-loaded router balances"
    echo "over fewer GPUs, and their figures move with"
    echo "that draw (README, \"The simulator's speed\": over 16 seeds the mean throughput is within its"
    echo "standard error, the P99s of few requests are biased low); on the loaded one (a closed loop,"
    echo "33 requests decoding per GPU) the draw is the same on every node and the rows give the levels' own error."
} > "$out"
echo "detail: wrote $out" >&2
