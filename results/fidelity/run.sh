#!/usr/bin/env bash
# results/fidelity/run.sh - the fidelity table: `kvstrata validate` on the six
# validation scenarios (scenarios/validation/), each RUNS times (default 3),
# one after another on a machine left otherwise idle.
#
# Usage: results/fidelity/run.sh [--runs N] [--kvstrata BIN] [--dir DIR] [--out DIR] [--set PATH=VALUE ...]
#                                 [--measure-kernels] [--table-only]
# Writes OUT/NAME.json (OUT: --out, default results/fidelity; one validate
# --json object per run, in a JSON array; --set goes to every validate, e.g.
# platform.profile=NAME) and prints the table (markdown) on stdout: per scenario the
# L1/L2/L3 hit rates (identical in both, or the script fails), ITL mean,
# P50 and P99 (simulator; runtime median over the runs) with the range of
# the simulator's relative error over the runs, the runtime's own spread of
# P50 over the runs (slowest / fastest - 1: the machine's noise floor), and
# the stall fractions. A second table: the same errors when the simulator
# charges the kernel what the runtime's kernel took in that run (validate's
# with_runtime_kernel_speed). A third: the simulator charging each decode step
# what the runtime's kernel took in that step (with_runtime_step_speeds).
# --table-only prints the tables of the JSON files.
set -euo pipefail
cd "$(dirname "$0")/../.."
runs=3 bin=build/kvstrata dir=/var/tmp out=results/fidelity extra=() table_only=0
while [ $# -gt 0 ]; do
    case "$1" in
        --runs) runs=$2; shift 2 ;;
        --kvstrata) bin=$2; shift 2 ;;
        --dir) dir=$2; shift 2 ;;
        --out) out=$2; shift 2 ;;
        --set) extra+=(--set "$2"); shift 2 ;;
        --measure-kernels) extra+=(--measure-kernels); shift ;;
        --table-only) table_only=1; shift ;;
        -h|--help) sed -n '2,19p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "run.sh: unknown argument $1" >&2; exit 2 ;;
    esac
done
command -v jq > /dev/null || { echo "run.sh: jq is needed (apt-get install jq)" >&2; exit 2; }
mkdir -p "$out"
scenarios=(resident l2_bound ssd_bound prefetch_heavy shared_prefix noisy_selection)
for s in "${scenarios[@]}"; do
    [ "$table_only" = 0 ] || break
    echo "run.sh: $s ($runs runs)" >&2
    tmp=$(mktemp)
    for ((i = 0; i < runs; i++)); do
        "$bin" validate "scenarios/validation/$s.lua" --dir "$dir" --json ${extra[@]+"${extra[@]}"} >> "$tmp"
    done
    jq -s . "$tmp" > "$out/$s.json"
    rm -f "$tmp"
done
# the table
pct() { awk -v x="$1" 'BEGIN { printf "%+.1f%%", 100 * x }'; }
echo "| scenario | L1 / L2 / L3 hit rate (identical) | ITL mean sim / runtime (ms), error | ITL P50 sim / runtime (ms), error (goal 5%) | ITL P99 sim / runtime (ms), error (goal 10%) | runtime P50 spread over the runs | stall fraction sim / runtime |"
echo "| --- | --- | --- | --- | --- | --- | --- |"
for s in "${scenarios[@]}"; do
    f=$out/$s.json
    jq -e 'all(.[]; .hit_rates_identical)' "$f" > /dev/null || { echo "run.sh: $s: hit rates differ" >&2; exit 1; }
    row() { # metric -> "sim / runtime-median, error min..max"
        jq -r --arg m "$1" '[.[] | .rows[] | select(.metric == $m)] as $r
            | ($r | map(.runtime) | sort | .[(length - 1) / 2 | floor]) as $med
            | ($r | map(.rel_error) | sort) as $e
            | "\($r[0].simulator * 1000 * 100 | round / 100) / \($med * 1000 * 100 | round / 100), \($e[0] * 1000 | round / 10)% .. \($e[-1] * 1000 | round / 10)%"' "$f"
    }
    hits=$(jq -r '.[0].rows | map(select(.metric | startswith("hit_rate"))) | map(.simulator * 10000 | round / 10000 | tostring) | join(" / ")' "$f")
    stall=$(jq -r '[.[] | .rows[] | select(.metric == "stall_fraction")] as $r | "\($r[0].simulator * 1000 | round / 1000) / \($r | map(.runtime) | sort | .[(length - 1) / 2 | floor] * 1000 | round / 1000)"' "$f")
    spread=$(jq -r '[.[] | .rows[] | select(.metric == "itl_p50") | .runtime] | "\((max / min - 1) * 1000 | round / 10)%"' "$f")
    echo "| $s | $hits | $(row itl_mean) | $(row itl_p50) | $(row itl_p99) | $spread | $stall |"
done
# a rerun of the simulator (validate's KEY: with_runtime_kernel_speed or
# with_runtime_step_speeds) against the runtime, in file $f
erow() { # KEY metric -> "error min..max"
    jq -r --arg k "$1" --arg m "$2" '[.[] | .[$k].rows[] | select(.metric == $m) | .rel_error] | sort
        | "\(.[0] * 1000 | round / 10)% .. \(.[-1] * 1000 | round / 10)%"' "$f"
}
estall() { # KEY -> "simulator / runtime" stall fractions, medians over the runs
    jq -r --arg k "$1" '[.[] | .[$k].rows[] | select(.metric == "stall_fraction")] | sort_by(.runtime) as $r
        | "\($r | map(.simulator) | sort | .[(length - 1) / 2 | floor] * 1000 | round / 1000) / \($r[(($r | length) - 1) / 2 | floor].runtime * 1000 | round / 1000)"' "$f"
}
# the second table: each run's simulator with that run's own kernel speed
k=with_runtime_kernel_speed
echo
echo "| scenario | kernel us per block read, over the runs | within a run: its steps' P10 .. P90 | ITL mean error | ITL P50 error (goal 5%) | ITL P99 error (goal 10%) | stall fraction sim / runtime |"
echo "| --- | --- | --- | --- | --- | --- | --- |"
for s in "${scenarios[@]}"; do
    f=$out/$s.json
    if ! jq -e 'all(.[]; .with_runtime_kernel_speed.rows)' "$f" > /dev/null 2>&1; then
        echo "| $s | not recorded (a validate older than with_runtime_kernel_speed) | | | | | |"
        continue
    fi
    speed=$(jq -r '[.[] | .in_run_kernel_s_per_block * 1e6] | sort | "\(.[0] * 10 | round / 10) .. \(.[-1] * 10 | round / 10)"' "$f")
    steps=$(jq -r 'if all(.[]; .runtime_step_kernel_p10_s_per_block) then
            map("\(.runtime_step_kernel_p10_s_per_block * 1e7 | round / 10) .. \(.runtime_step_kernel_p90_s_per_block * 1e7 | round / 10)") | join("; ")
        else "not recorded" end' "$f")
    echo "| $s | $speed | $steps | $(erow $k itl_mean) | $(erow $k itl_p50) | $(erow $k itl_p99) | $(estall $k) |"
done
# the third table: each run's simulator charging every decode step that step's kernel speed
k=with_runtime_step_speeds
echo
echo "| scenario | ITL mean error | ITL P50 error (goal 5%) | ITL P99 error (goal 10%) | stall fraction sim / runtime |"
echo "| --- | --- | --- | --- | --- |"
for s in "${scenarios[@]}"; do
    f=$out/$s.json
    if ! jq -e 'all(.[]; .with_runtime_step_speeds.rows)' "$f" > /dev/null 2>&1; then
        echo "| $s | not recorded (a validate older than with_runtime_step_speeds) | | | |"
        continue
    fi
    echo "| $s | $(erow $k itl_mean) | $(erow $k itl_p50) | $(erow $k itl_p99) | $(estall $k) |"
done
