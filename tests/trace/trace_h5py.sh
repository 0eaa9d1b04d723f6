#!/usr/bin/env bash
# tests/trace/trace_h5py.sh KVSTRATA RESULTS_README SCENARIO: runs the h5py example
# of results/README.md's trace schema section as written there (extracted
# from the README, not copied), with my_access_reports() defined here as a
# small generator, then checks that `kvstrata trace stats` reads the trace it
# writes (h5py writes string attributes as variable-length UTF-8) and that
# `kvstrata run` replays it (sparse.policy = "trace"). Skips (77) without
# python3, h5py or numpy.
set -euo pipefail
ks=$1 readme=$2 sc=$3
source "$(dirname "$0")/../h5py_python.sh" trace_h5py # sets $py
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

# the first python block of the trace schema section
awk '/^## / { in_sec = ($0 ~ /^## Trace file schema/) }
     in_sec && /^```python$/ { on = 1; n++; next }
     on && /^```$/ { on = 0; next }
     on && n == 1' "$readme" > "$dir/example.py"
if ! grep -q 'my_access_reports()' "$dir/example.py" || ! grep -q 'h5py.File("mine.h5", "w")' "$dir/example.py"; then
    echo "trace_h5py: no h5py example calling my_access_reports() and writing mine.h5 in $readme" >&2
    exit 1
fi

# 2 requests x 8 steps x 32 layers (the example's layers and block_size = 32)
# of 4096-token prompts: the sink, the last two blocks and 8 blocks that
# drift by request, step and layer, masses summing to 1.
cat > "$dir/run.py" << 'EOF'
import runpy

def my_access_reports():
    for req in range(2):
        for step in range(8):
            context = 4096 + step + 1
            nb = (context + 31) // 32
            for layer in range(32):
                picks = {0, nb - 2, nb - 1}
                picks.update((7 * layer + 3 * req + step // 2 + 5 * i) % (nb - 2) for i in range(8))
                blocks = sorted(picks)
                masses = [0.5 if b == 0 else 0.5 / (len(blocks) - 1) for b in blocks]
                yield (req, step, layer, context, blocks, masses, 1e-5 if req == 0 else -1.0)

runpy.run_path("example.py", init_globals={"my_access_reports": my_access_reports})
EOF
(cd "$dir" && "$py" run.py)

get() { sed -n "s/.*\"$1\": \([0-9.e+-]*\).*/\1/p" "$2"; }
"$ks" trace stats "$dir/mine.h5" --json > "$dir/stats.json"
req=$(get requests "$dir/stats.json") rec=$(get records "$dir/stats.json") lay=$(get layers "$dir/stats.json")
if [ "$req" != 2 ] || [ "$rec" != $((2 * 8 * 32)) ] || [ "$lay" != 32 ]; then
    echo "trace_h5py: trace stats read $req requests, $rec records, $lay layers; expected 2, 512, 32" >&2
    exit 1
fi
"$ks" run "$sc" --set sparse.policy=trace --set sparse.file="$dir/mine.h5" -o "$dir/run.h5" --json > "$dir/run.json"
fin=$(get requests_finished "$dir/run.json") hit=$(get hit_rate_l1 "$dir/run.json")
if ! awk -v f="$fin" -v h="$hit" 'BEGIN { exit !(f == 4 && h > 0 && h <= 1) }'; then
    echo "trace_h5py: the replay finished $fin requests, hit_rate_l1 $hit" >&2
    exit 1
fi
echo "trace_h5py: the README's h5py trace: $rec records; replayed: $fin requests, hit_rate_l1 $hit"
