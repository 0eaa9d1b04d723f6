#!/usr/bin/env bash
# tests/engine/links_check.sh KVSTRATA SCENARIO [ARGS...]: a run with disaggregated
# prefill sends every prompt's KV from the pool to node 0; /links must show
# exactly kv_sent_bytes on the pool's link and on node 0's NIC (inbound), and
# the last /link_samples row of each must say the same.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
ks=$1
shift
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
"$ks" run "$@" -o "$dir/run.h5" --json > "$dir/run.json"
sent=$(sed -n 's/.*"kv_sent_bytes": \([0-9.e+]*\).*/\1/p' "$dir/run.json")
"$here/../h5_rows.sh" "$dir/run.h5" /links > "$dir/links"
"$here/../h5_rows.sh" "$dir/run.h5" /link_samples > "$dir/samples"
fail=0
for link in prefill-link_UP n0-nic_DOWN; do
    row=$(grep -n "^$link," "$dir/links" | cut -d: -f1)
    bytes=$(grep "^$link," "$dir/links" | cut -d, -f4)
    last=$(awk -F, -v l=$((row - 1)) '$2 == l { b = $3 } END { print b }' "$dir/samples")
    if ! awk -v a="$bytes" -v b="$sent" -v c="$last" 'BEGIN { exit !(a == b && c == b && b > 0) }'; then
        echo "links_check: $link carried $bytes bytes (last sample $last), kv_sent_bytes $sent" >&2
        fail=1
    fi
done
[ "$fail" = 0 ] && echo "links_check: prefill-link_UP and n0-nic_DOWN carried kv_sent_bytes = $sent"
exit "$fail"
