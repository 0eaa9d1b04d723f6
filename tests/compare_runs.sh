#!/usr/bin/env bash
# tests/compare_runs.sh KVSTRATA KEY OP FACTOR -- ARGS_A... -- ARGS_B...
# Runs `KVSTRATA run ARGS_A --json` and `KVSTRATA run ARGS_B --json` and checks
# that A's KEY compares so with FACTOR x B's KEY: OP is gt, ge, lt or le.
# Example: sparse tokens/s more than 1.3 x dense tokens/s on one workload:
#   compare_runs.sh build/kvstrata output_throughput gt 1.3 \
#     -- s.lua --set sparse.policy=window -- s.lua --set sparse.policy=dense
set -euo pipefail
ks=$1 key=$2 op=$3 factor=$4
shift 4
[ "${1:-}" = "--" ] || { echo "compare_runs: usage: KVSTRATA KEY OP FACTOR -- A... -- B..." >&2; exit 2; }
shift
a=() b=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do a+=("$1"); shift; done
[ "${1:-}" = "--" ] || { echo "compare_runs: no -- before the second run" >&2; exit 2; }
shift
b=("$@")
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
"$ks" run "${a[@]}" -o "$dir/a.h5" --json > "$dir/a.json"
"$ks" run "${b[@]}" -o "$dir/b.h5" --json > "$dir/b.json"
value() { # the number under "KEY": in a JSON summary (one key per line)
    sed -n "s/^ *\"$key\": *\([-0-9.eE+]*\),\{0,1\}$/\1/p" "$1"
}
x=$(value "$dir/a.json") y=$(value "$dir/b.json")
[ -n "$x" ] && [ -n "$y" ] || { echo "compare_runs: key '$key' missing or not a number" >&2; exit 1; }
if awk -v x="$x" -v y="$y" -v f="$factor" -v op="$op" 'BEGIN {
        r = f * y
        ok = op == "gt" ? x > r : op == "ge" ? x >= r : op == "lt" ? x < r : op == "le" ? x <= r : -1
        exit ok == 1 ? 0 : ok == -1 ? 2 : 1 }'; then
    echo "compare_runs: $key $x $op $factor x $y"
else
    echo "compare_runs: FAIL: $key $x is not $op $factor x $y" >&2
    echo "  A: ${a[*]}" >&2
    echo "  B: ${b[*]}" >&2
    exit 1
fi
