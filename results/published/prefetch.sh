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
points=(8 64)
for c in "${points[@]}"; do
    steady_point "n$c" glm_hisparse.lua "$c" "$pre" "$cap" --set cache.layer_prefetch=none
    steady_point "p$c" glm_hisparse.lua "$c" "$pre" "$cap" --set cache.layer_prefetch=previous
done
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
