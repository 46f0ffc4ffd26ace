#!/usr/bin/env python3
"""Tables of generated kernels on a GPU, from the JSON that scripts/gpu-run.sh writes.

  gpu-exec-table.py formats DIR   DIR/<matrix>-cusparse.json (sparsetune --json bench) and
                                  DIR/<matrix>-<graph>.json (sparsetune --json run)
  gpu-exec-table.py tune DIR      DIR/<matrix>.json (sparsetune --json tune)
"""
import glob
import json
import math
import os
import sys


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def warm_ms(r):
    """The warm median of a result in ms (its "warm" object is in us), or None."""
    w = r.get("warm")
    return w["median_us"] * 1e-3 if w else None


def cell_us(t_ms):
    us = t_ms * 1e3
    return f"{us:,.1f}" if us < 1000 else f"{us:,.0f}"


def formats(d):
    out = []
    for cus_path in sorted(glob.glob(os.path.join(d, "*-cusparse.json"))):
        m = os.path.basename(cus_path)[: -len("-cusparse.json")]
        cus = load(cus_path)
        best_name, best_t, csr1, best_w = None, None, None, None
        if cus:
            for r in cus["results"]:
                if r.get("status") == "ok" and r.get("verified"):
                    t = r["time_ms"]["median"]
                    if best_t is None or t < best_t:
                        best_name, best_t = r["name"], t
                    if r["name"] == "csr-alg1":
                        csr1 = t
                    w = warm_ms(r)
                    if w and (best_w is None or w < best_w):
                        best_w = w
        out.append(f"\n{m}: {cus['rows']:,} x {cus['cols']:,}, {cus['nnz']:,} non-zeros"
                   if cus else f"\n{m}: (no cuSPARSE result)")
        if csr1:
            out.append(f"cuSPARSE CSR ALG1 {cell_us(csr1)} us; best cuSPARSE {best_name} "
                       f"{cell_us(best_t)} us (L2 flushed)"
                       + (f"; best warm {cell_us(best_w)} us" if best_w else ""))
        out.append("")
        out.append("| graph | flushed us | warm us | GFLOP/s | GB/s | of bw | vs CSR ALG1 | "
                   "vs best cuSPARSE | warm vs best cuSPARSE | rel. error | verified |")
        out.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|")
        rows = []
        for p in sorted(glob.glob(os.path.join(d, m + "-*.json"))):
            g = os.path.basename(p)[len(m) + 1: -len(".json")]
            if g == "cusparse":
                continue
            r = load(p)
            if not r or r.get("status") != "ok":
                err = ""
                ep = p[:-5] + ".err"
                if os.path.exists(ep):
                    with open(ep) as f:
                        lines = [l.strip() for l in f if l.strip()]
                    err = lines[-1][:90] if lines else ""
                rows.append((math.inf, f"| {g} | — | | | | | | | | | failed: {err} |"))
                continue
            t = r["time_ms"]["median"]
            w = warm_ms(r)
            wcell = cell_us(w) if w else "–"
            wvs = f"{best_w / w:.2f}x" if w and best_w else "–"
            rows.append((t, f"| {g} | {cell_us(t)} | {wcell} | {r['gflops']:,.1f} | {r['gbs']:,.0f} | "
                         f"{100 * r['bandwidth_fraction']:.0f}% | "
                         f"{csr1 / t:.2f}x | {best_t / t:.2f}x | {wvs} | "
                         f"{r['error']:.1e} | {'yes' if r['verified'] else 'NO'} |"
                         if csr1 and best_t and r.get("error") is not None else
                         f"| {g} | {cell_us(t)} | {wcell} | {r['gflops']:,.1f} | {r['gbs']:,.0f} | | | | | | "
                         f"{'yes' if r['verified'] else 'NO'} |"))
        out += [line for _, line in sorted(rows, key=lambda x: x[0])]
    print("\n".join(out))


def failures(s):
    """The search's failure count: a number, or an object with a total."""
    f = s.get("failures", 0)
    return f.get("total", 0) if isinstance(f, dict) else f


def tune(d):
    print("Flushed times (each run alone after an L2 flush) rank the search; warm times are "
          "batches of back-to-back runs.\n")
    print("| matrix | nnz | tuned us | warm us | GB/s | of bw | best cuSPARSE | its us | speedup | "
          "warm speedup | candidates | failed | search s | total s | graph |")
    print("|---|---:|---:|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---|")
    speedups, big, warm_speedups = [], [], []
    for p in sorted(glob.glob(os.path.join(d, "*.json"))):
        m = os.path.basename(p)[:-5]
        j = load(p)
        if not j or "matrix" not in j:
            print(f"| {m} | | | | | | | | | | | | | | failed (see the log) |")
            continue
        best, best_t = "-", None
        for r in j.get("cusparse") or []:
            if isinstance(r, dict) and r.get("verified"):
                t = r["time_ms"]["median"]
                if best_t is None or t < best_t:
                    best, best_t = r["name"], t
        s = j["search"]
        sp = j.get("speedup_vs_best_cusparse")
        wsp = j.get("speedup_vs_best_cusparse_warm")
        if wsp:
            warm_speedups.append(wsp)
        wcell = f"{j['warm']['median_us']:,.1f}" if j.get("warm") else "–"
        wspcell = f"{wsp:.2f}x" if wsp else "–"
        if sp:
            speedups.append(sp)
            if j["matrix"]["nnz"] >= 1_000_000:
                big.append(sp)
        wall = None
        if os.path.exists(p[:-5] + ".wall"):
            with open(p[:-5] + ".wall") as f:
                wall = f.read().strip()
        bw = j.get("bandwidth_fraction")
        print(f"| {m} | {j['matrix']['nnz']:,} | {j['time_us']:,.1f} | {wcell} | {j['gbs']:,.0f} | "
              f"{100 * bw:.0f}% | {best} | {best_t * 1e3 if best_t else 0:,.1f} | "
              f"{sp:.2f}x | {wspcell} | {s.get('candidates', 0)} | {failures(s)} | "
              f"{s.get('seconds', 0):.1f} | {wall if wall else ''} | {j['graph_line'][:70]} |"
              if sp and bw is not None else
              f"| {m} | {j['matrix']['nnz']:,} | {j['time_us']:,.1f} | {wcell} | | | {best} | | | | "
              f"{s.get('candidates', 0)} | | | | measured={j['measured']} |")
    if speedups:
        gm = math.exp(sum(math.log(x) for x in speedups) / len(speedups))
        print(f"\ngeometric-mean speedup over the best cuSPARSE algorithm: {gm:.2f}x "
              f"({len(speedups)} matrices), min {min(speedups):.2f}x")
    if warm_speedups:
        gw = math.exp(sum(math.log(x) for x in warm_speedups) / len(warm_speedups))
        print(f"from warm times: {gw:.2f}x ({len(warm_speedups)} matrices), "
              f"min {min(warm_speedups):.2f}x")
    if big:
        gb = math.exp(sum(math.log(x) for x in big) / len(big))
        print(f"on matrices with >= 1M entries: {gb:.2f}x ({len(big)} matrices)")


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] not in ("formats", "tune"):
        print(__doc__)
        sys.exit(2)
    (formats if sys.argv[1] == "formats" else tune)(sys.argv[2])
