#!/usr/bin/env python3
"""Plots nvidia-smi samples of a batch (gpu-run.sh batch's gpu-samples.csv: timestamp, index,
utilization.gpu, memory.used) as one row per GPU: utilisation and memory in use over time, so a
reader sees whether every GPU had a worker.
  scripts/gpu-samples-plot.py SAMPLES.csv OUT.png"""
import csv
import sys
from datetime import datetime

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    rows = {}
    with open(sys.argv[1], newline="") as f:
        for line, r in enumerate(csv.reader(f, skipinitialspace=True), 1):
            if len(r) != 4:
                sys.exit(f"{sys.argv[1]}:{line}: expected 4 fields, found {len(r)}")
            try:
                t = datetime.strptime(r[0], "%Y/%m/%d %H:%M:%S.%f")
                util = float(r[2].rstrip(" %"))
                mem = float(r[3].split()[0])
            except (ValueError, IndexError) as e:
                sys.exit(f"{sys.argv[1]}:{line}: not an nvidia-smi sample ({e})")
            rows.setdefault(int(r[1]), []).append((t, util, mem))
    if not rows:
        sys.exit(f"{sys.argv[1]}: no samples")
    t0 = min(s[0][0] for s in rows.values())
    fig, axes = plt.subplots(len(rows), 1, figsize=(10, 2.2 * len(rows)), sharex=True, squeeze=False)
    for ax, (gpu, s) in zip(axes[:, 0], sorted(rows.items())):
        x = [(t - t0).total_seconds() for t, _, _ in s]
        busy = sum(1 for _, u, _ in s if u > 0)
        ax.fill_between(x, [u for _, u, _ in s], step="post", color="tab:blue", alpha=0.6)
        ax.set_ylabel("util. %", color="tab:blue")
        ax.set_ylim(0, 100)
        mem_ax = ax.twinx()
        mem_ax.plot(x, [m / 1024 for _, _, m in s], color="tab:orange", lw=1)
        mem_ax.set_ylabel("GiB used", color="tab:orange")
        ax.set_title(f"GPU {gpu}: {busy} of {len(s)} samples with non-zero utilisation", fontsize=9)
    axes[-1, 0].set_xlabel("seconds since the first sample")
    fig.tight_layout()
    fig.savefig(sys.argv[2], dpi=110)


if __name__ == "__main__":
    main()
