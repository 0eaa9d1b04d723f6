#!/usr/bin/env python3
# results/published/window_hits.py RESULT.h5 - a run's L1 hit rate, mean stall
# per /steps record, batch per rank and output tokens/s over fixed windows of
# simulated time (per GPU: the difference of the cumulative found_l1/found_l2
# and tokens between its first and last record in the window, summed). Used
# for admission.md's HiSparse 4K run, whose requests start together and whose
# contexts grow past the device buffer over their lives.
import h5py, numpy as np, sys
f = h5py.File(sys.argv[1], 'r')
s = f['/steps'][:]
t, g = s['t'], s['gpu']
def window(a, b):
    hit = tot = 0; st = 0.0; n = 0; tok = 0; bsum = 0
    for gpu in np.unique(g):
        m = (g == gpu) & (t >= a) & (t <= b)
        if m.sum() < 2: continue
        x = s[m]
        f1 = x['found_l1'][-1] - x['found_l1'][0]
        f2 = x['found_l2'][-1] - x['found_l2'][0]
        hit += f1; tot += f1 + f2
        st += x['stall'].sum(); n += len(x); bsum += x['batch'].sum()
        tok += x['tokens'][-1] - x['tokens'][0]
    return hit / tot if tot else float('nan'), st / n if n else 0, bsum / n if n else 0, tok / (b - a)
for a, b in [(60, 120), (120, 180), (180, 240), (240, 300), (300, 400), (400, 500), (500, 560), (300, 560)]:  # admission.md's run
    h, stall, batch, tps = window(a, b)
    print(f"{a:4d}-{b:4d} s: L1 hit rate {h:.4f}, mean stall per step record {stall*1e3:.2f} ms, batch/rank {batch:.1f}, {tps:.0f} tok/s")
