#!/usr/bin/env bash
# results/published/run.sh [KVSTRATA] - kvstrata against the published
# measurements of ../shared/PUBLISHED.md (the project's copy of its targets
# is the table this writes): results/published/table.md, with date, machine
# and commit. Every figure is a prediction: nothing here is fitted to a
# target (the locality model is fitted to calibration inputs only:
# calib/locality/dsa.lua). About 6 minutes of one core on this project's
# 2-core VM, and 6 GB of memory for the Belady replay.
#
#   miss rates    hisparse_missrate.lua: one 32K-token request decoding 256
#                 steps of GLM-5.1 with DSA's 2048-token top-k (the "dsa"
#                 access model), per-request device buffers; the miss rate is
#                 1 - hit_rate_l1 over every selected token of every layer.
#                 Belady replays the same selections from a trace.
#   baseline      glm_baseline.lua: requests decoding at once on the node at
#                 saturation (peak_batch x 8 attention ranks).
#   miss cost     TPOT of one request alone, HiSparse minus baseline;
#                 with layer-wise prefetch (cache.layer_prefetch = "previous").
set -euo pipefail
cd "$(dirname "$0")/../.."
ks=${1:-build/kvstrata}
out=results/published/table.md
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mr=results/published/hisparse_missrate.lua
one=(--set workload.requests=1 --set workload.arrival.concurrency=1)

# run NAME SCENARIO ARGS...: the run's JSON summary in $tmp/NAME.json
run() {
    local name=$1 sc=$2
    shift 2
    "$ks" run "$sc" -o "$tmp/$name.h5" --json "$@" > "$tmp/$name.json" 2> "$tmp/$name.err" ||
        { cat "$tmp/$name.err" >&2; exit 1; }
    rm -f "$tmp/$name.h5"
}
get() { jq -r ".$2" "$tmp/$1.json"; }

echo "run.sh: miss rates (dsa selections, 6 runs)" >&2
run k_lru "$mr" "${one[@]}" --set cache.device_buffer_size=2048 &
run b4_lru "$mr" "${one[@]}" &
wait
run b4_fifo "$mr" "${one[@]}" --set cache.evict=fifo &
run b4_random "$mr" "${one[@]}" --set cache.evict=random &
wait
run b8_lru "$mr" "${one[@]}" --set cache.device_buffer_size=8192 &
echo "run.sh: the same selections as a trace, for Belady" >&2
"$ks" trace record "$mr" -o "$tmp/dsa.h5" --requests 1 --steps 256 > /dev/null
wait
replay=(--set sparse.policy=trace --set "sparse.file=$tmp/dsa.h5")
run b4_belady "$mr" "${one[@]}" "${replay[@]}" --set cache.evict=belady
run b4_lru_replay "$mr" "${one[@]}" "${replay[@]}"
rm -f "$tmp/dsa.h5"
echo "run.sh: the baseline at saturation, and one request alone" >&2
run base_sat results/published/glm_baseline.lua &
run base_one results/published/glm_baseline.lua "${one[@]}" --set workload.output_tokens=257 --set duration=600s &
wait
run hs_one "$mr" "${one[@]}" &
# the exposed miss cost's sensitivity to host_read_lat (the profile's 1.19 us, measured by calib gpu), 0.5 and 2 us
run hs_one_lat05 "$mr" "${one[@]}" --set platform.host_read_lat=0.5us
wait
run hs_one_lat2 "$mr" "${one[@]}" --set platform.host_read_lat=2us &
# layer-wise prefetch: a layer's misses that the previous layer's selection chose start with that layer
run hs_one_prefetch "$mr" "${one[@]}" --set cache.layer_prefetch=previous
wait

# row FIGURE PUBLISHED KVSTRATA GOAL(relative, or "-") SOURCE
row() {
    awk -v f="$1" -v p="$2" -v k="$3" -v g="$4" -v s="$5" 'BEGIN {
        err = (k - p) / p
        verdict = g == "-" ? "-" : ((err < 0 ? -err : err) <= g ? "met" : "missed")
        goal = g == "-" ? "-" : sprintf("within %d%%", g * 100)
        printf "| %s | %s | %.4g | %+.1f%% | %s | %s | %s |\n", f, p, k, err * 100, goal, verdict, s
    }'
}
miss() { awk -v h="$(get "$1" hit_rate_l1)" 'BEGIN { printf "%.4f", 1 - h }'; }
{
    echo "# kvstrata against published measurements"
    echo
    echo "\`results/published/run.sh\`, $(date -u +%Y-%m-%d), $(uname -m) $(nproc)-core VM, kvstrata $(git rev-parse --short HEAD)."
    echo "Published figures and their sources: \`../shared/PUBLISHED.md\`. Error: (kvstrata - published) / published."
    echo "Goals: the issue's (miss rates within 25%); for ratios of miss rates, ours (15%): they test the"
    echo "mechanisms (buffer size, policy) apart from the level of locality."
    echo
    echo "| figure | published | kvstrata | error | goal | verdict | source |"
    echo "| --- | ---: | ---: | ---: | --- | --- | --- |"
    src="arXiv 2608.07009 Fig. 6 (secondary)"
    row "miss rate, buffer = top-k (2048 tokens), LRU" 0.30 "$(miss k_lru)" 0.25 "$src"
    row "miss rate, buffer 4096, LRU" 0.134 "$(miss b4_lru)" 0.25 "$src"
    row "miss rate, buffer 4096, FIFO" 0.172 "$(miss b4_fifo)" 0.25 "$src"
    row "miss rate, buffer 4096, random" 0.161 "$(miss b4_random)" 0.25 "$src"
    row "miss rate, buffer 4096, Belady" 0.082 "$(miss b4_belady)" 0.25 "$src"
    row "miss rate, buffer 8192, LRU" 0.067 "$(miss b8_lru)" 0.25 "$src"
    row "miss rate ratio, LRU 4096 / buffer = top-k" "$(awk 'BEGIN { print 0.134 / 0.30 }')" \
        "$(awk -v a="$(miss b4_lru)" -v b="$(miss k_lru)" 'BEGIN { print a / b }')" 0.15 "derived from the rows above"
    row "miss rate ratio, LRU 8192 / LRU 4096" "$(awk 'BEGIN { print 0.067 / 0.134 }')" \
        "$(awk -v a="$(miss b8_lru)" -v b="$(miss b4_lru)" 'BEGIN { print a / b }')" 0.15 "derived from the rows above"
    row "miss rate ratio, Belady / LRU at 4096" "$(awk 'BEGIN { print 0.082 / 0.134 }')" \
        "$(awk -v a="$(miss b4_belady)" -v b="$(miss b4_lru)" 'BEGIN { print a / b }')" 0.15 "derived from the rows above"
    row "miss rate ratio, FIFO / LRU at 4096" "$(awk 'BEGIN { print 0.172 / 0.134 }')" \
        "$(awk -v a="$(miss b4_fifo)" -v b="$(miss b4_lru)" 'BEGIN { print a / b }')" 0.15 "derived from the rows above"
    row "miss rate ratio, random / LRU at 4096" "$(awk 'BEGIN { print 0.161 / 0.134 }')" \
        "$(awk -v a="$(miss b4_random)" -v b="$(miss b4_lru)" 'BEGIN { print a / b }')" 0.15 "derived from the rows above"
    row "requests decoding at once at saturation, baseline, 32K" 60 "$(($(get base_sat peak_batch) * 8))" 0.25 \
        "arXiv 2608.07009 (secondary), \"about 60\""
    row "exposed miss cost per token at low concurrency, synchronous swap-in (ms)" 7.5 \
        "$(awk -v a="$(get hs_one tpot_mean)" -v b="$(get base_one tpot_mean)" 'BEGIN { print (a - b) * 1000 }')" 0.25 \
        "arXiv 2608.07009 (secondary), \"7-8 ms\" (middle taken)"
    row "exposed miss cost per token at low concurrency, layer-wise prefetch (ms)" 3 \
        "$(awk -v a="$(get hs_one_prefetch tpot_mean)" -v b="$(get base_one tpot_mean)" 'BEGIN { print (a - b) * 1000 }')" 0.25 \
        "arXiv 2608.07009 (secondary), \"about 3 ms\""
    echo
    echo "Not in this table (each has its own command, file and figures):"
    echo
    echo "- throughput of baseline and HiSparse by prompt length (4K: 2288 -> 2280, 32K: 624 -> 1919, 160K: 232 -> 680"
    echo "  tok/s) and by concurrency (the blog's shape): not in this table but in \`contexts.md\` and \`concurrency.md\`"
    echo "  (\`contexts.sh\`, \`concurrency.sh\`), from the steady decode steps of runs at a level of detail. A whole benchmark"
    echo "  run needs 32K-token requests decoding 8K tokens at up to 480 at once: at the $(awk -v w="$(get hs_one wall_s)" 'BEGIN { printf "%.0f", w / 256 * 1000 }') ms of wall time a"
    echo "  request-step costs now at full detail (hs_one), about $(awk -v w="$(get hs_one wall_s)" 'BEGIN { printf "%.0f", w / 256 * 256 * 8192 / 3600 }') wall hours for 256 requests."
    echo "- the GH200 / Qwen3-30B figures (4K: 2430 -> 2668, 32K: 511 -> 1824, 200K: 111 -> 520 tok/s): in"
    echo "  \`qwen_contexts.md\` (\`qwen_contexts.sh\`), as \`contexts.md\` for GLM-5.1; their scenarios assume what the summary"
    echo "  we hold does not give (the GH200's memory, the harness, HiSparse's configuration, Quest's locality)."
    echo "- ESS's throughput by batch and device ratio (Table 2): not in this table but in \`ess.md\` (\`ess.sh\`, about"
    echo "  40 minutes at JOBS=2): its deployment (expert parallelism 32 over 4 nodes, two-batch overlap, multi-token prediction),"
    echo "  with what the summary we hold does not give assumed in \`ess.lua\` (the GPU, what \"MTP 2\" verifies)."
    echo
    echo "Checks beside the table: LRU on the replayed trace gives miss rate $(miss b4_lru_replay) (the dsa run: $(miss b4_lru); they must agree);"
    echo "one request's TPOT: baseline $(awk -v a="$(get base_one tpot_mean)" 'BEGIN { printf "%.3f", a * 1000 }') ms, HiSparse $(awk -v a="$(get hs_one tpot_mean)" 'BEGIN { printf "%.3f", a * 1000 }') ms;"
    echo "the baseline's batch per attention rank at saturation: $(get base_sat peak_batch)."
    echo
    echo "The exposed miss cost is the swap-in kernel's: SGLang's gives each request one thread block of 30 warps, a warp"
    echo "copies one token's 1152 B at a time in 8-byte loads per lane, 5 round trips to host memory each"
    echo "(\`cache.gather_warps\`), so one request's misses of a layer take ceil(misses / 30) x 5 round trips, however idle"
    echo "the link; at high concurrency the link's rate bounds the step instead. The round trip (\`platform.host_read_lat\`,"
    echo "1.19 us) was measured by \`calib gpu\` on an H200 (one GPU thread's dependent loads from pinned host memory,"
    echo "\`results/device/2026-12-04_h200/\`); SGLang's kernel on the published machine may differ: at 0.5 us the cost is $(awk -v a="$(get hs_one_lat05 tpot_mean)" -v b="$(get base_one tpot_mean)" 'BEGIN { printf "%.2f", (a - b) * 1000 }') ms, at 2 us $(awk -v a="$(get hs_one_lat2 tpot_mean)" -v b="$(get base_one tpot_mean)" 'BEGIN { printf "%.2f", (a - b) * 1000 }') ms. It also scales with"
    echo "the miss rate, here $(awk -v m="$(miss b4_lru)" 'BEGIN { printf "%.1f", m / 0.134 }') times the published one (buffer 4096, LRU, above): at the published rate the same kernel"
    echo "would expose about $(awk -v m="$(miss b4_lru)" 'BEGIN { printf "%.1f", 0.134 / m }') times as much. Without the kernel's structure (one kernel at ESS's 37 GB/s for all misses) it was 1.55 ms (kvstrata 2512723)."
    echo
    echo "Layer-wise prefetch (\`cache.layer_prefetch = \"previous\"\`): the misses of a layer that the previous layer's"
    echo "top-k also chose start copying when that layer starts, beside its own; the rest when the layer starts. How much"
    echo "it hides rests on how alike adjacent layers' selections are: the \`dsa\` model's cross-layer correlation is fitted"
    echo "to IndexCache's 70-100% adjacent-layer overlap (a calibration input, \`calib/locality/dsa.lua\`). Which misses"
    echo "SGLang's prefetch predicts, and from what, we do not know from the text we hold: the previous layer's top-k is our"
    echo "assumption."
} > "$out"
echo "wrote $out" >&2
