#!/usr/bin/env python3
"""The crux predictor measured on the GPU: for each held-out matrix of a crux training report,
the predicted crux and the crux search's best point, both emitted and run by sparsetune in one
command (flushed medians, verified), interleaved, twice; the better round of each.

usage: crux-eval.py SPARSETUNE REPORT DB MATRIX_DIRS OUT_DIR
  REPORT       the report of `sparsetune train --model crux` (its test.per_matrix rows)
  DB           the tuning database the crux searches were collected into (sqlite)
  MATRIX_DIRS  folders holding the matrices as <name>.mtx.gz or <name>.safetensors, ':'-separated
Writes OUT_DIR/crux-eval.json and prints a Markdown table.
"""
import json
import math
import os
import shlex
import sqlite3
import subprocess
import sys


def find_matrix(name, dirs):
    for d in dirs:
        for ext in (".mtx.gz", ".mtx", ".safetensors"):
            p = os.path.join(d, name + ext)
            if os.path.exists(p):
                return p
    return None


def crux_graph(db, name, tau_c, tau_r):
    """The measured crux graph of this matrix at (tau_c, tau_r): its cold branch and encoding."""
    rows = db.execute(
        "SELECT m.graph FROM measurements m JOIN matrices x ON m.fingerprint = x.fingerprint "
        "WHERE x.name = ? AND m.op = 'spmv' AND m.ok = 1", (name,)).fetchall()
    for (g,) in rows:
        if not g:
            continue
        j = json.loads(g)
        top = j["ops"][0]
        if top["op"] == "CRUX_SPLIT" and abs(top.get("tau_c", -1) - tau_c) < 1e-9 and \
                abs(top.get("tau_r", -1) - tau_r) < 1e-9:
            return j
    return None


def run(cmd, log):
    with open(log, "a") as f:
        f.write("$ " + " ".join(cmd) + "\n")
        r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=f, text=True, timeout=300)
        f.write(r.stdout[-4000:] + "\n")
    return r


def main():
    exe, report, db_path, dirs, out = sys.argv[1:6]
    exe = shlex.split(exe)  # the program, or a wrapper and its arguments
    dirs = dirs.split(":")
    os.makedirs(out, exist_ok=True)
    log = os.path.join(out, "crux-eval.log")
    rep = json.load(open(report))
    db = sqlite3.connect(db_path)
    results = []
    for row in rep["test"]["per_matrix"]:
        name = row["matrix"]
        m = find_matrix(name, dirs)
        best = row["bo_best"]
        g_best = crux_graph(db, name, best[0], best[1])
        if m is None or g_best is None:
            results.append({"matrix": name, "skipped": "matrix file or best graph not found"})
            continue
        pred = row["predicted"]
        g_pred = json.loads(json.dumps(g_best))
        g_pred["ops"][0]["tau_c"], g_pred["ops"][0]["tau_r"] = pred[0], pred[1]
        g_pred["name"] = "crux-predicted"
        r = {"matrix": name, "predicted": pred, "bo_best": best}
        dirs_of = {}
        for tag, g in (("predicted", g_pred), ("bo_best", g_best)):
            gp = os.path.join(out, f"{name}.{tag}.graph.json")
            json.dump(g, open(gp, "w"))
            d = os.path.join(out, "emit", f"{name}.{tag}")
            e = run(exe + ["emit-kernel", m, "--graph", gp, "--dtype", "f64", "-o", d], log)
            if e.returncode != 0:
                r[tag + "_error"] = "emit failed"
            dirs_of[tag] = d
        times = {"predicted": [], "bo_best": []}
        for _ in range(2):
            for tag in ("predicted", "bo_best"):
                if tag + "_error" in r:
                    continue
                p = run(exe + ["--json", "run", dirs_of[tag], "--matrix", m, "--runs", "30"], log)
                try:
                    j = json.loads(p.stdout)
                    if j.get("verified"):
                        times[tag].append(j["time_ms"]["median"] * 1e3)
                    else:
                        r[tag + "_error"] = "not verified: " + str(j.get("note"))
                except (ValueError, KeyError):
                    r[tag + "_error"] = "run failed"
        for tag in times:
            if times[tag]:
                r[tag + "_us"] = min(times[tag])
        if "predicted_us" in r and "bo_best_us" in r:
            r["share"] = r["bo_best_us"] / r["predicted_us"]
        results.append(r)
    shares = [r["share"] for r in results if "share" in r]
    summary = {
        "matrices": len(shares),
        "geomean_share": math.exp(sum(map(math.log, shares)) / len(shares)) if shares else None,
        "within_10pct": sum(1 for s in shares if s >= 1 / 1.1),
    }
    json.dump({"summary": summary, "matrices": results}, open(os.path.join(out, "crux-eval.json"), "w"),
              indent=1)
    print("| matrix | predicted (τc, τr) | search's best (τc, τr) | predicted µs | best µs | share |")
    print("|---|---|---|---:|---:|---:|")
    for r in results:
        if "share" not in r:
            print(f"| {r['matrix']} | {r.get('skipped') or r.get('predicted_error') or r.get('bo_best_error')} | | | | |")
            continue
        p, b = r["predicted"], r["bo_best"]
        print(f"| {r['matrix']} | ({p[0]:.2f}, {p[1]:.2f}) | ({b[0]:.2f}, {b[1]:.2f}) | "
              f"{r['predicted_us']:.2f} | {r['bo_best_us']:.2f} | {r['share']:.2f} |")
    print(f"\n{summary}")


if __name__ == "__main__":
    main()
