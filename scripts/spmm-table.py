#!/usr/bin/env python3
"""The SpMM table of `scripts/gpu-run.sh spmm`: per matrix and N, the best verified cuSPARSE
algorithm (flushed and warm µs, fraction of measured bandwidth), GE-SpMM's best algorithm (warm:
its program times 100 back-to-back runs) and, where `tune --op spmm` ran, the tuned kernel and
its speed-ups. usage: scripts/spmm-table.py JSON_DIR"""
import glob
import json
import math
import os
import re
import sys


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def cusparse_best(report, n):
    best = None
    for r in (report or {}).get("results", []):
        if r.get("n") != n or r.get("status") != "ok" or not r.get("verified"):
            continue
        flushed = r["time_ms"]["median"] * 1e3
        warm = (r.get("warm") or {}).get("median_us") or flushed
        if best is None or warm < best[1]:
            best = (flushed, warm, r["name"], r.get("bandwidth_fraction") or 0.0)
    return best


def ge_best(path):
    try:
        text = open(path).read()
    except OSError:
        return None
    times = [float(t) for t in re.findall(r"\[GE-SpMM\]\[Alg: \d+\][^\n]*\n\s*Time ([\d.]+) \(ms\)", text)]
    return min(times) * 1e3 if times else None


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    d = sys.argv[1]
    names = sorted({os.path.basename(p)[: -len("-cusparse.json")] for p in glob.glob(f"{d}/*-cusparse.json")})
    print("| matrix | N | cuSPARSE best (alg) | flushed µs | warm µs | % bw | GE-SpMM warm µs | tuned flushed µs | tuned warm µs | tuned / cuSPARSE (warm) | tuned / GE-SpMM |")
    print("|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    logs = {"cus": [], "ge": []}
    for name in names:
        rep = load(f"{d}/{name}-cusparse.json")
        ns = sorted({r.get("n") for r in (rep or {}).get("results", []) if r.get("n")})
        for n in ns:
            c = cusparse_best(rep, n)
            g = ge_best(f"{d}/{name}-ge-{n}.txt")
            t = load(f"{d}/{name}-tune-{n}.json")
            tf = t.get("time_us") if t else None
            tw = ((t or {}).get("warm") or {}).get("median_us") if t else None
            sc = c[1] / tw if c and tw else None
            sg = g / tw if g and tw else None
            if sc: logs["cus"].append(math.log(sc))
            if sg: logs["ge"].append(math.log(sg))
            f = lambda v, k=2: f"{v:.{k}f}" if v else "—"
            print(f"| {name} | {n} | {c[2] if c else '—'} | {f(c and c[0])} | {f(c and c[1])} | "
                  f"{f(c and 100 * c[3], 0)} | {f(g)} | {f(tf)} | {f(tw)} | {f(sc)} | {f(sg)} |")
    for k, label in (("cus", "best cuSPARSE"), ("ge", "GE-SpMM")):
        if logs[k]:
            print(f"\ntuned over {label}, warm: geometric mean {math.exp(sum(logs[k]) / len(logs[k])):.3f}x "
                  f"over {len(logs[k])} (matrix, N)")


if __name__ == "__main__":
    main()
