#!/usr/bin/env bash
# results/published/concurrency.sh [KVSTRATA] - the HiSparse blog's headline
# plot (PUBLISHED.md section 1, primary): GLM-5.1-FP8 on 8xH200, 32K-token
# prompts, throughput of the baseline (glm_baseline.lua) and of HiSparse
# (glm_hisparse.lua) as concurrency grows. The blog publishes its shape, not
# its points: the baseline flat once HBM is full, HiSparse near-linear, over
# 3x the baseline at 256 concurrent requests, a modest loss at low
# concurrency. Writes results/published/concurrency.md.
#
# Each run lasts until every admitted request is prefilled (1.3 x the
# prefill time of the prompts its rank admits, measured by a run of one-token
# requests and one of 480 clients) and then decodes 8 s; the figure is its
# steady decode throughput (steady.py: per rank the last 8 /steps records
# before its first request finishes, once its batch is prefilled; batch /
# step time, summed). HiSparse runs at
# detail.layers=13 (6 of the 78 layers per simulated one): its error against
# full detail is measured at 8 requests, where full detail is affordable, and
# printed under the table. About an hour on this project's 2-core VM.
set -euo pipefail
cd "$(dirname "$0")/../.."
ks=${1:-build/kvstrata}
out=results/published/concurrency.md
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
points=(8 16 32 64 128 256)

source results/published/probe.sh
pre_b=$(probe_prefill glm_baseline.lua)
pre_h=$(probe_prefill glm_hisparse.lua --set detail.layers=13)
cap_b=$(probe_capacity glm_baseline.lua)
cap_h=$(probe_capacity glm_hisparse.lua --set detail.layers=13)

for c in "${points[@]}"; do
    steady_point "b$c" glm_baseline.lua "$c" "$pre_b" "$cap_b"
    steady_point "h$c" glm_hisparse.lua "$c" "$pre_h" "$cap_h" --set detail.layers=13
done
# the level of detail's error, at 8 requests
steady_point h8_full glm_hisparse.lua 8 "$pre_h" "$cap_h"

{
    echo "# Throughput by concurrency, baseline against HiSparse, GLM-5.1-FP8, 8xH200, 32K-token prompts"
    echo
    echo "\`results/published/concurrency.sh\`, $(date -u +%Y-%m-%d), $(uname -m) $(nproc)-core VM, kvstrata $(git rev-parse --short HEAD)."
    echo "Admission: whole outputs reserved (\`scheduler.reserve=full\`); SGLang's estimated reservations over whole request lifetimes: \`admission.md\`."
    echo "Steady decode throughput (steady.py: per attention rank the last 8 /steps records before its first request finishes, batch / step time,"
    echo "summed over the 8 ranks); HiSparse at \`detail.layers=13\`. The blog (primary) gives the shape only: the baseline"
    echo "flat once HBM is full, HiSparse near-linear, over 3x the baseline at 256, a modest loss at low concurrency."
    echo
    echo "| concurrency | baseline tok/s | per rank | step (ms) | HiSparse tok/s | per rank | step (ms) | L1 hit rate | HiSparse / baseline |"
    echo "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
    for c in "${points[@]}"; do
        awk -v c="$c" -v bt="$(steady "b$c" 1)" -v bb="$(steady "b$c" 2)" -v bs="$(steady "b$c" 3)" \
            -v ht="$(steady "h$c" 1)" -v hb="$(steady "h$c" 2)" -v hs="$(steady "h$c" 3)" -v hh="$(field "h$c" hit_rate_l1)" \
            'BEGIN { printf "| %d | %.0f | %.3g | %.2f | %.0f | %.3g | %.2f | %.3f | %.2f |\n", c, bt, bb, bs * 1000, ht, hb, hs * 1000, hh, ht / bt }'
    done
    echo
    awk -v ft="$(steady h8_full 1)" -v dt="$(steady h8 1)" -v fh="$(field h8_full hit_rate_l1)" -v dh="$(field h8 hit_rate_l1)" \
        'BEGIN { printf "Level of detail at 8 requests: throughput %.0f tok/s at detail.layers=13 against %.0f at full detail (%+.1f%%), L1 hit rate %.3f against %.3f.\n", dt, ft, (dt - ft) / ft * 100, dh, fh }'
} > "$out"
echo "wrote $out" >&2
