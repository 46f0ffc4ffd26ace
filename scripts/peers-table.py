#!/usr/bin/env python3
"""fp64 SpMV against the peers, from what `scripts/gpu-run.sh peers` writes into DIR:
DIR/<m>-tune.json (sparsetune --json tune: the tuned kernel and cuSPARSE's algorithms, flushed and
warm), DIR/<m>-dasp.txt (DASP spmv_double: "SpMV_X: <ms> ms", a mean of back-to-back runs) and
DIR/<m>-matx-<setting>.txt (MatXtract: "MatXtract time = <ms> ms" per (tau_c, tau_r) setting).

  peers-table.py DIR
"""
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


def grab_ms(path, pattern):
    """The smallest time in ms a peer printed, or None."""
    try:
        with open(path, errors="replace") as f:
            text = f.read()
    except OSError:
        return None
    vals = [float(v) for v in re.findall(pattern, text)]
    return min(vals) if vals else None


def us(ms):
    return f"{ms * 1e3:,.1f}" if ms is not None else "–"


def gmean(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else None


def main(d):
    print("Warm = back-to-back runs (DASP and MatXtract time only this way); flushed = each run "
          "alone after an L2 flush. Speedups are tuned warm over the peer's warm time.\n")
    print("| matrix | nnz | tuned flushed us | tuned warm us | cuSPARSE best flushed us | "
          "cuSPARSE best warm us | DASP us | MatXtract best us (setting) | vs best of cuSPARSE/DASP "
          "(warm) | vs best peer (warm) | graph |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|")
    vs_cd, vs_all, vs_cus_w, vs_cus_f = [], [], [], []
    for p in sorted(glob.glob(os.path.join(d, "*-tune.json"))):
        m = os.path.basename(p)[: -len("-tune.json")]
        j = load(p)
        dasp = grab_ms(os.path.join(d, m + "-dasp.txt"), r"SpMV_X:\s*([0-9.eE+-]+)\s*ms")
        matx, matx_set = None, ""
        for q in sorted(glob.glob(os.path.join(d, m + "-matx-*.txt"))):
            t = grab_ms(q, r"MatXtract time\s*=\s*([0-9.eE+-]+)\s*ms")
            if t is not None and (matx is None or t < matx):
                matx, matx_set = t, os.path.basename(q)[len(m) + 6: -4]
        if not j or "matrix" not in j:
            print(f"| {m} | | tune failed | | | | {us(dasp)} | {us(matx)} | | | |")
            continue
        cf, cw = None, None
        for r in j.get("cusparse") or []:
            if isinstance(r, dict) and r.get("verified"):
                t = r["time_ms"]["median"]
                cf = t if cf is None else min(cf, t)
                w = r.get("warm")
                if w:
                    cw = w["median_us"] * 1e-3 if cw is None else min(cw, w["median_us"] * 1e-3)
        tf = j["time_us"] * 1e-3
        tw = j["warm"]["median_us"] * 1e-3 if j.get("warm") else None
        best_cd = min([t for t in (cw, dasp) if t is not None], default=None)
        best_all = min([t for t in (cw, dasp, matx) if t is not None], default=None)
        r_cd = best_cd / tw if tw and best_cd else None
        r_all = best_all / tw if tw and best_all else None
        if r_cd:
            vs_cd.append(r_cd)
        if r_all:
            vs_all.append(r_all)
        if tw and cw:
            vs_cus_w.append(cw / tw)
        if cf:
            vs_cus_f.append(cf / tf)
        print(f"| {m} | {j['matrix']['nnz']:,} | {us(tf)} | {us(tw)} | {us(cf)} | {us(cw)} | "
              f"{us(dasp)} | {us(matx)}{f' ({matx_set})' if matx else ''} | "
              f"{f'{r_cd:.2f}x' if r_cd else '–'} | {f'{r_all:.2f}x' if r_all else '–'} | "
              f"{j.get('graph_line', '')[:60]} |")
    for label, xs in (("tuned vs best of cuSPARSE and DASP, warm", vs_cd),
                      ("tuned vs best of cuSPARSE, DASP and MatXtract, warm", vs_all),
                      ("tuned vs best cuSPARSE, warm", vs_cus_w),
                      ("tuned vs best cuSPARSE, flushed", vs_cus_f)):
        if xs:
            print(f"\n{label}: geometric mean {gmean(xs):.2f}x, min {min(xs):.2f}x "
                  f"({len(xs)} matrices)")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        print(__doc__)
        sys.exit(2)
    main(sys.argv[1])
