#!/usr/bin/env bash
# results/studies/detail.sh [KVSTRATA] - the level of detail `detail.layers`
# (the cache and selections of 8 or 4 of the 32 layers simulated, each
# standing for 4 or 8) against full detail, on the shipped scenarios whose
# layers it divides; writes results/studies/detail.md: per scenario and
# level, the wall time and the relative error of each figure against full
# detail. Runs are cut as the comments below say (the clusters to a few
# nodes at their load per GPU). About 10 minutes of one core here.
set -euo pipefail
cd "$(dirname "$0")/../.."
ks=${1:-build/kvstrata}
out=results/studies/detail.md
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
levels=(0 8 4)
# name|scenario|options
cases=(
    "seed_default tiered|tests/fixtures/scenarios/seed_default.lua|--set duration=5s --set workload.arrival.rate=40 --set cache.l1=20GB --set prefill.mode=disaggregated --set prefill.gpus=64"
    "default|scenarios/default.lua|--set duration=20s"
    "cluster_64x8 (2 nodes)|scenarios/cluster_64x8.lua|--set platform.nodes=2 --set workload.arrival.rate=6.25 --set duration=20s"
    "cluster_64x8_loaded (1 node)|scenarios/cluster_64x8_loaded.lua|--set platform.nodes=1 --set workload.arrival.concurrency=320 --set duration=1s"
    "code_completion_repo|scenarios/code_completion_repo.lua|--set duration=30s"
    "dialogue_multiturn|scenarios/dialogue_multiturn.lua|--set duration=30s"
    "doc_qa_128k|scenarios/doc_qa_128k.lua|--set duration=60s"
    "random_selection|scenarios/random_selection.lua|"
    "shared_system_prompt|scenarios/shared_system_prompt.lua|"
    "short_context|scenarios/short_context.lua|"
    "llama3_8b_h100|scenarios/llama3_8b_h100.lua|"
)
figures=(output_throughput tpot_p50 tpot_p99 itl_p50 itl_p99 ttft_p50 hit_rate_l1 hit_rate_l2 stall_fraction migrated_bytes_l2_l1 migrated_bytes_l1_l2)
i=0
for c in "${cases[@]}"; do
    IFS='|' read -r name file opts <<< "$c"
    for k in "${levels[@]}"; do
        # shellcheck disable=SC2086
        "$ks" run "$file" $opts --set detail.layers=$k -o "$tmp/$i.$k.h5" --json > "$tmp/$i.$k.json" 2> "$tmp/$i.$k.err" ||
            { cat "$tmp/$i.$k.err" >&2; exit 1; }
        echo "detail: $name, detail.layers=$k: $(jq .wall_s "$tmp/$i.$k.json") s" >&2
    done
    i=$((i + 1))
done
{
    echo "# Level of detail: layers simulated against full detail"
    echo
    echo "\`results/studies/detail.sh\`, $(date -u +%Y-%m-%d), $(uname -m), kvstrata $(git rev-parse --short HEAD)."
    echo "\`detail.layers = K\` simulates the cache and the selections of K of the model's 32 layers (the"
    echo "middle one of each run of 32/K), each standing for 32/K layers: its blocks carry their KV, so"
    echo "capacities, migrated bytes and times are the model's while the blocks handled shrink 32/K-fold."
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
        IFS='|' read -r name file opts <<< "$c"
        for k in "${levels[@]}"; do
            jq -r -n --arg name "$name" --arg k "$k" --argjson figs "$(printf '%s\n' "${figures[@]}" | jq -R . | jq -s .)" \
                --slurpfile full "$tmp/$i.0.json" --slurpfile at "$tmp/$i.$k.json" '
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
        i=$((i + 1))
    done
    echo
    echo "The rows \"all\" give each figure at full detail; the others its error there."
} > "$out"
echo "detail: wrote $out" >&2
