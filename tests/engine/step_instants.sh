#!/usr/bin/env bash
# tests/engine/step_instants.sh KVSTRATA STEPS SCENARIO [ARGS...]: the run's
# summary counts STEPS decode steps, and the result file's /steps shows each
# of them at an instant of its own (README "kvstrata run", --threads: GPUs'
# decode steps do not start at the same simulated instant).
# /steps holds one record per GPU per thousandth of the duration, at an
# iteration's end; where every iteration outlasts a thousandth (checked: the
# decode-step records number exactly STEPS) it holds every iteration. A
# record ends a decode step when the GPU's accesses (found_l1 + found_l2 +
# found_l3, fields 10-12; prefill-only iterations access nothing) grew since
# its previous record.
set -euo pipefail
ks=$1 want=$2
shift 2
here=$(cd "$(dirname "$0")/.." && pwd)
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
"$ks" run "$@" -o "$dir/r.h5" --json > "$dir/r.json"
steps=$(jq -e '.steps' "$dir/r.json")
bash "$here/h5_rows.sh" "$dir/r.h5" /steps | LC_ALL=C sort -t, -k2,2n -k1,1g |
    awk -F, '{ f = $10 + $11 + $12; if ($2 != g) { g = $2; p = 0 } if (f > p) print $1; p = f }' > "$dir/decode_t"
records=$(wc -l < "$dir/decode_t")
instants=$(LC_ALL=C sort -u "$dir/decode_t" | wc -l)
echo "step_instants: summary steps $steps, /steps decode records $records at $instants distinct instants (want $want)"
[ "$steps" = "$want" ] && [ "$records" = "$want" ] && [ "$instants" = "$want" ]
