#!/usr/bin/env python3
"""Markdown tables from the JSON of `sparsetune --json bench` (one file per matrix and op)."""
import json
import pathlib
import sys


def warm_us(r):
    w = r.get("warm")
    return f"{w['median_us']:.2f}" if w else "–"


def main(folder):
    files = sorted(pathlib.Path(folder).glob("*.json"))
    bandwidth = None
    rows = []
    for f in files:
        try:
            rep = json.loads(f.read_text())
        except ValueError:
            print(f"| {f.name}: no result |")
            continue
        bandwidth = rep["device"]["bandwidth_gbs"]
        device = rep["device"]["name"]
        name = f.stem.rsplit("-", 1)[0]
        for r in rep["results"]:
            if r["status"] != "ok":
                rows.append(f"| {name} | {rep['nnz']} | {rep['op']} | {r['name']} | {r['n'] if rep['op'] == 'spmm' else ''} "
                            f"| – | – | – | – | – | – | {r['status']}: {r['note'][:60]} |")
                continue
            t = r["time_ms"]
            rows.append(
                f"| {name} | {rep['nnz']} | {rep['op']} | {r['name']} | {r['n'] if rep['op'] == 'spmm' else ''} "
                f"| {1e3 * t['median']:.2f} ({1e3 * t['min']:.2f}–{1e3 * t['max']:.2f}) | {warm_us(r)} | {r['gflops']:.1f} | {r['gbs']:.0f} "
                f"| {100 * r['bandwidth_fraction']:.1f}% | {r['error']:.1e} | {'yes' if r['verified'] else 'NO'} {r['note']} |")
    if bandwidth is not None:
        print(f"Device: {device}; measured device-to-device bandwidth {bandwidth:.0f} GB/s\n")
    print("Flushed: each run timed alone after an L2 flush (GFLOP/s, GB/s and of bw are of its median). "
          "Warm: batches of back-to-back runs, no flush, median per run.\n")
    print("| matrix | nnz | op | baseline | N | flushed median us (min–max) | warm us | GFLOP/s | GB/s | of bw | rel. error | verified, note |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(r)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "gpu-results/bench")
