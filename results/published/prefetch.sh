#!/usr/bin/env bash
# results/published/prefetch.sh [KVSTRATA] - what layer-wise prefetch
# (cache.layer_prefetch = "previous") changes in HiSparse's throughput,
# GLM-5.1-FP8 on 8xH200, 32K-token prompts: glm_hisparse.lua at 8 and 64
# concurrent requests, at full detail (a layer's selection is predicted by
# the previous layer's: at detail.layers=13 the previous simulated layer is
# 6 layers down, a weaker prediction), with and without it. A what-if: the
# published throughput figures do not say whether HiSparse ran with it.
# The figure is the steady decode throughput (steady.py), the runs sized as
# concurrency.sh's; the baseline's steady throughput at these points is
# concurrency.md's. Writes results/published/prefetch.md. About 30 minutes
# of one core on this project's 2-core VM.
set -euo pipefail
cd "$(dirname "$0")/../.."
ks=${1:-build/kvstrata}
out=results/published/prefetch.md
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
source results/published/probe.sh
pre=$(probe_prefill glm_hisparse.lua)
cap=$(probe_capacity glm_hisparse.lua)
# run NAME CONCURRENCY PREFETCH: $tmp/NAME.json and $tmp/NAME.steady
run() {
    local name=$1 c=$2 per=$((($2 + 7) / 8)) dur
    [ "$per" -gt "$cap" ] && per=$cap
    dur=$(saturated_duration "$per" "$pre")
    echo "prefetch.sh: $name ($dur simulated)" >&2
    "$ks" run results/published/glm_hisparse.lua --set "workload.arrival.concurrency=$c" --set "duration=$dur" \
        "${full[@]}" --set "cache.layer_prefetch=$3" -o "$tmp/$name.h5" --json > "$tmp/$name.json" 2> "$tmp/$name.err" ||
        { cat "$tmp/$name.err" >&2; exit 1; }
    /usr/bin/python3 results/published/steady.py "$tmp/$name.h5" > "$tmp/$name.steady"
    rm -f "$tmp/$name.h5"
}
points=(8 64)
for c in "${points[@]}"; do
    run "n$c" "$c" none
    run "p$c" "$c" previous
done
field() { jq -r ".$2" "$tmp/$1.json"; }
steady() { awk -v i="$2" '{ print $i }' "$tmp/$1.steady"; }
{
    echo "# Layer-wise prefetch in HiSparse's throughput, GLM-5.1-FP8, 8xH200, 32K-token prompts"
    echo
    echo "\`results/published/prefetch.sh\`, $(date -u +%Y-%m-%d), $(uname -m) $(nproc)-core VM, kvstrata $(git rev-parse --short HEAD)."
    echo "Steady decode throughput (steady.py, as \`concurrency.md\`), full detail, whole outputs reserved. \`none\`: a layer's"
    echo "swap-in starts with the layer; \`previous\`: the misses the previous layer's top-k also chose start with that layer."
    echo "A what-if: the published figures do not say whether HiSparse ran with layer-wise prefetch."
    echo
    echo "| concurrency | none tok/s | step (ms) | stalled | previous tok/s | step (ms) | stalled | previous / none |"
    echo "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
    for c in "${points[@]}"; do
        awk -v c="$c" -v nt="$(steady "n$c" 1)" -v ns="$(steady "n$c" 3)" -v nf="$(field "n$c" stall_fraction)" \
            -v pt="$(steady "p$c" 1)" -v ps="$(steady "p$c" 3)" -v pf="$(field "p$c" stall_fraction)" \
            'BEGIN { printf "| %d | %.0f | %.2f | %.3f | %.0f | %.2f | %.3f | %.3f |\n", c, nt, ns * 1000, nf, pt, ps * 1000, pf, pt / nt }'
    done
    echo
    echo "stalled: the run's stall_fraction (the share of GPU time waiting for blocks), ramp included."
} > "$out"
echo "wrote $out" >&2
