#!/usr/bin/python3
"""window.py RESULT.h5 FROM: a run's output throughput from FROM seconds to
its end, from its /steps records: per GPU (attention rank), the tokens it
produced between its first record at or after FROM and its last, over the time
between them, summed over the GPUs. Unlike steady.py's decode steps, the
window counts everything a GPU did in it: prefills of new requests, retracted
requests' recomputation, steps with fewer requests. Prints tokens/s, the mean
batch per GPU and the mean requests waiting per GPU over the window's records."""
import sys

import h5py
import numpy as np

f = h5py.File(sys.argv[1], "r")
start = float(sys.argv[2])
s = f["steps"][:]
tok, batch, wait = 0.0, [], []
for g in np.unique(s["gpu"]):
    r = s[(s["gpu"] == g) & (s["t"] >= start)]
    if len(r) < 2:
        sys.exit(f"window.py: GPU {g} has fewer than two records from {start} s")
    tok += float(r["tokens"][-1] - r["tokens"][0]) / float(r["t"][-1] - r["t"][0])
    batch.append(float(np.mean(r["batch"])))
    wait.append(float(np.mean(r["pending"])))
print(f"{tok:.6g} {np.mean(batch):.4g} {np.mean(wait):.4g}")
