#!/usr/bin/env bash
# closed_form_pool_nodes.sh KVSTRATA SCENARIO: a disaggregated prefill pool
# filling two nodes at once, in closed form. closed_form.lua on 2 nodes of 2
# GPUs, 8 requests of 4095 tokens arriving together, a pool of 8 GPUs: every
# prefill ends at P = prefill_seconds / 8, then each node takes its 4
# requests' KV (kv_sent_bytes / 2) through its own NIC (25 GB/s) at once, so
# every request is admitted at P + kv_sent_bytes / 2 / 25e9 (90.3 ms; the
# routes' latencies, some microseconds, within the 1e-3 allowed). With
# SimGrid's lazy bandwidth updates the first node's 4 transfers went at the
# pool's rate, admitted at 33 ms (sim/engine/platform.h).
# Skips (77) without python3, h5py and numpy.
set -euo pipefail
ks=$1 sc=$2
source "$(dirname "$0")/../h5py_python.sh" closed_form_pool_nodes # sets $py
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
"$ks" run "$sc" --set platform.nodes=2 --set platform.gpus_per_node=2 --set prefill.mode=disaggregated \
    --set prefill.gpus=8 --set workload.arrival.concurrency=8 --set workload.requests=8 \
    -o "$dir/run.h5" --json > "$dir/run.json"
"$py" - "$dir/run.h5" "$dir/run.json" <<'PY'
import json, sys
import h5py
s = json.load(open(sys.argv[2]))
q = h5py.File(sys.argv[1], "r")["requests"][:]
want = s["prefill_seconds"] / 8 + s["kv_sent_bytes"] / 2 / 25e9
bad = [(int(r["id"]), int(r["gpu"]), float(r["admitted"])) for r in q if abs(r["admitted"] - want) > 1e-3 * want]
if len(q) != 8 or bad:
    sys.exit(f"closed_form_pool_nodes: {len(q)} requests; admitted at {want:.9g} s in closed form, "
             f"these not (id, gpu, admitted): {bad}")
print(f"closed_form_pool_nodes: 8 requests on 2 nodes admitted at {want:.9g} s "
      f"(farthest {max(abs(q['admitted'] - want)):.3g} s)")
PY
