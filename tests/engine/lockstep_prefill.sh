#!/usr/bin/env bash
# lockstep_prefill.sh KVSTRATA SCENARIO: an iteration of prefill alone pairs
# its layers with a decode step's in lockstep (parallel.ranks). The lockstep.sh
# setup (closed_form_moe.lua, 2 GPUs, tp 2, 2 attention ranks, ep 2) with 8
# layers (7 MoE), prompts prefilled on the decode GPUs and two requests from
# a trace: request 0 (16 tokens) at 0 s on rank 0, which decodes it at S a
# step; request 1 (4000 tokens, 2 out) at 10 ms on rank 1, whose prefill takes
# P1 (the run's prefill seconds less request 0's, taken from a run of request
# 0 alone). Rank 1 joins at rank 0's next iteration; its prefill runs its 8
# layers at P1 / 8 each and meets rank 0 at each MoE layer after its compute,
# rank 0's decode layers (about S / 8 each) wait for them, and rank 0's step
# ends just after the prefill's last layer, with its last collective: request
# 0's longest gap between tokens is P1 plus a few nanoseconds (within 1% of S
# above P1; before the prefill met the group layer by layer, rank 0 waited
# at its first MoE layer for the whole prefill and then ran its other six
# layers: P1 + 0.76 S). On their own rank 0 never waits: the gap stays S (at
# most 1.1 S). Request 1's second token is not held back either way: its TPOT
# is the same in lockstep as on its own (to 1e-4).
# Skips (77) without python3, h5py and numpy.
set -euo pipefail
ks=$1 sc=$2
source "$(dirname "$0")/../h5py_python.sh" lockstep_prefill # sets $py
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
printf 'arrived_at,num_prefill_tokens,num_decode_tokens\n0.0,16,200\n0.01,4000,2\n' > "$dir/two.csv"
printf 'arrived_at,num_prefill_tokens,num_decode_tokens\n0.0,16,200\n' > "$dir/one.csv"
run() { # NAME RANKS REQUESTS
    printf 'local s = include "%s"\ns.workload = {arrival = {kind = "trace", file = "%s"}, requests = %d}\nreturn s\n' \
        "$sc" "$dir/$([ "$3" = 2 ] && echo two || echo one).csv" "$3" > "$dir/$1.lua"
    "$ks" run "$dir/$1.lua" --set platform.gpus_per_node=2 --set parallel.tp=2 --set parallel.dp_attention=2 \
        --set parallel.ep=2 --set platform.nvlink_bw=450GBps --set model.layers=8 --set "parallel.ranks=$2" \
        -o "$dir/$1.h5" --json > "$dir/$1.json"
}
run alone lockstep 1
run own independent 2
run lock lockstep 2
"$py" - "$dir" <<'PY'
import json, sys
import h5py
d = sys.argv[1]
def load(name):
    s = json.load(open(f"{d}/{name}.json"))
    q = h5py.File(f"{d}/{name}.h5", "r")["requests"][:]
    return s, {int(r["id"]): r for r in q}
fail = []
p0 = load("alone")[0]["prefill_seconds"]
s, own = load("own")
S = float(own[0]["tpot"])
p1 = s["prefill_seconds"] - p0
if [int(own[i]["gpu"]) for i in (0, 1)] != [0, 1] or not float(own[0]["itl_max"]) <= 1.1 * S or not p1 > 5 * S:
    fail.append(f"on their own: gpus {[int(own[i]['gpu']) for i in (0, 1)]}, request 0's longest gap "
                f"{float(own[0]['itl_max']):.9g} s against its TPOT {S:.9g} s; P1 {p1:.9g} s")
s, lock = load("lock")
gap = float(lock[0]["itl_max"]) - p1
if not 0 <= gap <= 0.01 * S:
    fail.append(f"in lockstep: request 0's longest gap is P1 {p1:.9g} s + {gap:.9g} s (expected within 1% of "
                f"its step {S:.9g} s above P1)")
t1, o1 = float(lock[1]["tpot"]), float(own[1]["tpot"])
if abs(t1 - o1) > 1e-4 * o1:
    fail.append(f"request 1's TPOT {t1:.9g} s in lockstep against {o1:.9g} s on its own")
if fail:
    sys.exit("lockstep_prefill: " + "; ".join(fail))
print(f"lockstep_prefill: P1 {p1 * 1e6:.3f} us, rank 0's step {S * 1e6:.3f} us; in lockstep request 0's longest "
      f"gap is P1 + {gap * 1e9:.1f} ns; request 1's TPOT {t1 * 1e6:.4f} us (on its own {o1 * 1e6:.4f})")
PY
