#!/usr/bin/env python3
"""Writes the matrix list of scripts/spmv-predict-check.sh: OUT/matrices.tsv and OUT/graphs/ID.json.

For each test matrix of MODELS/spmv-rank.report.json (split.test): how to get it on the GPU
machine (a shared .mtx.gz of SHARED, or a `sparsetune gen` command rebuilt from its provenance),
its recorded size and fingerprint, and the fastest verified graph the tuning database's searches
measured for it (MODELS/training-data.json.gz), written as a graph file for `emit-kernel --graph`.
With measurements of several GPUs, the bests are one device's (--device; default the one with
the most measurements). Order: the shared matrices first, then the generated ones stratified
(round-robin over families, each family's sizes spread), so a run stopped at its deadline has
covered every family. What is skipped (no recorded candidate, neither shared nor generated) goes
to stderr.
  scripts/spmv-predict-list.py --out DIR [--models DIR] [--shared DIR] [--device NAME]
                               [--db EXPORT --all]
(--models: configs/models/sm_90, --shared: ../shared/matrices, both of the repository root, by
default). --db reads the bests from another export than MODELS/training-data.json.gz; --all lists
every matrix of it, not the report's test split (matrices no model has seen: a collection of
configs/corpus/spmv-fresh.list). Runs without a GPU."""
import argparse
import collections
import gzip
import json
import os
import re
import sys

import spmv_export

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# The generated matrices of the training corpus: their `gen` lines give the names the database
# records.
CORPUS_LISTS = [os.path.join(ROOT, "configs/corpus/spmv-generated.list"),
                os.path.join(ROOT, "configs/corpus/spmv-generated-large.list"),
                os.path.join(ROOT, "configs/corpus/spmv-fresh.list")]

# The H100 batch's generated matrices (scripts/gpu-run.sh, case batch: default seed 1): named by
# hand there, so not derivable from a list.
BATCH_GEN = {
    "stencil27_64": "stencil3d --n 64 --points 27 --seed 1",
    "kron16": "kron --scale 16 --seed 1",
    "kron18": "kron --scale 18 --seed 1",
    "stencil2d_512": "stencil2d --nx 512 --seed 1",
    "geometric_256k": "geometric --n 262144 --degree 8 --seed 1",
    "erdos_100k": "erdos --n 100000 --degree 10 --seed 1",
    "banded_500k": "banded --n 500000 --bandwidth 4 --seed 1",
    "powerlaw_256k": "powerlaw --n 262144 --degree 16 --seed 1",
    "blockdiag_64k": "blockdiag --n 65536 --block-size 32 --noise 0.0001 --seed 1",
}
BATCH_LABEL = {"kron16": "kron s16 (batch)", "kron18": "kron s18 (batch)",
               "stencil2d_512": "st2d nx512 (batch)", "geometric_256k": "geom n262144 (batch)",
               "erdos_100k": "erdos n100000 (batch)", "banded_500k": "band n500000 (batch)",
               "stencil27_64": "st3d n64 p27 (batch)", "powerlaw_256k": "plaw n262144 d16 (batch)",
               "blockdiag_64k": "bdiag n65536 bs32 z0.0001 (b)"}

SHORT = {"bandwidth": "bw", "fill": "f", "block_size": "bs", "noise": "z", "degree": "d",
         "exponent": "e", "edge_factor": "ef", "scale": "s", "symmetric": "sym", "points": "p"}
KIND = {"banded": "band", "blockdiag": "bdiag", "erdos": "erdos", "geometric": "geom",
        "kron": "kron", "powerlaw": "plaw", "stencil2d": "st2d", "stencil3d": "st3d"}


def fail(msg):
    print(f"spmv-predict-list.py: {msg}", file=sys.stderr)
    sys.exit(1)


def load_json(path, compressed=False):
    try:
        with (gzip.open(path, "rt") if compressed else open(path)) as f:
            return json.load(f)
    except (OSError, EOFError, ValueError) as e:
        fail(f"cannot read {path}: {e}")


def gen_lines(paths):
    """Name -> `sparsetune gen` arguments for each `gen KIND k=v ... seed=S` line. The name is
    KIND_k=v..._seed=S (parameters in sorted order, values as written in the list), as
    lib/search/collect.cpp parse_gen names them."""
    lines = {}
    for path in paths:
        try:
            text = open(path).read().splitlines()
        except OSError as e:
            fail(f"cannot read {path}: {e}")
        for line in text:
            line = line.split("#")[0].split()
            if not line or line[0] != "gen":
                continue
            kind, seed, params = line[1], "1", {}
            for w in line[2:]:
                k, v = w.split("=", 1)
                k = k.replace("-", "_")
                if k == "seed":
                    seed = v
                elif k != "family":
                    params[k] = v
            name = kind + "".join(f"_{k}={params[k]}" for k in sorted(params)) + f"_seed={seed}"
            args = [kind] + [f"--{k.replace('_', '-')} {params[k]}" for k in sorted(params)]
            lines.setdefault(name, " ".join(args + [f"--seed {seed}"]))
    return lines


def label(name):
    """A short name for the printed table: kind and parameters, no seed."""
    m = re.match(r"([a-z0-9]+)_(.*)_seed=\d+$", name)
    if not m or m.group(1) not in KIND:
        return name[:30]
    parts = []
    for k, v in re.findall(r"(?:^|_)([a-z]+(?:_[a-z]+)*)=([^_]*)", m.group(2)):
        parts.append(SHORT.get(k, k) + {"true": "t", "false": "f"}.get(v, v))
    return (KIND[m.group(1)] + " " + " ".join(parts))[:30]


def spread(n):
    """Indices 0..n-1 in an order that covers the range early: middle, ends, quarters, ..."""
    order, seen = [], set()
    for k in range(1, 64):
        for j in range(0, 2 ** k + 1):
            i = min(n - 1, round(j * (n - 1) / 2 ** k)) if n > 1 else 0
            if i not in seen and (j % 2 == 1 or k == 1):
                seen.add(i)
                order.append(i)
        if len(order) == n:
            break
    return order


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--models", default=os.path.join(ROOT, "configs/models/sm_90"),
                    help="folder of spmv-rank.report.json and training-data.json.gz")
    ap.add_argument("--shared", default=os.path.join(ROOT, "../shared/matrices"),
                    help="folder of the shared .mtx.gz matrices")
    ap.add_argument("--out", required=True, help="folder to write matrices.tsv and graphs/ into")
    ap.add_argument("--db", help="the tuning database's export to read the bests from "
                    "(default: MODELS/training-data.json.gz)")
    ap.add_argument("--all", action="store_true",
                    help="every matrix of the export, not the report's test split")
    ap.add_argument("--device", help="take the searched bests of this GPU only (the export's "
                    "device name; default: the device with the most measurements)")
    a = ap.parse_args()
    if not os.path.isdir(a.shared):
        fail(f"no such folder: {a.shared} (--shared)")

    report = {} if a.all else load_json(os.path.join(a.models, "spmv-rank.report.json"))
    db = load_json(a.db or os.path.join(a.models, "training-data.json.gz"), compressed=True)
    try:
        test = [m["name"] for m in db["matrices"]] if a.all else report["split"]["test"]
        by_name = {m["name"]: m for m in db["matrices"]}
        family = {r["fingerprint"]: r["family"] for r in db["runs"]}
        device, devices = spmv_export.pick_device(db, a.device)
        per_matrix = {e["matrix"]: e for e in report.get("test_per_matrix", [])
                      if e.get("device", device) == device}
        meas = spmv_export.measured_graphs(db, device)
    except (KeyError, TypeError) as e:
        fail(f"unexpected layout in {a.models}: missing {e}")
    except ValueError as e:
        fail(str(e))
    print(f"searched bests of {device} ({devices[device]} of {sum(devices.values())} "
          "measurements)", file=sys.stderr)
    gens = gen_lines(CORPUS_LISTS)
    gens.update(BATCH_GEN)

    rows, skipped = [], []
    for name in test:
        mat = by_name.get(name)
        if mat is None:
            skipped.append((name, "not in the database"))
            continue
        fp = mat["fingerprint"]
        cands = meas[fp]
        if not cands:
            skipped.append((name, "no verified candidate recorded"))
            continue
        oracle = per_matrix.get(name, {}).get("oracle")
        # Fastest; a tie goes to the report's oracle.
        best = min(cands, key=lambda m: (m["time_us"], m["candidate"] != oracle))
        fam = family.get(fp, "?")
        if os.path.exists(os.path.join(a.shared, name + ".mtx.gz")):
            src, gen = "shared", "-"
        elif name in gens:
            src, gen = "gen", gens[name]
        else:
            skipped.append((name, f"not in {a.shared} and not generated (family {fam})"))
            continue
        rows.append(dict(name=name, label=BATCH_LABEL.get(name) or label(name), src=src, gen=gen,
                         fam=fam, rows=mat["rows"], cols=mat["cols"], nnz=mat["nnz"], fp=fp,
                         measured=len(cands), distinct=len({m["candidate"] for m in cands}),
                         best=best["candidate"], best_us=best["time_us"], graph=best["graph"],
                         oracle=oracle))

    shared = sorted((r for r in rows if r["src"] == "shared"), key=lambda r: r["nnz"])
    fams = collections.defaultdict(list)
    for r in rows:
        if r["src"] == "gen":
            # The batch records 3D stencils as gen:stencil: one family with the list's.
            fams[{"gen:stencil": "gen:stencil3d"}.get(r["fam"], r["fam"])].append(r)
    queues = []
    for f in sorted(fams):
        lst = sorted(fams[f], key=lambda r: r["nnz"])
        queues.append([lst[i] for i in spread(len(lst))])
    gen_order = []
    while any(queues):
        for q in queues:
            if q:
                gen_order.append(q.pop(0))
    ordered = shared + gen_order

    graphs = os.path.join(a.out, "graphs")
    os.makedirs(graphs, exist_ok=True)
    # A shorter list than last time must not leave stale graphs behind.
    for f in os.listdir(graphs):
        if f.endswith(".json"):
            os.remove(os.path.join(graphs, f))
    with open(os.path.join(a.out, "matrices.tsv"), "w") as out:
        out.write("# id\tname\tlabel\tsource\tgen-args\trows\tcols\tnnz\tfingerprint\tmeasured\t"
                  "distinct\tbest-candidate\tbest-us-recorded\n")
        for i, r in enumerate(ordered, 1):
            r["id"] = f"m{i:02d}"
            g = json.loads(r["graph"])
            if g.get("format") != "sparsetune-graph" or g.get("op") != "spmv":
                fail(f"{r['name']}: the recorded best graph is not an SpMV graph")
            with open(os.path.join(graphs, r["id"] + ".json"), "w") as gf:
                json.dump(g, gf, indent=1)
                gf.write("\n")
            out.write("\t".join(str(x) for x in [
                r["id"], r["name"], r["label"], r["src"], r["gen"], r["rows"], r["cols"],
                r["nnz"], r["fp"], r["measured"], r["distinct"], r["best"],
                f"{r['best_us']:.3f}"]) + "\n")
    print(f"{len(ordered)} matrices ({len(shared)} shared, {len(gen_order)} generated); "
          f"skipped {len(skipped)}:", file=sys.stderr)
    for n, why in skipped:
        print(f"  {n}: {why}", file=sys.stderr)
    for r in ordered:
        if r["oracle"] and r["best"] != r["oracle"]:
            print(f"  note {r['id']} {r['name']}: best {r['best']} ({r['best_us']:.2f} us) is not "
                  f"the report's oracle {r['oracle']}", file=sys.stderr)


if __name__ == "__main__":
    main()
