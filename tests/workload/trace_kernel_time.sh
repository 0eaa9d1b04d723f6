#!/usr/bin/env bash
# tests/workload/trace_kernel_time.sh KVSTRATA SCENARIO: kernel times, from `trace
# record` to the replay.
#   - `trace record --backend ref` (2 requests x 24 steps) times the decode
#     kernel of every record: each kernel_time is finite and > 0, and the
#     report's kernel_time_mean is their mean;
#   - --backend auto records the same selections and masses as ref where no
#     GPU answers (auto is ref there); where one does, a trace of the same
#     records whose masses sum to 1; --backend cuda without a GPU fails with
#     the reason and writes nothing;
#   - replayed (sparse.policy = "trace") with every block resident in L1 (no
#     migration, no stall), the simulated time is a closed form of the
#     trace's kernel times: a copy with kernel_time doubled runs longer by
#     the sum of the kernel times, a copy with kernel_time = -1 (not measured:
#     the selected KV over HBM bandwidth instead) shorter by the sum of the
#     kernel times less the KV bytes over HBM bandwidth, and a copy with
#     request 1 alone unmeasured by those sums over request 1 (within 1e-6
#     relative);
#   - a trace whose kernel_time is NaN is refused, naming the record.
# Skips (77) without python3, h5py or numpy (the copies are written with h5py).
set -euo pipefail
ks=$1 sc=$2
source "$(dirname "$0")/../h5py_python.sh" trace_kernel_time # sets $py
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
steps=24
get() { sed -n "s/.*\"$1\": \"\{0,1\}\([^\",]*\)\"\{0,1\},\{0,1\}$/\1/p" "$2"; }

"$ks" trace record "$sc" -o "$dir/ref.h5" --requests 2 --steps $steps --backend ref --json > "$dir/ref.json"
"$ks" trace record "$sc" -o "$dir/auto.h5" --requests 2 --steps $steps --json > "$dir/auto.json"
auto=$(get backend "$dir/auto.json")
if [ "$(get backend "$dir/ref.json")" != ref ] || { [ "$auto" != ref ] && [ "$auto" != cuda ]; }; then
    echo "trace_kernel_time: backends ref -> '$(get backend "$dir/ref.json")', auto -> '$auto'" >&2
    exit 1
fi
# auto is ref exactly when no GPU answers: then --backend cuda must fail cleanly
if [ "$auto" = ref ]; then
    if "$ks" trace record "$sc" -o "$dir/cuda.h5" --requests 1 --steps 2 --backend cuda > "$dir/cuda.out" 2> "$dir/cuda.err"; then
        echo "trace_kernel_time: --backend cuda succeeded where auto found no GPU" >&2
        exit 1
    else
        rc=$?
    fi
    left=$(ls -A "$dir" | grep -v -x -e 'ref\.h5' -e 'ref\.json' -e 'auto\.h5' -e 'auto\.json' -e 'cuda\.out' \
        -e 'cuda\.err' || true)
    if [ "$rc" != 1 ] || ! grep -q -- "--backend cuda: no GPU (" "$dir/cuda.err" || [ -s "$dir/cuda.out" ] ||
        [ -n "$left" ]; then
        echo "trace_kernel_time: --backend cuda without a GPU: exit $rc, stderr '$(cat "$dir/cuda.err")'," \
            "files: $(ls "$dir")" >&2
        exit 1
    fi
fi

"$py" - "$dir" "$auto" "$(get kernel_time_mean "$dir/ref.json")" << 'EOF'
import h5py, numpy as np, shutil, sys
d, auto, mean = sys.argv[1], sys.argv[2], float(sys.argv[3])
def load(name):
    with h5py.File(f"{d}/{name}.h5") as f:
        return f["steps"][...], f["selected"][...]
st, sel = load("ref")
kt = st["kernel_time"]
if not (np.isfinite(kt).all() and (kt > 0).all()):
    sys.exit(f"trace_kernel_time: ref kernel_time not all finite and > 0: min {kt.min()}, max {kt.max()}")
if abs(kt.mean() / mean - 1) > 1e-6:
    sys.exit(f"trace_kernel_time: kernel_time_mean {mean} against the trace's mean {kt.mean()}")
ast, asel = load("auto")
keys = ["request", "step", "layer", "context", "first", "n"]
if auto == "ref":
    same = all((st[k] == ast[k]).all() for k in keys) and np.array_equal(sel, asel)
    if not same:
        sys.exit("trace_kernel_time: --backend auto (ref here) recorded other selections or masses than ref")
else:
    if not all((st[k] == ast[k]).all() for k in keys[:4]):
        sys.exit("trace_kernel_time: the cuda trace's records differ from ref's")
    sums = np.add.reduceat(asel["mass"].astype(np.float64), ast["first"].astype(np.int64))
    if np.abs(sums - 1).max() > 1e-4:
        sys.exit(f"trace_kernel_time: cuda masses of a record sum to {sums.min()}..{sums.max()}")
    same = sum(np.array_equal(sel["block"][a:a + n], asel["block"][b:b + m])
               for a, n, b, m in zip(st["first"], st["n"], ast["first"], ast["n"]))
    print(f"trace_kernel_time: cuda selections equal ref's in {same} of {len(st)} records")
def copy(name, f):
    shutil.copy(f"{d}/ref.h5", f"{d}/{name}.h5")
    with h5py.File(f"{d}/{name}.h5", "r+") as h:
        s = h["steps"][...]
        s["kernel_time"] = f(s)
        h["steps"][...] = s
copy("x2", lambda s: 2 * s["kernel_time"])
copy("none", lambda s: -1.0)
copy("half", lambda s: np.where(s["request"] == 1, -1.0, s["kernel_time"]))
copy("nan", lambda s: np.where(np.arange(len(s)) == 5, np.nan, s["kernel_time"]))
EOF

# the replay: both requests' every block resident, HBM at 2 TB/s
hbm=2e12
for t in ref x2 none half; do
    "$ks" run "$sc" --set sparse.policy=trace --set sparse.file="$dir/$t.h5" --set workload.requests=2 \
        --set workload.output_tokens=$((steps + 1)) --set cache.l1=1GB --set platform.hbm_bw=2TBps \
        --set sparse.kernel_time=trace -o "$dir/run_$t.h5" --json > "$dir/run_$t.json"
    if [ "$(get requests_finished "$dir/run_$t.json")" != 2 ] || [ "$(get stall_fraction "$dir/run_$t.json")" != 0 ] ||
        [ "$(get migrated_bytes_l2_l1 "$dir/run_$t.json")" != 0 ]; then
        echo "trace_kernel_time: the $t replay is not all resident: $(cat "$dir/run_$t.json")" >&2
        exit 1
    fi
done
# without sparse.kernel_time = "trace" the recorded times are not charged:
# the replay of ref takes exactly as long as that of the copy without times
"$ks" run "$sc" --set sparse.policy=trace --set sparse.file="$dir/ref.h5" --set workload.requests=2 \
    --set workload.output_tokens=$((steps + 1)) --set cache.l1=1GB --set platform.hbm_bw=2TBps \
    -o "$dir/run_default.h5" --json > "$dir/run_default.json"
if [ "$(get sim_time "$dir/run_default.json")" != "$(get sim_time "$dir/run_none.json")" ]; then
    echo "trace_kernel_time: without sparse.kernel_time=trace the replay took $(get sim_time "$dir/run_default.json") s," \
         "not the $(get sim_time "$dir/run_none.json") s of the trace without times" >&2
    exit 1
fi
"$py" - "$dir" $hbm "$(get sim_time "$dir/run_ref.json")" "$(get sim_time "$dir/run_x2.json")" \
    "$(get sim_time "$dir/run_none.json")" "$(get sim_time "$dir/run_half.json")" << 'EOF'
import h5py, numpy as np, sys
d, hbm = sys.argv[1], float(sys.argv[2])
ref, x2, none, half = map(float, sys.argv[3:7])
with h5py.File(f"{d}/ref.h5") as f:
    st, sel = f["steps"][...], f["selected"][...]
    bs = int(f.attrs["block_size"])
    per_token = 2 * int(f.attrs["kv_heads"]) * int(f.attrs["head_dim"]) * 2  # K and V, fp16, one layer
kt = st["kernel_time"]
kv = np.zeros(len(st))  # KV bytes each record's selection reads
for i, r in enumerate(st):
    b = sel["block"][r["first"]:r["first"] + r["n"]].astype(np.int64)
    kv[i] = (np.minimum((b + 1) * bs, int(r["context"])) - b * bs).sum() * per_token
r1 = st["request"] == 1
checks = [("doubled - recorded", x2 - ref, kt.sum()),
          ("recorded - unmeasured", ref - none, kt.sum() - kv.sum() / hbm),
          ("recorded - request 1 unmeasured", ref - half, kt[r1].sum() - kv[r1].sum() / hbm)]
for name, got, want in checks:
    if not abs(got / want - 1) <= 1e-6:
        sys.exit(f"trace_kernel_time: sim_time {name}: {got} s, expected {want} s")
    print(f"trace_kernel_time: sim_time {name}: {got:.9f} s, expected {want:.9f} s")
print(f"trace_kernel_time: {len(st)} records, kernel_time mean {kt.mean():.6g} s, min {kt.min():.6g}, max {kt.max():.6g}")
EOF

if "$ks" trace stats "$dir/nan.h5" --json > /dev/null 2> "$dir/nan.err" || ! grep -q "/steps record 5: kernel_time is nan" "$dir/nan.err"; then
    echo "trace_kernel_time: a NaN kernel_time was not refused by record: $(cat "$dir/nan.err")" >&2
    exit 1
fi
