#!/usr/bin/env python3
"""One table from the Nsight Compute CSVs of `scripts/gpu-run.sh ncu` (`--csv --page raw`).

For every NAME-WHO.csv (WHO: tuned, cusparse, dasp, matxtract) the launches are grouped by kernel name;
each group prints its launch count and the median of: duration, achieved DRAM bandwidth (bytes
read + written over the duration) and its share of peak, L2 hit rate, achieved occupancy,
registers, grid and block, and the three largest stall reasons (cycles per issued instruction).
usage: ncu-summary.py DIR
"""
import csv
import glob
import os
import re
import statistics
import sys

SCALE = {"nsecond": 1e-3, "usecond": 1.0, "msecond": 1e3, "second": 1e6,
         "ns": 1e-3, "us": 1.0, "ms": 1e3, "s": 1e6}


def rows(path):
    with open(path, newline="") as f:
        lines = [l for l in f if l.startswith('"')]  # ncu's own log lines are not CSV
    if len(lines) < 3:
        return [], {}
    r = list(csv.reader(lines))
    head, units = r[0], r[1]
    return [dict(zip(head, x)) for x in r[2:]], dict(zip(head, units))


def num(row, units, key):
    v = row.get(key, "").replace(",", "")
    try:
        return float(v) * SCALE.get(units.get(key, ""), 1.0)
    except ValueError:
        return None


def med(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def fmt(x, spec):
    return "—" if x is None else format(x, spec)


def summarize(path):
    data, units = rows(path)
    stall_keys = {}
    for k in (data[0].keys() if data else []):
        m = re.match(r"smsp__average_warps_issue_stalled_(\w+?)_per_issue_active\.ratio$", k)
        if m and m.group(1) not in ("not_selected", "selected"):
            stall_keys[m.group(1)] = k
    groups = {}
    for r in data:
        groups.setdefault(r.get("Kernel Name", "?"), []).append(r)
    out = []
    for name, rs in groups.items():
        us = med([num(r, units, "gpu__time_duration.sum") for r in rs])
        bps = med([num(r, units, "dram__bytes.sum.per_second") for r in rs])
        gbs = bps / 1e9 if bps is not None else None
        # L2 sectors moved, as a share of the peak rate times the duration: comparable between
        # kernels of one matrix (how much L2 traffic each needs for the same product).
        sect = med([num(r, units, "lts__t_sectors.avg.pct_of_peak_sustained_elapsed") for r in rs])
        stalls = sorted(((med([num(r, units, k) for r in rs]) or 0, s)
                        for s, k in stall_keys.items()), reverse=True)[:3]
        out.append({
            "kernel": re.sub(r"\(.*", "", name)[:48], "launches": len(rs), "us": us, "gbs": gbs,
            "dram_pct": med([num(r, units, "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed")
                             for r in rs]),
            "l2_pct": med([num(r, units, "lts__throughput.avg.pct_of_peak_sustained_elapsed")
                           for r in rs]),
            "l2_work": sect * us / 100 if sect is not None and us else None,
            "l2_hit": med([num(r, units, "lts__t_sector_hit_rate.pct") for r in rs]),
            "occ": med([num(r, units, "sm__warps_active.avg.pct_of_peak_sustained_active")
                        for r in rs]),
            "regs": med([num(r, units, "launch__registers_per_thread") for r in rs]),
            "grid": med([num(r, units, "launch__grid_size") for r in rs]),
            "block": med([num(r, units, "launch__block_size") for r in rs]),
            "stalls": ", ".join(f"{s} {v:.1f}" for v, s in stalls if v > 0),
        })
    return out


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    print("| matrix | who | kernel | launches | µs | DRAM GB/s | DRAM % peak | L2 % peak | "
          "L2 sectors (µs at peak) | L2 hit % | occupancy % | regs | grid × block | "
          "top stalls (cycles/issue) |")
    print("|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---|")
    for path in sorted(glob.glob(os.path.join(sys.argv[1], "*.csv"))):
        base = os.path.basename(path)[:-4]
        matrix, _, who = base.rpartition("-")
        for k in summarize(path):
            grid = f"{k['grid']:.0f} × {k['block']:.0f}" if k["grid"] and k["block"] else "—"
            print(f"| {matrix} | {who} | `{k['kernel']}` | {k['launches']} | {fmt(k['us'], '.1f')} | "
                  f"{fmt(k['gbs'], ',.0f')} | {fmt(k['dram_pct'], '.0f')} | {fmt(k['l2_pct'], '.0f')} | "
                  f"{fmt(k['l2_work'], '.1f')} | {fmt(k['l2_hit'], '.0f')} | "
                  f"{fmt(k['occ'], '.0f')} | {fmt(k['regs'], '.0f')} | {grid} | {k['stalls']} |")


if __name__ == "__main__":
    main()
