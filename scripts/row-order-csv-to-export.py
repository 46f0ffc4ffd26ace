#!/usr/bin/env python3
"""A `row-orders collect` CSV as a tuning-database export that `db merge` joins.

`row-orders collect` writes its times to a CSV, keyed by matrix name; `collect --op spmm
--row-orders` writes the same times to the tuning database, keyed by the matrix's fingerprint.
This turns the first into the second, so a collection timed with `row-orders collect` can be
merged beside the database's own rounds (`db --db DB merge OUT.json.gz`) and trained on. The
fingerprints, sizes and names come from an export of a database that holds the same matrices
(`db --db DB export -o NAMES.json.gz`); a CSV matrix it lacks is an error that names it, or with
`--skip-unknown` is left out and counted (a generated matrix the database holds under another
name: a stencil's seed changes nothing, so two seeds are one fingerprint and one name).

Each record becomes the rows `collect --row-orders` writes (search/row_order_collect.cpp): one
per order (candidate "row-order/ORDER", params with the order, its host ms, the features and, for
the Hamming orders, the candidate rule), cuSPARSE's "cusparse/spmm-best" when timed, and a run.

A CSV written before the candidates column existed needs `--candidates RULE`, the rule it was
timed with (`row-orders collect --candidates`); a CSV with the column keeps its own.

usage: scripts/row-order-csv-to-export.py CSV NAMES.json.gz OUT.json.gz [--candidates RULE]
         [--device "NVIDIA H200"] [--arch sm_90] [--dtype f32] [--created 2026-11-29T00:00:00Z]
"""
import argparse
import csv
import gzip
import json
import sys

HAMMING = {"warp-aware", "cta-aware", "hybrid2.1", "hybrid2.2", "hybrid2.3"}


def fail(msg):
    sys.exit(f"row-order-csv-to-export: {msg}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("csv")
    ap.add_argument("names")
    ap.add_argument("out")
    ap.add_argument("--candidates", choices=["matrix", "shared-lines"])
    ap.add_argument("--skip-unknown", action="store_true")
    ap.add_argument("--device", default="NVIDIA H200")
    ap.add_argument("--arch", default="sm_90")
    ap.add_argument("--dtype", default="f32")
    ap.add_argument("--created", default="2026-11-29T00:00:00Z")
    ap.add_argument("--tool-version", default="0.1.0")
    a = ap.parse_args()

    try:
        with gzip.open(a.names, "rt") as f:
            names = json.load(f)
        matrices = {m["name"]: m for m in names["matrices"]}
    except (OSError, ValueError, KeyError, TypeError) as e:
        fail(f"{a.names}: not a database export ({e})")

    opener = gzip.open if a.csv.endswith(".gz") else open
    try:
        with opener(a.csv, "rt") as f:
            rows = list(csv.DictReader(line for line in f if not line.startswith("#")))
    except OSError as e:
        fail(f"{a.csv}: {e}")
    if not rows:
        fail(f"{a.csv}: no records")
    header = list(rows[0].keys())
    orders = [h[2:] for h in header if h.startswith("t_")]
    features = [h for h in header if h.startswith("permutation.")]
    if not orders or not features:
        fail(f"{a.csv}: not a `row-orders collect` CSV (no t_ORDER or permutation.* columns)")
    if "candidates" not in header and not a.candidates:
        fail(f"{a.csv}: no candidates column; say the rule it was timed with (--candidates)")

    out = {"format": "sparsetune-db-export", "version": 1, "matrices": [], "runs": [],
           "measurements": []}
    seen, skipped = set(), set()
    for line, r in enumerate(rows, start=2):
        m = matrices.get(r["matrix"])
        if m is None and a.skip_unknown:
            skipped.add(r["matrix"])
            continue
        if m is None:
            fail(f"{a.csv}:{line}: matrix '{r['matrix']}' is not in {a.names}")
        fp, n = m["fingerprint"], int(r["n"])
        if fp not in seen:
            seen.add(fp)
            out["matrices"].append(m)
        try:
            feats = [float(r[k]) for k in features]
            rule = r["candidates"] if "candidates" in header else a.candidates
            key = {"arch": a.arch, "device": a.device, "dtype": a.dtype, "fingerprint": fp,
                   "n": n, "op": "spmm-row-order", "tool_version": a.tool_version}
            for o in orders:
                t = float(r["t_" + o])
                p = {"order": o, "order_ms": float(r["ms_" + o]), "features": feats}
                if o in HAMMING:
                    p["candidates"] = rule
                out["measurements"].append(dict(
                    key, candidate="row-order/" + o, error=0.0,
                    failure="" if t > 0 else (r.get("notes") or "not measured"), gbps=0.0,
                    gflops=0.0, graph="", ok=t > 0, params=json.dumps(p, sort_keys=True),
                    time_us=t if t > 0 else 0.0))
            cus = float(r.get("cusparse_us") or -1)
        except ValueError as e:
            fail(f"{a.csv}:{line}: {e}")
        if cus > 0:
            out["measurements"].append(dict(
                key, candidate="cusparse/spmm-best", error=0.0, failure="", gbps=0.0, gflops=0.0,
                graph="", ok=True, params="{}", time_us=cus))
        out["runs"].append(dict(
            key, baseline="", baseline_us=0.0, candidates=len(orders), created_at=a.created,
            failures=0, family="", from_database=False, peak_gbs=0.0, search_s=0.0,
            structures=0, wall_s=0.0, winner="", winner_us=0.0))
    with gzip.open(a.out, "wt") as f:
        json.dump(out, f)
    print(f"{a.out}: {len(out['matrices'])} matrices, {len(out['runs'])} runs, "
          f"{len(out['measurements'])} measurements"
          + (f"; left out, not in {a.names}: {', '.join(sorted(skipped))}" if skipped else ""))


if __name__ == "__main__":
    main()
