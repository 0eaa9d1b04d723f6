#!/usr/bin/env bash
# lockstep.sh KVSTRATA SCENARIO: the attention ranks of an expert group in
# lockstep (parallel.ranks), against ranks on their own. closed_form_moe.lua
# on one node of 2 GPUs joined by a 450 GB/s NVLink, tp 2 with 2 attention
# ranks and the experts over both (ep 2: one expert group of 2 ranks), every
# block resident, prompts from a prefill pool so that every request is
# admitted at the same instant. A GPU reads half of the routed experts its
# group's tokens use, 1,572,864 B each (3 x 1024 x 512 fp16 of the one MoE
# layer), at 2 TB/s: 8 x (1 - (6/8)^t) experts for t tokens (2, 3.5, 4.625,
# 5.46875 for 1 to 4). On their own, each rank counts the group as two ranks
# of its own batch; in lockstep, its own tokens and what the other decodes.
# - 3 requests: the round robin gives rank 0 two and rank 1 one. On their
#   own rank 0 reads the experts of 4 tokens and rank 1 those of 2: its
#   steps are shorter (one token's KV, fewer experts): its TPOT is lower. In
#   lockstep both read those of 3 tokens, rank 1 waits for rank 0 at the MoE
#   layer and at each iteration's start: every request's TPOT is rank 0's,
#   about (5.46875 - 4.625) x 1,572,864 B / 2 TB/s = 0.663552 us a step
#   below rank 0's on its own (0.6-0.7 us: rank 0 begins the first
#   iteration before rank 1 has admitted its request, and reads then the
#   experts of its own 2 tokens), and sync_fraction > 0;
# - 4 requests, two a rank: every step the same as on their own (4 tokens),
#   but the first of rank 0, which reads the experts of its own 2 tokens for
#   the same reason, (5.46875 - 3.5) x 1,572,864 = 3,096,576 B less, and
#   then waits for rank 1 at the MoE layer: the same TPOTs, latencies and
#   throughputs, weight_read_bytes 3,096,576 B lower and sync_fraction > 0;
# - 1 request: rank 1 has none and holds no one; rank 0 reads the experts of
#   its one token, 1.5 x 1,572,864 = 2,359,296 B less a step than on its own
#   (32 steps), and its TPOT is about 1.18 us lower (1.1-1.2).
# Skips (77) without python3, h5py and numpy.
set -euo pipefail
ks=$1 sc=$2
source "$(dirname "$0")/../h5py_python.sh" lockstep # sets $py
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
run() { # NAME RANKS REQUESTS
    "$ks" run "$sc" --set platform.gpus_per_node=2 --set parallel.tp=2 --set parallel.dp_attention=2 \
        --set parallel.ep=2 --set platform.nvlink_bw=450GBps --set prefill.mode=disaggregated --set prefill.gpus=8 \
        --set workload.output_tokens=33 \
        --set "parallel.ranks=$2" --set "workload.arrival.concurrency=$3" --set "workload.requests=$3" \
        -o "$dir/$1.h5" --json > "$dir/$1.json"
}
for n in 1 3 4; do
    run "own$n" independent $n
    run "lock$n" lockstep $n
done
"$py" - "$dir" <<'PY'
import json, sys
import h5py
d = sys.argv[1]
def load(name):
    s = json.load(open(f"{d}/{name}.json"))
    q = h5py.File(f"{d}/{name}.h5", "r")["requests"][:]
    return s, {int(r["id"]): (int(r["gpu"]), float(r["tpot"])) for r in q}
fail = []
s, own = load("own3")
t0 = [t for g, t in own.values() if g == 0]
t1 = [t for g, t in own.values() if g == 1]
if len(t0) != 2 or len(t1) != 1 or not t1[0] < 0.9 * t0[0] or s["sync_fraction"] != 0:
    fail.append(f"on their own, 3 requests: rank 0's TPOT {t0}, rank 1's {t1} (rank 1's should be lower), "
                f"sync_fraction {s['sync_fraction']}")
s, lock = load("lock3")
low = {i: t0[0] - t for i, (g, t) in lock.items()}
if len(lock) != 3 or max(low.values()) - min(low.values()) > 1e-5 * t0[0] or not \
        all(0.6e-6 < x < 0.7e-6 for x in low.values()) or not s["sync_fraction"] > 0:
    fail.append(f"in lockstep, 3 requests: TPOTs {lock} against rank 0's {t0[0]:.9g} on its own (0.6-0.7 us "
                f"lower expected), sync_fraction {s['sync_fraction']}")
a, b = (json.load(open(f"{d}/{x}4.json")) for x in ("own", "lock"))
moved = {"wall_s", "result", "weight_read_bytes", "sync_fraction", "stall_fraction", "comm_fraction"}
diff = [k for k in a if k not in moved and a[k] != b[k]]
if diff or a["weight_read_bytes"] - b["weight_read_bytes"] != 3096576 or not b["sync_fraction"] > 0:
    fail.append(f"4 requests: lockstep differs from ranks on their own in {diff}; weight_read_bytes "
                f"{a['weight_read_bytes']} against {b['weight_read_bytes']} (3,096,576 B less expected), "
                f"sync_fraction {b['sync_fraction']}")
a, b = (json.load(open(f"{d}/{x}1.json")) for x in ("own", "lock"))
gain = a["tpot_mean"] - b["tpot_mean"]
if a["weight_read_bytes"] - b["weight_read_bytes"] != 32 * 2359296 or not 1.1e-6 < gain < 1.2e-6 or \
        b["sync_fraction"] != 0:
    fail.append(f"1 request: weight_read_bytes {a['weight_read_bytes']} against {b['weight_read_bytes']} "
                f"(32 x 2,359,296 B less expected), TPOT {gain * 1e6:.4f} us lower (1.1-1.2 expected), "
                f"sync_fraction {b['sync_fraction']}")
if fail:
    sys.exit("lockstep: " + "; ".join(fail))
print(f"lockstep: rank 0's TPOT {t0[0] * 1e6:.4f} us, rank 1's {t1[0] * 1e6:.4f} us on their own; in lockstep "
      f"every request's {min(low.values()) * 1e6:.4f}-{max(low.values()) * 1e6:.4f} us below rank 0's; 4 requests: "
      f"the same but weights and sync; 1 request: {gain * 1e6:.4f} us lower")
PY
