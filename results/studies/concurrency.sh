#!/usr/bin/env bash
# results/studies/concurrency.sh [KVSTRATA] - study 5: throughput and latency
# against concurrency for Llama-3-8B on one H100 (dense) and DeepSeek-V3.2 on
# one 8xH200 node (data-parallel attention, 8-way experts, DSA's 2048-token
# selection), each point 300 s of closed-loop clients; then
# results/studies/concurrency.md, the table with what bounds each point.
#
# Runs the two sweeps (concurrency_llama3_8b.lua, concurrency_deepseek_v3_2.lua)
# into results/studies/concurrency_*/ (points already complete are reused), 2
# at a time: about 3 minutes of one core each on this project's 2-core VM.
#
# What bounds a point, from its summary (the first rule that holds):
#   HBM capacity  the KV pool holds fewer requests than the clients of a rank
#                 (peak_batch < concurrency / ranks: the others queue)
#   prefill       prefill's compute took more than half of the GPUs' time
#                 (prefill_seconds / (ranks x sim_time) > 0.5)
#   compute       most decode iterations were compute-bound (compute_bound_fraction > 0.5)
#   NVLink        collectives took more than a quarter of the GPUs' time (comm_fraction > 0.25)
#   HBM bandwidth otherwise: the weights and KV a step reads set its time
set -euo pipefail
cd "$(dirname "$0")/../.."
ks=${1:-build/kvstrata}
out=results/studies/concurrency.md
for s in llama3_8b deepseek_v3_2; do
    "$ks" sweep "results/studies/concurrency_$s.lua" -o "results/studies/concurrency_$s" -j 2 > /dev/null
done

# table STUDY RANKS TITLE
table() {
    local dir=results/studies/concurrency_$1 ranks=$2
    echo "### $3"
    echo
    echo "| clients | finished | output tok/s | TPOT mean (ms) | ITL p99 (ms) | TTFT mean (s) | batch per rank | prefill share | compute-bound | NVLink | bound |"
    echo "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |"
    jq -r '.points[] | "\(.id) \(.values["workload.arrival.concurrency"])"' "$dir/sweep.json" | while read -r id c; do
        jq -r --argjson c "$c" --argjson ranks "$ranks" '
            def pct: if . == null then "-" else (. * 100 | round | tostring) + "%" end;
            def ms: if . == null then "-" else (. * 1000 * 10 | round / 10 | tostring) end;
            (.prefill_seconds / ($ranks * .sim_time)) as $pf
            | (if .peak_batch < ($c / $ranks) then "HBM capacity"
               elif $pf > 0.5 then "prefill"
               elif .compute_bound_fraction > 0.5 then "compute"
               elif .comm_fraction > 0.25 then "NVLink"
               else "HBM bandwidth" end) as $bound
            | "| \($c) | \(.requests_finished) | \(.output_throughput | round) | \(.tpot_mean | ms) | \(.itl_p99 | ms) | \(.ttft_mean * 100 | round / 100) | \(.peak_batch) | \($pf | pct) | \(.compute_bound_fraction | pct) | \(.comm_fraction | pct) | \($bound) |"
        ' "$dir/points/$id.json"
    done
    echo
}

{
    echo "# Study 5: throughput and latency against concurrency"
    echo
    echo "Made by \`results/studies/concurrency.sh\` ($(date -u +%Y-%m-%d), $("$ks" --version 2>/dev/null | head -1 || echo kvstrata)); each point 300 s of"
    echo "closed-loop clients, the fused scheduler (token budget 8192), the KV pool what"
    echo "\`mem_fraction\` of HBM holds after the weights, every block in HBM. TPOT is per request,"
    echo "(finish - first token) / (tokens - 1); ITL is every gap between two tokens. Prefill share:"
    echo "prefill's compute over the GPUs' time; compute-bound: busy time in iterations whose compute"
    echo "outlasted their memory traffic; NVLink: time in collectives. The bound column applies the"
    echo "rules in the script's header to these figures."
    echo
    table llama3_8b 1 "Llama-3-8B, dense, one H100 SXM (2048-token prompts, 256-token answers)"
    table deepseek_v3_2 8 "DeepSeek-V3.2, DSA top-2048, one 8xH200 node, DP attention 8 + EP 8 (8192-token prompts, 1024-token answers)"
} > "$out"
echo "results/studies/concurrency.sh: wrote $out" >&2
