#!/usr/bin/python3
"""steady.py RESULT.h5 [STEPS]: a run's steady decode throughput, from its /steps
records: per GPU (attention rank), the mean over its last STEPS records (default
8) of batch / step_time (each decoding request makes one token a step), summed
over the GPUs. Prints tokens/s, the mean batch per GPU and the mean step time.
A run's output_throughput counts its ramp (prefill of the first batch); this
counts the steps once the batch is full."""
import sys

import h5py
import numpy as np

f = h5py.File(sys.argv[1], "r")
last = int(sys.argv[2]) if len(sys.argv) > 2 else 8
s = f["steps"][:]
tok, batch, step = 0.0, [], []
for g in np.unique(s["gpu"]):
    r = s[(s["gpu"] == g) & (s["step_time"] > 0)][-last:]
    tok += float(np.mean(r["batch"] / r["step_time"]))
    batch.append(float(np.mean(r["batch"])))
    step.append(float(np.mean(r["step_time"])))
print(f"{tok:.6g} {np.mean(batch):.4g} {np.mean(step):.6g}")
