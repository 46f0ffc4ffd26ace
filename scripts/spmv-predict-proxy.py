#!/usr/bin/env python3
"""Screens SpMV rankings without a GPU: each ranking's `tune --budget 0` pick looked up among the
candidates a tuning database measured on the same matrix.

For every matrix of LIST_DIR (scripts/spmv-predict-list.py), each ranking picks as
scripts/spmv-predict-compare.sh would have it pick on a GPU; where the database measured the
pick's graph (the same operators and parameters) on that matrix and device, the pick's share is
the fastest measured graph's time over the pick's. Picks the database never measured are counted,
not scored: the GPU check (spmv-predict-compare.sh) is the measurement, this only screens.
  scripts/spmv-predict-proxy.py LIST_DIR RANKING... [--db EXPORT] [--device NAME]
      [--max-candidates N] [--work DIR]
RANKING: NAME=DIR (DIR holding spmv-rank.json and the files it names) or `shipped`. --db: a
`db export` (default configs/models/sm_90/training-data.json.gz). Environment: ST (sparsetune,
default on PATH), SHARED (the shared .mtx.gz, default ../shared/matrices of the repository root).
"""
import argparse
import concurrent.futures as cf
import gzip
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile

import spmv_export

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def fail(msg):
    print(f"spmv-predict-proxy.py: {msg}", file=sys.stderr)
    sys.exit(2)


def ops_key(graph):
    return json.dumps(graph.get("ops"), sort_keys=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("list_dir")
    ap.add_argument("rankings", nargs="+")
    ap.add_argument("--db", default=os.path.join(ROOT, "configs/models/sm_90/training-data.json.gz"))
    ap.add_argument("--device", help="the export's device name (default: the most measured)")
    ap.add_argument("--max-candidates", type=int, default=0,
                    help="tune's --max-candidates (default: tune's own, 64 when predicting)")
    ap.add_argument("--work", help="keep generated matrices and picks here (default: temporary)")
    a = ap.parse_args()
    st = os.environ.get("ST", "sparsetune")
    if not shutil.which(st):
        fail(f"no sparsetune command: {st} (set ST)")
    shared = os.environ.get("SHARED", os.path.join(ROOT, "../shared/matrices"))
    try:
        rows = [l.rstrip("\n").split("\t") for l in open(os.path.join(a.list_dir, "matrices.tsv"))
                if l.strip() and not l.startswith("#")]
    except OSError as e:
        fail(f"{a.list_dir}: no matrices.tsv ({e}; scripts/spmv-predict-list.py writes it)")
    try:
        with gzip.open(a.db, "rt") if a.db.endswith(".gz") else open(a.db) as f:
            db = json.load(f)
        device, _ = spmv_export.pick_device(db, a.device)
        graphs = spmv_export.measured_graphs(db, device)
    except (OSError, ValueError, KeyError) as e:
        fail(f"{a.db}: {e}")
    measured, fastest = {}, {}
    for fp, ms in graphs.items():
        for m in ms:
            k = (fp, ops_key(json.loads(m["graph"])))
            measured[k] = min(m["time_us"], measured.get(k, math.inf))
        fastest[fp] = min(m["time_us"] for m in ms)

    work = a.work or tempfile.mkdtemp(prefix="spmv-proxy-")
    os.makedirs(os.path.join(work, "mat"), exist_ok=True)
    configs = {}
    for r in a.rankings:
        name, _, d = r.partition("=")
        cfg = os.path.join(work, "cfg-" + name)
        shutil.rmtree(cfg, ignore_errors=True)
        shutil.copytree(os.path.join(ROOT, "configs"), cfg)
        if r != "shipped":
            if not d or not os.path.isfile(os.path.join(d, "spmv-rank.json")):
                fail(f"{r}: expected NAME=DIR with DIR/spmv-rank.json, or shipped")
            for f in os.listdir(d):
                if f.startswith("spmv-rank."):
                    shutil.copy(os.path.join(d, f), os.path.join(cfg, "models/sm_90", f))
        configs[name] = cfg

    def matrix(row):
        mid, name, _, src, gen = row[:5]
        if src == "shared":
            return os.path.join(shared, name + ".mtx.gz")
        path = os.path.join(work, "mat", mid + ".safetensors")
        if not os.path.exists(path):
            subprocess.run([st, "gen", *gen.split(), "-o", path], check=True,
                           capture_output=True)
        return path

    def pick(row, name):
        out = os.path.join(work, "pick", name, row[0])
        os.makedirs(os.path.dirname(out), exist_ok=True)
        args = [st, "--json", "tune", matrix(row), "--budget", "0", "--force", "--db",
                out + ".db", "-o", out]
        if a.max_candidates:
            args += ["--max-candidates", str(a.max_candidates)]
        p = subprocess.run(args, capture_output=True, text=True,
                           env=dict(os.environ, SPARSETUNE_CONFIG_DIR=configs[name]))
        try:
            return json.loads(p.stdout)["graph"]
        except (ValueError, KeyError):
            return None

    for row in rows:  # generated once, before the picks run in parallel
        matrix(row)
    with cf.ThreadPoolExecutor(os.cpu_count() or 2) as ex:
        picks = {(row[0], n): ex.submit(pick, row, n) for row in rows for n in configs}
        picks = {k: f.result() for k, f in picks.items()}

    print(f"{len(rows)} matrices, bests of {device}; share = fastest measured / the pick's "
          "measured time")
    for n in configs:
        shares, unmeasured, failed = [], 0, 0
        for row in rows:
            g = picks[(row[0], n)]
            if g is None:
                failed += 1
                continue
            t = measured.get((row[8], ops_key(g)))
            if t is None:
                unmeasured += 1
                continue
            shares.append((fastest[row[8]] / t, row[2]))
        if not shares:
            print(f"{n:12} no pick was measured ({unmeasured} unmeasured, {failed} failed)")
            continue
        g = math.exp(sum(math.log(s) for s, _ in shares) / len(shares))
        worst = ", ".join(f"{s:.2f} {lab[:18]}" for s, lab in sorted(shares)[:3])
        print(f"{n:12} measured {len(shares):3}/{len(rows)}  geomean {g:.3f}  worst: {worst}"
              + (f"  ({failed} picks failed)" if failed else ""))
    if not a.work:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
