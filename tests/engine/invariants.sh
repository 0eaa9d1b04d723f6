#!/usr/bin/env bash
# tests/engine/invariants.sh SUMMARY.json RESULT.h5: what must hold on any
# run's figures, whatever the model computes (golden.sh checks it on every
# golden run, so that a golden regenerated through a change still passes
# only if its content is coherent):
#   - the run decoded: tokens > 0, and arrived >= admitted >= finished;
#   - hit rates over L1, L2 and L3 sum to 1 (when blocks were accessed);
#   - throughputs are counts over sim_time; percentiles never decrease
#     (p50 <= p90 <= p99) and stall and host fractions lie in [0, 1];
#   - /requests: one record a finished request, each with all its output;
#     their tokens add up to the summary's (unfinished ones included);
#   - /steps: a GPU's token count never falls and ends within the total;
#   - /links: every block promoted to L1 crossed a GPU's PCIe link down,
#     which carried at least the bytes the tiers say moved up.
set -euo pipefail
sum=$1 h5=$2
here=$(cd "$(dirname "$0")/.." && pwd)
fail() { echo "invariants: $*" >&2; exit 1; }
jq -e '.tokens > 0 and .requests_arrived >= .requests_admitted and .requests_admitted >= .requests_finished' \
    "$sum" > /dev/null || fail "no token, or arrived < admitted < finished"
jq -e '.block_accesses == 0 or ((.hit_rate_l1 + .hit_rate_l2 + .hit_rate_l3 - 1) | fabs) <= 1e-9' "$sum" \
    > /dev/null || fail "hit rates do not sum to 1"
jq -e '((.output_throughput * .sim_time - .tokens) | fabs) <= 1e-6 * .tokens and
       ((.request_throughput * .sim_time - .requests_finished) | fabs) <= 1e-6 * (.requests_finished + 1)' \
    "$sum" > /dev/null || fail "throughputs are not counts over sim_time"
jq -e '[.ttft_p50 <= .ttft_p90, .ttft_p90 <= .ttft_p99, .tpot_p50 <= .tpot_p90, .tpot_p90 <= .tpot_p99,
        .itl_p50 <= .itl_p90, .itl_p90 <= .itl_p99, .e2el_p50 <= .e2el_p90, .e2el_p90 <= .e2el_p99,
        .stall_fraction >= 0, .stall_fraction <= 1, .host_fraction >= 0, .host_fraction <= 1] | all' \
    "$sum" > /dev/null || fail "a percentile decreases, or a fraction is out of [0, 1]"
read -r tokens finished up < <(jq -r '"\(.tokens) \(.requests_finished) \(.migrated_bytes_l2_l1 + .migrated_bytes_l3_l1)"' "$sum")
# /requests: id session turn gpu prompt output generated arrival admitted first_token finish ...
bash "$here/h5_rows.sh" "$h5" /requests | awk -F, -v tokens="$tokens" -v finished="$finished" '
    { gen += $7; if ($11 >= 0) { n++; if ($7 != $6) bad++ } }
    END { if (gen != tokens || n != finished || bad) {
              printf "invariants: /requests: %d tokens (summary %d), %d finished (summary %d), %d short\n",
                     gen, tokens, n, finished, bad > "/dev/stderr"; exit 1 } }'
# /steps: t gpu batch pending occupancy(3) step_time stall found(3) bytes_up bytes_down tokens
bash "$here/h5_rows.sh" "$h5" /steps | awk -F, -v tokens="$tokens" '
    { if ($NF < last[$2]) bad = 1; last[$2] = $NF }
    END { for (g in last) s += last[g]; if (bad || s > tokens) {
              printf "invariants: /steps: tokens fall (%d) or end past the total (%d > %d)\n", bad, s, tokens \
                  > "/dev/stderr"; exit 1 } }'
# /links: name bandwidth latency bytes utilisation
bash "$here/h5_rows.sh" "$h5" /links | awk -F, -v up="$up" '
    $1 ~ /pcie_DOWN$/ && $1 ~ /gpu/ { down += $4 }
    END { if (down + 1 < up) { printf "invariants: /links: %.0f bytes down the GPUs'"'"' PCIe links, %.0f promoted\n",
              down, up > "/dev/stderr"; exit 1 } }'
echo "invariants: hold"
