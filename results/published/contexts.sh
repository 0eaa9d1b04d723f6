#!/usr/bin/env bash
# results/published/contexts.sh [KVSTRATA] - peak generation throughput of the
# baseline (glm_baseline.lua) and of HiSparse (glm_hisparse.lua) by prompt
# length, GLM-5.1-FP8 on 8xH200 (PUBLISHED.md section 1, arXiv 2608.07009
# Fig. 5, secondary): 4K 2288 -> 2280, 32K 624 -> 1919, 160K 232 -> 680 tok/s.
# Writes results/published/contexts.md.
#
# The peak is taken at saturation: as many requests per attention rank as the
# configuration admits (--max-running-requests 480 is 60 per rank; HBM, host
# pool and device buffers may admit fewer). Per prompt length and
# configuration, two probes and a run:
#   capacity  1 s at 480 clients: requests_admitted / 8 ranks;
#   prefill   8 one-token requests: a prompt's prefill time on a rank;
#   run       8 x capacity clients, until every rank has prefilled its
#             requests (1.3 x capacity x prefill: fused iterations of two
#             prompts with the others' decode step) and decoded 8 s more; the figure
#             is the steady decode throughput (steady.py), as in concurrency.sh.
# HiSparse runs at detail.layers=13 (concurrency.md gives its error at 32K).
# About 20 minutes on this project's 2-core VM.
set -euo pipefail
cd "$(dirname "$0")/../.."
ks=${1:-build/kvstrata}
out=results/published/contexts.md
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

source results/published/probe.sh
source results/published/rows.sh

for ctx in 4096 32768 163840; do
    for v in baseline hisparse; do
        lod=()
        [ "$v" = hisparse ] && lod=(--set detail.layers=13)
        echo "contexts.sh: $v, $ctx-token prompts" >&2
        saturated_steady "$v$ctx" "glm_$v.lua" --set model.max_context=172032 --set "workload.prompt_tokens=$ctx" \
            "${lod[@]}"
    done
done

{
    echo "# Peak generation throughput by prompt length, baseline against HiSparse, GLM-5.1-FP8, 8xH200"
    echo
    echo "\`results/published/contexts.sh\`, $(date -u +%Y-%m-%d), $(uname -m) $(nproc)-core VM, kvstrata $(git rev-parse --short HEAD)."
    echo "Admission: whole outputs reserved (\`scheduler.reserve=full\`); SGLang's estimated reservations over whole request lifetimes: \`admission.md\`."
    echo "Steady decode throughput at saturation (steady.py: per attention rank the last 8 /steps records before its first"
    echo "request finishes, once its batch is prefilled; batch / step time, summed over the 8 ranks); HiSparse at \`detail.layers=13\`. Published: arXiv 2608.07009 Fig. 5 (secondary)."
    echo "Goals (issue 18): tokens/s within 25%, the HiSparse / baseline ratio within 15%."
    echo
    echo "| prompt | | published tok/s | kvstrata tok/s | error | requests per rank | step (ms) |"
    echo "| ---: | --- | ---: | ---: | ---: | ---: | ---: |"
    throughput_rows "4096 32768 163840" "2288 624 232" "2280 1919 680"
} > "$out"
echo "wrote $out" >&2
