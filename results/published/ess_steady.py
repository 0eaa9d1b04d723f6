#!/usr/bin/python3
"""ess_steady.py RESULT.h5 PROMPT [STEPS]: steady decode of an ess.lua run, from
its /steps and /tiers records. Per GPU (attention rank) the window is
steady.py's (after the last first token of the requests it admitted before its
first finish, up to that finish), its last STEPS + 1 records (default 20); the
tokens a step keeps vary with speculative decoding, so the throughput is the
cumulative `tokens` counter's growth over the window's time, summed over the
GPUs. Prints: tokens/s, mean batch per GPU, mean step time (s), the L1 hit
rate over the window (GPUs that report accesses), the share of the stall in
the step, and L1's capacity over the batch's whole latent cache at PROMPT
tokens (ESS's "sparse memory ratio": L1 pages / (batch x pages of one request))."""
import math
import sys

import h5py
import numpy as np

from steady import window

f = h5py.File(sys.argv[1], "r")
prompt = int(sys.argv[2])
last = int(sys.argv[3]) if len(sys.argv) > 3 else 20
s = f["steps"][:]
q = f["requests"][:]
t = f["tiers"][:]
layers = int(f["scenario"].attrs["model.layers"])
block = int(f["scenario"].attrs["cache.block_size"])
tok, batch, step, hit, miss, stall, busy, share = 0.0, [], [], 0.0, 0.0, 0.0, 0.0, []
for g in np.unique(s["gpu"]):
    r = window(sys.argv[1], s, q, g, last + 1)
    tok += float(r["tokens"][-1] - r["tokens"][0]) / float(r["t"][-1] - r["t"][0])
    batch.append(float(np.mean(r["batch"][1:])))
    step.append(float(np.mean(r["step_time"][1:])))
    found = [float(r[k][-1] - r[k][0]) for k in ("found_l1", "found_l2", "found_l3")]
    hit += found[0]
    miss += found[1] + found[2]
    stall += float(np.sum(r["stall"][1:]))
    busy += float(np.sum(r["step_time"][1:]))
    l1 = t[(t["gpu"] == g) & (t["tier"] == 0)]
    if len(l1):
        share.append(float(l1["capacity"][0]) / (np.mean(r["batch"][1:]) * math.ceil(prompt / block) * layers))
print(f"{tok:.6g} {np.mean(batch):.4g} {np.mean(step):.6g} {hit / (hit + miss) if hit + miss else 0:.4g} "
      f"{stall / busy:.4g} {np.mean(share):.4g}")
