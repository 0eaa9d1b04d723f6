#!/usr/bin/env bash
# results/studies/cold_regions.sh [KVSTRATA] - cold regions warming up aside
# (cache.cold_share, the seed's section 5.5) off and on, on
# results/studies/cold_regions.lua; writes results/studies/cold_regions.md.
# About 2 x 105 s of one core on this project's 2-core VM.
set -euo pipefail
cd "$(dirname "$0")/../.."
ks=${1:-build/kvstrata}
out=results/studies/cold_regions.md
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for cs in 0 0.3; do
    "$ks" run results/studies/cold_regions.lua -o "$tmp/run_$cs.h5" --json --set cache.cold_share=$cs \
        > "$tmp/run_$cs.json" 2> "$tmp/run_$cs.err" &
done
wait
for cs in 0 0.3; do grep -v "stack" "$tmp/run_$cs.err" >&2 || true; done
{
    echo "# Cold regions warming up aside, off and on"
    echo
    echo "\`results/studies/cold_regions.sh\` on \`results/studies/cold_regions.lua\`, $(date -u +%Y-%m-%d), $(uname -m), kvstrata $(git rev-parse --short HEAD)."
    echo "ITL: every gap between two tokens of a request; TPOT: per finished request."
    echo
    echo "| cold_share | ITL p50 (ms) | ITL p99 (ms) | ITL p99 / p50 | TPOT p50 (ms) | TPOT p99 (ms) | stall | L1 hit rate | steps sat out | output tok/s |"
    echo "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
    for cs in 0 0.3; do
        jq -r --arg cs "$cs" '
            def ms: (. * 1000 * 1000 | round / 1000 | tostring);
            "| \($cs) | \(.itl_p50 | ms) | \(.itl_p99 | ms) | \(.itl_p99 / .itl_p50 * 100 | round / 100) | \(.tpot_p50 | ms) | \(.tpot_p99 | ms) | \(.stall_fraction * 1000 | round / 10)% | \(.hit_rate_l1 * 1000 | round / 10)% | \(.sat_out) | \(.output_throughput | round) |"' \
            "$tmp/run_$cs.json"
    done
    echo
    echo "How to read it: with cold_share on, a request whose step misses more than that share of its selection"
    echo "(a cold start from the prefill pool, a retrieval episode) sits the step out while its blocks warm up"
    echo "within the step's link budget; the others' layers do not wait for them (stall), at the price of the"
    echo "waiting request's own gaps (TPOT p99, and the ITL of the token it resumes with). The L1 hit rate"
    echo "counts the accesses of the steps sat out (the selection probes the cache each step) as misses again."
    echo "The seed's claim is P99 within 3x of the typical token time. The step still ends when all its"
    echo "batches have landed, warm-ups included, so a warm-up larger than the step's link time still delays it."
} > "$out"
echo "wrote $out"
