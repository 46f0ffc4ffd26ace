#!/usr/bin/env python3
"""Copies a Matrix Market file (coordinate, one entry per line after the size line) with its
columns randomly permuted (Python's random.Random(7)): dense blocks keep their density per chunk
of rows but lose any index formula or diagonal structure, so a format cannot store their columns
for free. docs/benchmarks.md's tensor-core matrices (bd8p, bd16p) were made this way.
usage: permute-columns.py IN.mtx OUT.mtx"""
import random, sys
src, dst = sys.argv[1], sys.argv[2]
with open(src) as f, open(dst, "w") as g:
    line = f.readline()
    while line.startswith("%"):
        g.write(line); line = f.readline()
    rows, cols, nnz = map(int, line.split())
    g.write(line)
    p = list(range(1, cols + 1)); random.Random(7).shuffle(p)
    out = []
    for l in f:
        r, c, v = l.split()
        out.append(f"{r} {p[int(c) - 1]} {v}\n")
    g.writelines(out)
