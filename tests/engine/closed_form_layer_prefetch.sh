#!/usr/bin/env bash
# closed_form_layer_prefetch.sh KVSTRATA SCENARIO: layer-wise prefetch
# (cache.layer_prefetch = "previous") in closed form. closed_form_buffer.lua
# with 3 layers, each a device buffer of one 32-token block holding block 0,
# and a 10 us overhead per layer; its one decode step replays a trace
# written here (h5py) that selects one block per layer. Each miss is a batch
# of one 131072-byte block: 1 us + 131072 B / 50 GB/s = 3.62144 us alone,
# 1 us + 262144 B / 50 GB/s = 6.24288 us for two sharing the link. A layer
# computes 10 us + 131072 B / 2 TB/s = 10.065536 us.
# - Block 5 in every layer, without prefetch: each layer waits for its own
#   copy, started when the layer starts: 3 x (3.62144 + 10.065536) =
#   41.060928 us.
# - The same with prefetch: layers 1 and 2 selected what the layer before
#   did. Layer 0's and layer 1's copies start together (layer 0's selection
#   predicts layer 1's) and land at 6.24288 us; layers 0 and 1 then run
#   without a wait, layer 2's copy starting with layer 1 (16.308416 us) and
#   landing at 19.929856, before layer 1 ends: 6.24288 + 3 x 10.065536 =
#   36.439488 us.
# - Blocks 5, 6, 6 with prefetch: layer 1's copy is not predicted; it starts
#   with layer 1 (13.686976 us) together with layer 2's, which layer 1's
#   selection predicts: both land 6.24288 us later, and layer 2 waits for
#   nothing: 3.62144 + 6.24288 + 3 x 10.065536 = 40.060928 us.
# Skips (77) without python3, h5py and numpy.
set -euo pipefail
ks=$1 sc=$2
source "$(dirname "$0")/../h5py_python.sh" closed_form_layer_prefetch # sets $py
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

# trace BLOCKS FILE: one request, one decode step (context 2049), layer l selecting block BLOCKS[l]
trace() {
    "$py" - "$1" "$2" << 'PY'
import sys, h5py, numpy as np
blocks, out = [int(b) for b in sys.argv[1].split(",")], sys.argv[2]
steps = np.dtype([("request", "u4"), ("step", "u4"), ("layer", "u4"), ("context", "u4"),
                  ("first", "u8"), ("n", "u4"), ("kernel_time", "f8")])
sel = np.dtype([("block", "u4"), ("mass", "f4")])
with h5py.File(out, "w") as f:
    f.attrs.update(format="kvstrata-trace", version=1, block_size=32, layers=len(blocks), kv_heads=8,
                   q_heads=32, head_dim=128, dtype="fp16", source="closed_form_layer_prefetch.sh")
    f["steps"] = np.array([(0, 0, l, 2049, l, 1, -1.0) for l in range(len(blocks))], dtype=steps)
    f["selected"] = np.array([(b, 1.0) for b in blocks], dtype=sel)
PY
}

# check NAME BLOCKS PREFETCH ITL: the run's ITL is ITL (seconds) to 1e-9 relative
check() {
    trace "$2" "$dir/$1.trace.h5"
    "$ks" run "$sc" --set model.layers=3 --set cache.l1=393216 --set scheduler.layer_overhead=10us \
        --set sparse.policy=trace --set "sparse.file=$dir/$1.trace.h5" --set "cache.layer_prefetch=$3" \
        -o "$dir/$1.h5" --json > "$dir/$1.json"
    local itl
    itl=$(jq .itl_mean "$dir/$1.json")
    if ! jq -e --argjson want "$4" '.steps == 1 and (.itl_mean / $want - 1 | fabs) < 1e-9' "$dir/$1.json" > /dev/null; then
        echo "closed_form_layer_prefetch: $1: ITL $itl s, expected $4 s" >&2
        exit 1
    fi
    echo "$1: ITL $itl s (expected $4)"
}
check same_none 5,5,5 none 41.060928e-6
check same_previous 5,5,5 previous 36.439488e-6
check partial_previous 5,6,6 previous 40.060928e-6
