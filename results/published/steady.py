#!/usr/bin/python3
"""steady.py RESULT.h5 [STEPS]: a run's steady decode throughput, from its /steps
records: per GPU (attention rank), the mean over its last STEPS records (default
8) of batch / step_time (each decoding request makes one token a step), summed
over the GPUs. Prints tokens/s, the mean batch per GPU and the mean step time.
A run's output_throughput counts its ramp (prefill of the first batch); this
counts the steps once the batch is full: per GPU, the records after the last
first token of the requests it admitted before its first finish (every
prompt of the batch prefilled) and up to that finish (after it, the next
prompt's prefill shares the iterations). Fails when a GPU has fewer than
STEPS such records: the run was too short, or its first request finished
before the last of the batch was prefilled."""
import sys

import h5py
import numpy as np


def window(path, s, q, g, last):
    """GPU g's steady /steps records: those after the last first token of the
    requests it admitted before its first finish, up to that finish; the last
    `last` of them (fails when fewer)."""
    mine = q[q["gpu"] == g]
    done = mine["finish"][mine["finish"] >= 0]
    end = float(np.min(done)) if len(done) else np.inf
    started = mine["first_token"][(mine["first_token"] >= 0) & (mine["first_token"] < end)]
    begin = float(np.max(started)) if len(started) else np.inf
    r = s[(s["gpu"] == g) & (s["step_time"] > 0) & (s["t"] > begin) & (s["t"] <= end)][-last:]
    if len(r) < last:
        sys.exit(f"{sys.argv[0]}: {path}: GPU {g} has {len(r)} steady steps (between its batch's last first "
                 f"token at {begin:.3f} s and its first finish at {end:.3f} s), fewer than {last}")
    return r


if __name__ == "__main__":
    f = h5py.File(sys.argv[1], "r")
    last = int(sys.argv[2]) if len(sys.argv) > 2 else 8
    s = f["steps"][:]
    q = f["requests"][:]
    tok, batch, step = 0.0, [], []
    for g in np.unique(s["gpu"]):
        r = window(sys.argv[1], s, q, g, last)
        tok += float(np.mean(r["batch"] / r["step_time"]))
        batch.append(float(np.mean(r["batch"])))
        step.append(float(np.mean(r["step_time"])))
    print(f"{tok:.6g} {np.mean(batch):.4g} {np.mean(step):.6g}")
