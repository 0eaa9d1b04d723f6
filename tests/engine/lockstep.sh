#!/usr/bin/env bash
# lockstep.sh KVSTRATA SCENARIO: the attention ranks of an expert group in
# lockstep (parallel.ranks), against ranks on their own. closed_form_moe.lua
# on one node of 2 GPUs joined by a 450 GB/s NVLink, tp 2 with 2 attention
# ranks and the experts over both (ep 2: one expert group of 2 ranks), every
# block resident, prompts from a
# prefill pool so that every request is admitted at the same instant:
# - 3 requests: the round robin gives rank 0 two and rank 1 one. On their
#   own, rank 1's steps (one token) are shorter than rank 0's (two): its
#   request's TPOT is lower. In lockstep rank 1 waits for rank 0 at the MoE
#   layer and at each iteration's start, rank 0 waits for no one: every
#   request's TPOT is rank 0's TPOT on its own (to 1e-5: rank 1's last
#   collective ends a few nanoseconds before rank 0's), and sync_fraction > 0;
# - 4 requests, two a rank: the ranks arrive together, no one waits: every
#   figure of the summary is the same as on their own (wall_s aside);
# - 1 request: rank 1 has none and holds no one: the same again.
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
off = {i: abs(t - t0[0]) / t0[0] for i, (g, t) in lock.items()}
if len(lock) != 3 or max(off.values()) > 1e-5 or not s["sync_fraction"] > 0:
    fail.append(f"in lockstep, 3 requests: TPOTs {lock} against rank 0's {t0[0]:.9g} on its own, "
                f"sync_fraction {s['sync_fraction']}")
for n in (1, 4):
    a, b = (json.load(open(f"{d}/{x}{n}.json")) for x in ("own", "lock"))
    diff = [k for k in a if k not in ("wall_s", "result") and a[k] != b[k]]
    if diff or b["sync_fraction"] != 0:
        fail.append(f"{n} request(s): lockstep differs from ranks on their own in {diff}")
if fail:
    sys.exit("lockstep: " + "; ".join(fail))
print(f"lockstep: rank 0's TPOT {t0[0] * 1e6:.4f} us, rank 1's {t1[0] * 1e6:.4f} us on their own; in lockstep "
      f"every request's within {max(off.values()):.2g} of rank 0's (sync_fraction {s['sync_fraction']:.4g}); "
      f"1 and 4 requests: the same summaries")
PY
