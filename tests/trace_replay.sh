#!/usr/bin/env bash
# tests/trace_replay.sh KVSTRATA SCENARIO: records a trace of the scenario
# (2 requests, 48 steps), checks its size, then replays it in kvstrata run
# (sparse.policy = "trace") and checks that every request finished with sane
# hit rates and that blocks moved.
set -euo pipefail
ks=$1 sc=$2
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
"$ks" trace record "$sc" -o "$dir/t.h5" --requests 2 --steps 48 --json > "$dir/rec.json"
layers=$(sed -n 's/.*"layers": \([0-9]*\).*/\1/p' "$dir/rec.json")
records=$(sed -n 's/.*"records": \([0-9]*\).*/\1/p' "$dir/rec.json")
if [ "$records" != $((2 * 48 * layers)) ]; then
    echo "trace_replay: $records records, expected 2 x 48 x $layers" >&2
    exit 1
fi
"$ks" run "$sc" --set sparse.policy=trace --set sparse.file="$dir/t.h5" -o "$dir/run.h5" --json > "$dir/run.json"
get() { sed -n "s/.*\"$1\": \([0-9.e+-]*\).*/\1/p" "$dir/run.json"; }
fin=$(get requests_finished) hit=$(get hit_rate_l1) moved=$(get migrated_bytes_l2_l1)
if ! awk -v f="$fin" -v h="$hit" -v m="$moved" 'BEGIN { exit !(f == 4 && h > 0 && h <= 1 && m > 0) }'; then
    echo "trace_replay: replay finished $fin requests, hit_rate_l1 $hit, $moved bytes promoted" >&2
    exit 1
fi
echo "trace_replay: $records records; replay: 4 requests, hit_rate_l1 $hit, $moved bytes promoted"
