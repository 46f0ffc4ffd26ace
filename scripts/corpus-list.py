#!/usr/bin/env python3
"""Writes a `sparsetune collect` list of generated matrices: COUNT `gen` lines spread over the
generators' families, with target sizes drawn log-uniformly between MIN_NNZ and MAX_NNZ entries
and each family's shape parameters drawn from the ranges that matter for SpMV (degree, stencil
points, band fill, block size, skew). The same seed gives the same list, and a larger --count
only appends lines. Stencils ignore the seed: two stencil lines of one shape are one matrix
(collect skips the second).
With --max-rows R every line is drawn again until its matrix has at most R rows (the row-order
paper's corpus: square matrices of at most 30K rows, timed with B as large as A).
  scripts/corpus-list.py [--count N] [--min-nnz X] [--max-nnz X] [--max-rows R] [--seed S] > LIST"""
import argparse
import math
import random


def line(kind, seed, **params):
    return "gen " + kind + " " + " ".join(f"{k}={v}" for k, v in params.items()) + f" seed={seed}"


def stencil2d(r, nnz, seed):
    points = r.choice([5, 9])
    aspect = r.choice([1, 1, 2, 4])
    ny = max(8, int(math.sqrt(nnz / points / aspect)))
    return line("stencil2d", seed, nx=ny * aspect, ny=ny, points=points)


def stencil3d(r, nnz, seed):
    points = r.choice([7, 27])
    n = max(4, round((nnz / points) ** (1 / 3)))
    return line("stencil3d", seed, n=n, points=points)


def kron(r, nnz, seed):
    ef = r.choice([4, 8, 16, 32])
    scale = min(22, max(8, round(math.log2(nnz / ef))))
    return line("kron", seed, scale=scale, edge_factor=ef, symmetric=r.choice(["true", "false"]))


def geometric(r, nnz, seed):
    degree = r.choice([4, 8, 16, 32])
    return line("geometric", seed, n=max(1000, int(nnz / degree)), degree=degree)


def erdos(r, nnz, seed):
    degree = r.choice([2, 5, 10, 30])
    return line("erdos", seed, n=max(1000, int(nnz / degree)), degree=degree)


def banded(r, nnz, seed):
    bw = r.choice([1, 2, 4, 8, 16, 32])
    fill = r.choice([1, 1, 0.5, 0.1])
    return line("banded", seed, n=max(1000, int(nnz / (1 + 2 * bw * fill))), bandwidth=bw, fill=fill)


def powerlaw(r, nnz, seed):
    degree = r.choice([4, 8, 16, 32])
    exponent = r.choice([2.1, 2.5, 3.0])
    return line("powerlaw", seed, n=max(1000, int(nnz / degree)), degree=degree, exponent=exponent)


def blockdiag(r, nnz, seed):
    bs = r.choice([4, 8, 16, 32, 64])
    noise = r.choice([0, 0.00001, 0.0001])
    return line("blockdiag", seed, n=max(bs, int(nnz / bs)), block_size=bs, noise=noise)


def rows_of(text):
    """The row count of a `gen` line's matrix, from its parameters."""
    kv = dict(w.split("=") for w in text.split()[2:])
    kind = text.split()[1]
    if kind == "stencil2d":
        return int(kv["nx"]) * int(kv["ny"])
    if kind == "stencil3d":
        return int(kv["n"]) ** 3
    if kind == "kron":
        return 2 ** int(kv["scale"])
    return int(kv["n"])


FAMILIES = [stencil2d, stencil3d, kron, geometric, erdos, banded, powerlaw, blockdiag]


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--count", type=int, default=216)
    p.add_argument("--min-nnz", type=float, default=1e4)
    p.add_argument("--max-nnz", type=float, default=1e7)
    p.add_argument("--max-rows", type=int, default=0, help="0: no limit")
    p.add_argument("--seed", type=int, default=1)
    a = p.parse_args()
    if a.count < 1 or not 0 < a.min_nnz <= a.max_nnz:
        p.error("need --count >= 1 and 0 < --min-nnz <= --max-nnz")
    r = random.Random(a.seed)
    rows = f" --max-rows {a.max_rows}" if a.max_rows else ""
    print(f"# {a.count} generated matrices, {a.min_nnz:g}-{a.max_nnz:g} entries (log-uniform), "
          f"scripts/corpus-list.py --count {a.count} --min-nnz {a.min_nnz:g} --max-nnz {a.max_nnz:g}{rows} --seed {a.seed}")
    for i in range(a.count):
        family = FAMILIES[i % len(FAMILIES)]  # every family equally often
        for attempt in range(1000):
            nnz = math.exp(r.uniform(math.log(a.min_nnz), math.log(a.max_nnz)))
            text = family(r, nnz, seed=1000 + i)
            if not a.max_rows or rows_of(text) <= a.max_rows:
                break
        else:
            p.error(f"no {family.__name__} line of at most {a.max_rows} rows in 1000 draws")
        print(text)


if __name__ == "__main__":
    main()
