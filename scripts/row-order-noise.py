#!/usr/bin/env python3
"""How much of the row-order oracle's gain the timing noise leaves to a predictor.

Reads two collections of the same row-order records (`collect --op spmm --row-orders`, each
exported with `db export`) and prints: the round-to-round spread of the orders' times, how often
the two name the same best order, how much of one collection's oracle gain the other's best order
keeps, and, by simulation, how much a predictor that always names the true best order keeps.

The simulation takes the geometric mean of the two collections as the true times and draws each
collection as true * exp(e), e normal with the per-collection spread the two measured (the
spread of log(t_A / t_B) around each record's mean, over sqrt(2)).

usage: scripts/row-order-noise.py A.json.gz B.json.gz [--draws 200] [--seed 1]
"""
import argparse
import collections
import gzip
import json
import math
import random
import statistics


def load(path):
    opener = gzip.open if path.endswith(".gz") else open
    try:
        with opener(path, "rt") as f:
            d = json.load(f)
        measurements = d["measurements"]
    except (OSError, EOFError, ValueError, KeyError, TypeError) as e:
        raise SystemExit(f"{path}: not a tuning-database export (db export): {e}")
    times = collections.defaultdict(dict)
    for m in measurements:
        c = m["candidate"]
        if c.startswith("row-order/") and m["ok"] and m["time_us"] > 0:
            times[(m["fingerprint"], m["n"])][c.split("/", 1)[1]] = m["time_us"]
    return times


def gain(t, pick):
    """Speed-up of `pick` over the original order (index 0)."""
    return t[0] / t[pick]


def argmin(t):
    return min(range(len(t)), key=t.__getitem__)


def share(picked, oracle):
    """(geo mean of picked - 1) / (geo mean of oracle - 1), as `train` reports it."""
    gp = math.exp(statistics.fmean(math.log(x) for x in picked))
    go = math.exp(statistics.fmean(math.log(x) for x in oracle))
    return (gp - 1) / (go - 1) if go > 1 else 1.0


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("a")
    ap.add_argument("b")
    ap.add_argument("--draws", type=int, default=200)
    ap.add_argument("--seed", type=int, default=1)
    o = ap.parse_args()
    A, B = load(o.a), load(o.b)
    orders = sorted({k for t in A.values() for k in t} & {k for t in B.values() for k in t})
    if "original" not in orders:
        raise SystemExit(f"{o.a}, {o.b}: no row-order/original times in both")
    orders.remove("original")
    orders.insert(0, "original")
    keys = [k for k in A if k in B and all(x in A[k] and x in B[k] for x in orders)]
    if not keys:
        raise SystemExit(f"{o.a}, {o.b}: no record has every order timed in both")
    ta = [[A[k][x] for x in orders] for k in keys]
    tb = [[B[k][x] for x in orders] for k in keys]
    dev = []
    for ra, rb in zip(ta, tb):
        d = [math.log(x / y) for x, y in zip(ra, rb)]
        mu = statistics.fmean(d)
        dev += [v - mu for v in d]
    spread = statistics.pstdev(dev)
    sigma = spread / math.sqrt(2)
    same = sum(argmin(x) == argmin(y) for x, y in zip(ta, tb)) / len(keys)
    cross = [gain(y, argmin(x)) for x, y in zip(ta, tb)] + [gain(x, argmin(y)) for x, y in zip(ta, tb)]
    oracle = [gain(y, argmin(y)) for y in tb] + [gain(x, argmin(x)) for x in ta]
    print(f"records in both: {len(keys)}, orders: {len(orders)}")
    print(f"spread of log(t_A / t_B) within a record: {100 * spread:.2f} % (a collection: {100 * sigma:.2f} %)")
    print(f"same best order in both: {100 * same:.1f} %")
    print(f"one collection's best, timed in the other: {100 * share(cross, oracle):.1f} % of its oracle gain")
    truth = [[math.sqrt(x * y) for x, y in zip(ra, rb)] for ra, rb in zip(ta, tb)]
    rng = random.Random(o.seed)
    sim_cross, sim_true = [], []
    for _ in range(o.draws):
        da = [[t * math.exp(rng.gauss(0, sigma)) for t in r] for r in truth]
        db = [[t * math.exp(rng.gauss(0, sigma)) for t in r] for r in truth]
        orc = [gain(y, argmin(y)) for y in db]
        sim_cross.append(share([gain(y, argmin(x)) for x, y in zip(da, db)], orc))
        sim_true.append(share([gain(y, argmin(t)) for t, y in zip(truth, db)], orc))
    print(f"simulated ({o.draws} draws): the other collection's best keeps {100 * statistics.fmean(sim_cross):.1f} %,"
          f" the true best order {100 * statistics.fmean(sim_true):.1f} % of a collection's oracle gain")


if __name__ == "__main__":
    main()
