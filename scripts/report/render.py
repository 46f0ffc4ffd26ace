#!/usr/bin/env python3
"""Plots and a web page for `sparsetune report`, from the CSV files in one folder.

Usage: python3 render.py DIR

Reads DIR/matrices.csv, DIR/predictions.csv (optional) and DIR/summary.json (optional), and
writes six PNG plots and DIR/index.html. Exit status: 0 done; 2 a missing or malformed input,
named with its line; 3 matplotlib is missing.

The program carries this file as text (lib/report/embed_script.cmake makes it C++ string
literals, split at byte offsets), so it stays one ASCII file that needs only the standard
library, matplotlib and numpy.
"""
import csv
import html
import json
import math
import os
import struct
import sys
from collections import Counter

MATRIX_COLUMNS = [
    "name", "family", "fingerprint", "op", "dtype", "device", "rows", "cols", "nnz",
    "row_nnz_var", "tuned_us", "cusparse_us", "cusparse_alg", "speedup", "winner", "structure",
    "achieved_gbs", "peak_gbs", "bandwidth_fraction", "search_s", "wall_s", "candidates",
    "structures", "failures",
]
MATRIX_TYPES = {
    "rows": int, "cols": int, "nnz": int, "row_nnz_var": float, "tuned_us": float,
    "cusparse_us": float, "speedup": float, "achieved_gbs": float, "peak_gbs": float,
    "bandwidth_fraction": float, "search_s": float, "wall_s": float, "candidates": int,
    "structures": int, "failures": int,
}
PREDICTION_COLUMNS = ["name", "family", "structure", "predicted_us", "measured_us"]
PREDICTION_TYPES = {"predicted_us": float, "measured_us": float}

PLOTS = [
    ("speedup_vs_nnz.png", "Speedup against nnz",
     "Speedup of the tuned kernel over the fastest verified cuSPARSE algorithm, one point per "
     "matrix, operation and value type. Above the dashed line the search won."),
    ("speedup_vs_variance.png", "Speedup against row-length variance",
     "The same speedups against the variance of the number of nonzeros per row: irregular "
     "matrices are where a fixed format loses most."),
    ("bandwidth_hist.png", "Bandwidth reached",
     "Effective memory bandwidth of each winner as a share of the device's measured peak. "
     "Small matrices that stay in L2 can pass 100%."),
    ("search_time.png", "Search time",
     "Seconds spent searching per matrix (dark) and the whole tune (light), matrices sorted "
     "by nnz."),
    ("format_wins.png", "Winning structures",
     "How often each structure won: a known format seeded into the search, or a grown graph "
     "(grown: and the first hex digits of its structure hash)."),
    ("predicted_vs_measured.png", "Cost model",
     "The cost model's predicted time against the measured time of every candidate it ranked. "
     "On the solid line the prediction was exact; the dotted lines are a factor 2 off."),
]

# Sizes are for a page of two plots a row.
DPI = 110
FIG_SIZE = (6.8, 4.2)
MARKERS = ["o", "s", "^", "D", "v", "P", "X", "<", ">", "h"]
# Triangles look smaller and diamonds larger than a circle of the same area.
MARKER_SCALE = {"^": 1.35, "v": 1.35, "<": 1.35, ">": 1.35, "D": 0.75, "s": 0.85}
TIMES = "\u00d7"
MICRO = "\u00b5"


class InputError(Exception):
    """A missing or malformed input file: the message names the file and the line."""


def fail(message, code):
    print("render.py: " + message, file=sys.stderr)
    sys.exit(code)


# ---------------------------------------------------------------- reading the inputs

def parse_number(cell, kind, where, column):
    text = cell.strip()
    if text == "":
        return None  # unknown
    try:
        value = float(text)
    except ValueError:
        raise InputError(f"{where}: column {column}: {cell!r} is not a number") from None
    if not math.isfinite(value):
        raise InputError(f"{where}: column {column}: {cell!r} is not a finite number "
                         "(an unknown value is an empty cell)")
    if kind is int:
        if not value.is_integer():
            raise InputError(f"{where}: column {column}: {cell!r} is not an integer")
        return int(value)
    return value


def read_csv(path, columns, types, required):
    """Rows of one CSV file as dicts, or None when an optional file is absent."""
    try:
        f = open(path, newline="", encoding="utf-8-sig")
    except FileNotFoundError:
        if required:
            raise InputError(f"{path}: no such file") from None
        return None
    except OSError as e:
        raise InputError(f"{path}: cannot read: {e.strerror}") from None
    rows = []
    with f:
        reader = csv.reader(f, strict=True)
        line = 1
        try:
            header = next(reader, None)
            if header is None:
                raise InputError(f"{path}:1: empty file; expected the header line "
                                 f"{','.join(columns)}")
            if header != columns:
                raise InputError(f"{path}:1: wrong header: {describe_header(header, columns)}")
            line = reader.line_num + 1
            for cells in reader:
                where = f"{path}:{line}"
                line = reader.line_num + 1  # a quoted field may span lines
                if not cells:
                    continue  # a blank line
                if len(cells) != len(columns):
                    raise InputError(f"{where}: {len(cells)} fields, expected {len(columns)} "
                                     f"({','.join(columns)})")
                row = {"_line": where}
                for column, cell in zip(columns, cells):
                    kind = types.get(column)
                    row[column] = cell if kind is None else parse_number(cell, kind, where,
                                                                         column)
                rows.append(row)
        except csv.Error as e:
            raise InputError(f"{path}:{reader.line_num}: malformed CSV: {e}") from None
        except UnicodeDecodeError:
            raise InputError(f"{path}:{line}: not UTF-8 text") from None
    return rows


def describe_header(found, expected):
    for i, (a, b) in enumerate(zip(found, expected)):
        if a != b:
            return f"column {i + 1} is {a!r}, expected {b!r} (the header is {','.join(expected)})"
    if len(found) < len(expected):
        return f"missing columns {','.join(expected[len(found):])}"
    return f"unexpected extra columns {','.join(found[len(expected):])}"


def read_summary(path):
    """summary.json as a dict; absent or unreadable is only a warning (it adds labels only)."""
    try:
        with open(path, encoding="utf-8") as f:
            summary = json.load(f)
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as e:
        print(f"render.py: warning: {path}: ignored ({e})", file=sys.stderr)
        return {}
    return summary if isinstance(summary, dict) else {}


def complete(rows):
    """Fills what can be derived: a speedup from the two times, names and families."""
    for r in rows:
        if r["speedup"] is None and r["cusparse_us"] and r["tuned_us"]:
            r["speedup"] = r["cusparse_us"] / r["tuned_us"]
        if r["bandwidth_fraction"] is None and r["achieved_gbs"] and r["peak_gbs"]:
            r["bandwidth_fraction"] = r["achieved_gbs"] / r["peak_gbs"]
        r["family"] = r["family"] or "(none)"
        r["name"] = r["name"] or r["fingerprint"] or "(unnamed)"
    # One matrix can have several rows (op, value type, device): a label tells them apart
    # by what differs among them.
    by_name = {}
    for r in rows:
        by_name.setdefault(r["name"], []).append(r)
    for name, group in by_name.items():
        varying = [c for c in ("op", "dtype", "device") if len({r[c] for r in group}) > 1]
        for r in group:
            extra = " ".join(r[c] for c in varying if r[c])
            r["label"] = f"{name} ({extra})" if extra else name


def plain(text, limit=28):
    """User text for matplotlib: shortened, and "$" escaped (it would start mathtext)."""
    text = str(text).replace("\n", " ")
    if len(text) > limit:
        text = text[:limit - 1] + "\u2026"
    return text.replace("$", "\\$")


def duration(seconds):
    if seconds >= 2 * 3600:
        return f"{seconds / 3600:.1f} h"
    if seconds >= 120:
        return f"{seconds / 60:.1f} min"
    return f"{seconds:.0f} s"


def geomean(values):
    values = [v for v in values if v and v > 0]
    if not values:
        return None
    return math.exp(sum(math.log(v) for v in values) / len(values))


def median(values):
    values = sorted(values)
    if not values:
        return None
    mid = len(values) // 2
    return values[mid] if len(values) % 2 else (values[mid - 1] + values[mid]) / 2


# ---------------------------------------------------------------- plots

def load_matplotlib():
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.patches as patches
        import matplotlib.pyplot as plt
        import matplotlib.ticker as ticker
        import numpy as np
    except ImportError as e:
        fail(f"python3-matplotlib is not installed (scripts/setup.sh installs it): {e}", 3)
    plt.rcParams.update({
        "font.size": 10,
        "axes.titlesize": 12,
        "axes.labelsize": 10,
        "axes.grid": True,
        "axes.axisbelow": True,
        "axes.spines.top": False,
        "axes.spines.right": False,
        "grid.color": "#d9d9d9",
        "grid.linewidth": 0.6,
        "legend.fontsize": 9,
        "legend.frameon": False,
        "figure.facecolor": "white",
        "savefig.facecolor": "white",
        "text.usetex": False,
        "axes.formatter.use_mathtext": False,
    })
    return plt, patches, ticker, np


class Plotter:
    def __init__(self, rows, predictions):
        self.plt, self.patches, self.ticker, self.np = load_matplotlib()
        self.rows = rows
        self.predictions = predictions
        families = sorted({r["family"] for r in rows}
                          | {p["family"] or "(none)" for p in predictions or []})
        colours = self.plt.get_cmap("tab10").colors
        # Colour and marker both change per family, so the plots read without colour vision.
        self.style = {f: (colours[i % 10], MARKERS[(i + i // 10) % len(MARKERS)])
                      for i, f in enumerate(families)}

    # -- helpers

    def figure(self, size=FIG_SIZE):
        # Constrained layout at a fixed size (not a tight bounding box), so every plot of a
        # size has the same pixels and the page shows them at one scale.
        fig, ax = self.plt.subplots(figsize=size, dpi=DPI, layout="constrained")
        return fig, ax

    @staticmethod
    def titles(ax, main, sub=None):
        ax.set_title(main, loc="left", fontweight="bold", pad=20 if sub else 8)
        if sub:
            ax.text(0, 1.015, sub, transform=ax.transAxes, fontsize=9, color="#555555",
                    va="bottom", ha="left")

    @staticmethod
    def no_data(ax, message):
        ax.set_xticks([])
        ax.set_yticks([])
        ax.grid(False)
        ax.text(0.5, 0.5, "no data\n" + message, transform=ax.transAxes, ha="center",
                va="center", fontsize=12, color="#666666", linespacing=1.6,
                bbox=dict(boxstyle="round,pad=0.8", fc="#f5f5f5", ec="#cccccc"))

    @staticmethod
    def note(ax, lines):
        if lines:
            ax.text(0.99, 0.02, "\n".join(lines), transform=ax.transAxes, ha="right",
                    va="bottom", fontsize=8, color="#666666")

    @staticmethod
    def legend(ax, handles, title="family"):
        """Right of the plot; smaller and in two columns when there are many families."""
        many = len(handles) > 12
        ax.legend(handles=handles, title=title, loc="upper left", bbox_to_anchor=(1.01, 1.0),
                  borderaxespad=0, fontsize=7.5 if len(handles) > 8 else None,
                  ncol=2 if many else 1, columnspacing=0.8, handletextpad=0.3 if many else None)

    def family_patches(self, families):
        patches = self.patches
        return [patches.Patch(color=self.style[f][0], label=plain(f, 22))
                for f in sorted(families)]

    def family_legend(self, ax, families, extra=()):
        handles = [self.plt.Line2D([], [], linestyle="", marker=self.style[f][1],
                                   color=self.style[f][0], label=plain(f, 22),
                                   markersize=6.5 * MARKER_SCALE.get(self.style[f][1], 1) ** 0.5)
                   for f in sorted(families)]
        self.legend(ax, handles + list(extra))

    def scatter_families(self, ax, points, size=42, extra=()):
        """points: (x, y, family) triples, drawn one family at a time; extra: legend lines."""
        for family in sorted({p[2] for p in points}):
            xs = [p[0] for p in points if p[2] == family]
            ys = [p[1] for p in points if p[2] == family]
            colour, marker = self.style[family]
            ax.scatter(xs, ys, s=size * MARKER_SCALE.get(marker, 1), color=colour, marker=marker,
                       alpha=0.85, edgecolors="white", linewidths=0.6, zorder=3)
        self.family_legend(ax, {p[2] for p in points}, extra)

    def ratio_axis(self, ax, values):
        """A log axis for speedups with plain ticks (0.5x, 1x, 2x), always showing 1."""
        lo = min(min(values), 1.0) / 1.25
        hi = max(max(values), 1.0) * 1.25
        ax.set_yscale("log")
        ax.set_ylim(lo, hi)
        tiers = [(1, 2, 5), (1, 1.5, 2, 3, 5, 7), (1, 1.25, 1.5, 2, 2.5, 3, 4, 5, 6, 8)]
        ticks = []
        for tier in tiers:
            ticks = [m * 10.0 ** e for e in range(-4, 5) for m in tier
                     if lo <= m * 10.0 ** e <= hi]
            if len(ticks) >= 4:
                break
        if len(ticks) > 10:
            ticks = [10.0 ** e for e in range(-4, 5) if lo <= 10.0 ** e <= hi]
        ax.yaxis.set_major_locator(self.ticker.FixedLocator(ticks))
        ax.yaxis.set_major_formatter(self.ticker.FuncFormatter(lambda v, _: f"{v:g}{TIMES}"))
        ax.yaxis.set_minor_locator(self.ticker.NullLocator())

    def label_points(self, ax, points):
        """Names next to the points: all of a few, else only the best and the worst."""
        if len(points) > 14:
            points = [min(points, key=lambda p: p[1]), max(points, key=lambda p: p[1])]
        for x, y, label in points:
            ax.annotate(plain(label, 24), (x, y), xytext=(5, 3), textcoords="offset points",
                        fontsize=7, color="#333333", zorder=4)

    def save(self, fig, path):
        # No Software/date chunks: the same data gives the same bytes.
        fig.savefig(path, format="png", dpi=DPI, metadata={"Software": None})
        self.plt.close(fig)

    # -- the six plots

    def speedup_vs_nnz(self, path):
        fig, ax = self.figure()
        pts = [(r["nnz"], r["speedup"], r["family"], r["label"]) for r in self.rows
               if r["nnz"] and r["nnz"] > 0 and r["speedup"] and r["speedup"] > 0]
        if not pts:
            self.titles(ax, "Speedup over cuSPARSE against nnz")
            self.no_data(ax, "no row has both nnz and a cuSPARSE time")
            return self.save(fig, path)
        speedups = [p[1] for p in pts]
        g = geomean(speedups)
        wins = sum(s >= 1 for s in speedups)
        self.titles(ax, f"Speedup against nnz: geomean {g:.2f}{TIMES}",
                    f"{wins} of {len(pts)} faster than the best cuSPARSE algorithm")
        ax.set_xscale("log")
        self.ratio_axis(ax, speedups)
        lines = self.reference_lines(ax, g)
        self.scatter_families(ax, [(p[0], p[1], p[2]) for p in pts], extra=lines)
        self.label_points(ax, [(p[0], p[1], p[3]) for p in pts])
        self.pad_log_x(ax, [p[0] for p in pts])
        ax.xaxis.set_major_formatter(self.ticker.FuncFormatter(lambda v, _: si(v)))
        ax.set_xlabel("nonzeros (nnz)")
        ax.set_ylabel("speedup (cuSPARSE time / tuned time)")
        missing = len(self.rows) - len(pts)
        if missing:
            self.note(ax, [f"{missing} row(s) without a cuSPARSE time not shown"])
        self.save(fig, path)

    def reference_lines(self, ax, g):
        """The 1x line and the geometric mean, as legend entries rather than labels."""
        one = ax.axhline(1.0, color="#444444", linestyle="--", linewidth=1.1, zorder=2,
                         label=f"cuSPARSE (1{TIMES})")
        mean = ax.axhline(g, color="#1f77b4", linestyle=":", linewidth=1.2, zorder=2,
                          label=f"geomean {g:.2f}{TIMES}")
        return one, mean

    @staticmethod
    def pad_log_x(ax, xs):
        lo, hi = min(xs), max(xs)
        ax.set_xlim(lo / 2.0, hi * 3.0)  # room for the names right of the points

    def speedup_vs_variance(self, path):
        fig, ax = self.figure()
        with_speedup = [r for r in self.rows if r["speedup"] and r["speedup"] > 0]
        known = [r for r in with_speedup if r["row_nnz_var"] is not None]
        if not known:
            self.titles(ax, "Speedup against row-length variance")
            self.no_data(ax, "no row has both a row-length variance and a cuSPARSE time")
            return self.save(fig, path)
        positive = [r["row_nnz_var"] for r in known if r["row_nnz_var"] > 0]
        # Log axes cannot show 0: a uniform matrix is drawn at a floor, a decade below the rest.
        floor = 10.0 ** (math.floor(math.log10(min(positive))) - 1) if positive else 0.1
        pts = [(max(r["row_nnz_var"], 0.0) or floor, r["speedup"], r["family"], r["label"])
               for r in known]
        zeros = sum(1 for r in known if r["row_nnz_var"] <= 0)
        g = geomean(p[1] for p in pts)
        self.titles(ax, "Speedup against row-length variance",
                    f"over the best cuSPARSE algorithm; geomean {g:.2f}{TIMES} "
                    f"over {len(pts)} rows")
        ax.set_xscale("log")
        self.ratio_axis(ax, [p[1] for p in pts])
        lines = self.reference_lines(ax, g)
        if zeros:
            ax.axvline(floor, color="#bbbbbb", linewidth=6, alpha=0.4, zorder=1)
            ax.text(floor, 0.98, " variance 0", transform=ax.get_xaxis_transform(),
                    fontsize=8, color="#666666", va="top", ha="left")
        self.scatter_families(ax, [(p[0], p[1], p[2]) for p in pts], extra=lines)
        self.label_points(ax, [(p[0], p[1], p[3]) for p in pts])
        self.pad_log_x(ax, [p[0] for p in pts])
        ax.set_xlabel("variance of nonzeros per row")
        ax.set_ylabel("speedup (cuSPARSE time / tuned time)")
        notes = []
        if zeros:
            notes.append(f"{zeros} row(s) with variance 0 drawn at {floor:g}")
        if len(with_speedup) > len(known):
            notes.append(f"{len(with_speedup) - len(known)} without a variance not shown")
        if len(self.rows) > len(with_speedup):
            notes.append(f"{len(self.rows) - len(with_speedup)} without a cuSPARSE time "
                         "not shown")
        self.note(ax, notes)
        self.save(fig, path)

    def bandwidth_hist(self, path):
        np = self.np
        fig, ax = self.figure()
        known = [r for r in self.rows if r["bandwidth_fraction"] is not None]
        if not known:
            self.titles(ax, "Bandwidth reached, % of peak")
            self.no_data(ax, "no row has a bandwidth fraction (peak bandwidth unknown?)")
            return self.save(fig, path)
        percent = [100.0 * r["bandwidth_fraction"] for r in known]
        top = max(100.0, math.ceil(max(percent) / 10.0) * 10.0)
        step = 5.0 if top <= 200 else top / 40.0
        bins = np.arange(0.0, top + step, step)
        families = sorted({r["family"] for r in known})
        data = [[100.0 * r["bandwidth_fraction"] for r in known if r["family"] == f]
                for f in families]
        ax.hist(data, bins=bins, stacked=True, color=[self.style[f][0] for f in families],
                edgecolor="white", linewidth=0.6, zorder=3)
        mid = median(percent)
        ax.axvline(100.0, color="#444444", linestyle="--", linewidth=1.1, zorder=4)
        ax.text(100.0, 0.98, "measured peak ", transform=ax.get_xaxis_transform(), fontsize=8,
                color="#444444", va="top", ha="right")
        ax.axvline(mid, color="#d62728", linestyle=":", linewidth=1.2, zorder=4)
        ax.text(mid, 0.90, f" median {mid:.0f}%", transform=ax.get_xaxis_transform(),
                fontsize=8, color="#d62728", va="top", ha="left")
        peaks = sorted({r["peak_gbs"] for r in known if r["peak_gbs"]})
        sub = f"{len(known)} rows"
        if len(peaks) == 1:
            sub += f"; peak {peaks[0]:.0f} GB/s"
        elif peaks:
            sub += f"; peaks {peaks[0]:.0f} to {peaks[-1]:.0f} GB/s"
        self.titles(ax, f"Bandwidth reached: median {mid:.0f}% of peak", sub)
        ax.set_xlim(0, top + step)
        ax.set_xlabel("effective bandwidth, % of the device's measured peak")
        ax.set_ylabel("rows")
        ax.yaxis.set_major_locator(self.ticker.MaxNLocator(integer=True))
        self.legend(ax, self.family_patches(families))
        if len(known) < len(self.rows):
            # Top left: the bottom right is where fractions above 100% stack up.
            ax.text(0.01, 0.98, f"{len(self.rows) - len(known)} row(s) without a fraction "
                    "not shown", transform=ax.transAxes, fontsize=8, color="#666666",
                    va="top", ha="left")
        self.save(fig, path)

    def search_time(self, path):
        known = [r for r in self.rows if r["search_s"] is not None or r["wall_s"] is not None]
        known.sort(key=lambda r: (r["nnz"] is None, r["nnz"] or 0, r["label"]))
        n = len(known)
        labelled = n <= 60
        width = min(16.0, max(FIG_SIZE[0], 0.24 * n + 2.5)) if labelled else FIG_SIZE[0]
        fig, ax = self.figure((width, FIG_SIZE[1]))
        if not known:
            self.titles(ax, "Search time per matrix")
            self.no_data(ax, "no row has a search of its own (answered from the database, or no time)")
            return self.save(fig, path)
        xs = list(range(n))
        colours = [self.style[r["family"]][0] for r in known]
        search = [r["search_s"] or 0.0 for r in known]
        wall = [r["wall_s"] or 0.0 for r in known]
        if labelled:
            bar = 0.75 if n > 1 else 0.4
            ax.bar(xs, wall, width=bar, color=colours, alpha=0.35, zorder=2)
            ax.bar(xs, search, width=bar * 0.6, color=colours, zorder=3)
        else:  # too many for bars: points, the whole tune as a grey tick above each
            ax.scatter(xs, wall, marker="_", s=30, color="#999999", zorder=2)
            ax.scatter(xs, search, s=14, c=colours, zorder=3, edgecolors="none")
        sub = f"{duration(sum(search))} of search in all; median {median(search):.1f} s"
        if n < len(self.rows):
            sub += (f"; {len(self.rows) - n} row(s) with no search of their own not shown"
                    " (answered from the database, or a budget that left no time)")
        self.titles(ax, "Search time per matrix, by nnz", sub)
        top = max(max(search), max(wall))
        positive = [v for v in search + wall if v > 0]
        if positive and top / min(positive) > 100:
            ax.set_yscale("log")
        if labelled:
            ax.set_xticks(xs)
            ax.set_xticklabels([plain(r["label"], 26) for r in known], rotation=50, ha="right",
                               rotation_mode="anchor", fontsize=8)
            ax.set_xlabel("matrix (by nnz)")
        else:
            ax.set_xticks([])
            ax.set_xlabel(f"{n} matrices, by nnz")
        ax.grid(axis="x", visible=False)
        ax.set_xlim(-0.6, n - 0.4)
        ax.set_ylabel("seconds")
        patches = self.patches
        handles = self.family_patches({r["family"] for r in known})
        if labelled:
            handles += [patches.Patch(color="#555555", label="search"),
                        patches.Patch(color="#555555", alpha=0.35, label="whole tune")]
        else:
            line = self.plt.Line2D
            handles += [line([], [], linestyle="", marker="o", color="#555555", label="search"),
                        line([], [], linestyle="", marker="_", color="#999999",
                             label="whole tune")]
        self.legend(ax, handles)
        self.save(fig, path)

    def format_wins(self, path):
        wins = Counter(r["structure"] or "(unknown)" for r in self.rows)
        order = [s for s, _ in sorted(wins.items(), key=lambda kv: (-kv[1], kv[0]))]
        if len(order) > 24:  # the rest in one bar
            rest = set(order[23:])
            order = order[:23] + [f"{len(rest)} others"]
        else:
            rest = set()
        height = max(FIG_SIZE[1], 0.32 * len(order) + 1.6)
        fig, ax = self.figure((FIG_SIZE[0], height))
        if not order:
            self.titles(ax, "Winning structures")
            self.no_data(ax, "no rows in matrices.csv")
            return self.save(fig, path)

        def bucket(r):
            s = r["structure"] or "(unknown)"
            return order[-1] if s in rest else s

        families = sorted({r["family"] for r in self.rows})
        ys = list(range(len(order)))[::-1]  # most wins on top
        left = [0] * len(order)
        for f in families:
            counts = Counter(bucket(r) for r in self.rows if r["family"] == f)
            widths = [counts.get(s, 0) for s in order]
            ax.barh(ys, widths, left=left, color=self.style[f][0], height=0.65,
                    edgecolor="white", linewidth=0.6, zorder=3)
            left = [a + b for a, b in zip(left, widths)]
        for y, total in zip(ys, left):
            ax.text(total, y, f" {total}", va="center", ha="left", fontsize=9, color="#333333")
        ax.set_yticks(ys)
        ax.set_yticklabels([plain(s, 24) for s in order], fontsize=9, family="monospace")
        ax.grid(axis="y", visible=False)
        ax.set_xlim(0, max(left) * 1.12 + 0.5)
        ax.xaxis.set_major_locator(self.ticker.MaxNLocator(integer=True))
        ax.set_xlabel("wins (rows of matrices.csv)")
        grown = sum(v for s, v in wins.items() if s.startswith("grown:"))
        self.titles(ax, "Winning structures",
                    f"{len(self.rows)} rows, {len(wins)} structures; grown graphs won {grown}")
        self.legend(ax, self.family_patches(families))
        self.save(fig, path)

    def predicted_vs_measured(self, path):
        np = self.np
        fig, ax = self.figure((FIG_SIZE[0], FIG_SIZE[1]))
        preds = self.predictions
        pts = [(p["predicted_us"], p["measured_us"], p["family"] or "(none)")
               for p in preds or []
               if p["predicted_us"] and p["predicted_us"] > 0
               and p["measured_us"] and p["measured_us"] > 0]
        if not pts:
            self.titles(ax, "Cost model: predicted against measured time")
            why = ("predictions.csv is missing" if preds is None else
                   "no predictions (no measured candidate had a cost-model prediction)")
            self.no_data(ax, why)
            return self.save(fig, path)
        pred = np.array([p[0] for p in pts])
        meas = np.array([p[1] for p in pts])
        err = float(np.exp(np.median(np.abs(np.log(pred / meas)))))
        within2 = float(np.mean(np.abs(np.log2(pred / meas)) <= 1.0)) * 100.0
        sub = (f"{len(pts)} candidates; median error {err:.2f}{TIMES}; "
               f"{within2:.0f}% within 2{TIMES}")
        rho = rank_correlation(np, pred, meas)
        if rho is not None:
            sub += f"; rank correlation {rho:.2f}"
        self.titles(ax, "Cost model: predicted against measured time", sub)
        ax.set_xscale("log")
        ax.set_yscale("log")
        lo = min(pred.min(), meas.min()) / 1.5
        hi = max(pred.max(), meas.max()) * 1.5
        line = np.array([lo, hi])
        exact, = ax.plot(line, line, color="#444444", linewidth=1.1, zorder=2, label="exact")
        off, = ax.plot(line, line * 2, color="#888888", linewidth=0.9, linestyle=":", zorder=2,
                       label=f"2{TIMES} off")
        ax.plot(line, line / 2, color="#888888", linewidth=0.9, linestyle=":", zorder=2)
        ax.set_xlim(lo, hi)
        ax.set_ylim(lo, hi)
        ax.set_aspect("equal", adjustable="box")
        self.scatter_families(ax, pts, size=30 if len(pts) < 300 else 10, extra=(exact, off))
        # 1-2-5 ticks over a few decades, decades only over more.
        subs = (1.0, 2.0, 5.0) if hi / lo <= 10 ** 2.5 else (1.0,)
        for axis in (ax.xaxis, ax.yaxis):
            axis.set_major_locator(self.ticker.LogLocator(base=10, subs=subs))
            axis.set_major_formatter(self.ticker.FuncFormatter(
                lambda v, _: f"{v:,.0f}" if v >= 1 else f"{v:g}"))
            axis.set_minor_locator(self.ticker.NullLocator())
        ax.set_xlabel(f"predicted time ({MICRO}s)")
        ax.set_ylabel(f"measured time ({MICRO}s)")
        self.save(fig, path)


def si(v):
    """1000 -> 1k, 2e6 -> 2M: tick labels for counts."""
    for scale, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(v) >= scale:
            return f"{v / scale:g}{suffix}"
    return f"{v:g}"


def rank_correlation(np, a, b):
    """Spearman's rho with tied values given their mean rank; None when undefined."""
    if len(a) < 3:
        return None

    def ranks(v):
        order = np.argsort(v, kind="mergesort")
        r = np.empty(len(v))
        r[order] = np.arange(len(v), dtype=float)
        for value in np.unique(v):  # ties share their mean rank
            same = v == value
            if same.sum() > 1:
                r[same] = r[same].mean()
        return r

    ra, rb = ranks(a), ranks(b)
    if ra.std() == 0 or rb.std() == 0:
        return None
    return float(np.corrcoef(ra, rb)[0, 1])


def png_size(path):
    with open(path, "rb") as f:
        head = f.read(24)
    return struct.unpack(">II", head[16:24])


# ---------------------------------------------------------------- the page

def esc(value):
    return html.escape("" if value is None else str(value), quote=True)


def fmt_int(v):
    return "" if v is None else f"{v:,}"


def fmt_us(v):
    if v is None:
        return ""
    if v < 1:
        return f"{v:.3f}"
    if v < 100:
        return f"{v:.2f}"
    if v < 10000:
        return f"{v:.1f}"
    return f"{v:,.0f}"


def fmt_float(v, digits):
    return "" if v is None else f"{v:.{digits}f}"


CSS = """
:root { --fg:#1f2328; --muted:#59636e; --line:#d1d9e0; --bg:#ffffff; --panel:#f6f8fa;
        --good:#116329; --good-bg:#dafbe1; --bad:#a40e26; --bad-bg:#ffebe9; --accent:#0969da; }
* { box-sizing: border-box; }
body { margin: 0; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", "DejaVu Sans", sans-serif;
       color: var(--fg); background: var(--bg); }
main { max-width: 1480px; margin: 0 auto; padding: 24px 28px 40px; }
header h1 { margin: 0 0 4px; font-size: 26px; letter-spacing: -0.01em; }
header h1 span { color: var(--muted); font-weight: 400; }
.meta { color: var(--muted); margin: 0 0 18px; }
.meta code { font-size: 13px; background: var(--panel); padding: 1px 5px; border-radius: 4px; }
.cards { display: grid; grid-template-columns: repeat(auto-fit, minmax(190px, 1fr)); gap: 12px;
         margin: 0 0 26px; }
.card { border: 1px solid var(--line); border-radius: 10px; padding: 12px 16px;
        background: var(--panel); }
.card .v { font-size: 26px; font-weight: 650; font-variant-numeric: tabular-nums; }
.card .k { color: var(--muted); font-size: 12.5px; }
.card.good .v { color: var(--good); } .card.bad .v { color: var(--bad); }
h2 { font-size: 19px; margin: 30px 0 12px; padding-bottom: 6px;
     border-bottom: 1px solid var(--line); }
.plots { display: grid; grid-template-columns: repeat(auto-fit, minmax(520px, 1fr)); gap: 18px; }
figure { margin: 0; border: 1px solid var(--line); border-radius: 10px; padding: 12px;
         background: #fff; }
figure.wide { grid-column: 1 / -1; }
figure img { display: block; max-width: 100%; height: auto; margin: 0 auto; }
figcaption { color: var(--muted); font-size: 13px; margin-top: 8px; }
figcaption b { color: var(--fg); }
.tools { display: flex; gap: 14px; align-items: center; flex-wrap: wrap; margin: 0 0 10px; }
.tools input { font: inherit; padding: 5px 9px; border: 1px solid var(--line); border-radius: 6px;
               min-width: 340px; }
.tools .count { color: var(--muted); }
a { color: var(--accent); }
.scroll { overflow-x: auto; border: 1px solid var(--line); border-radius: 10px; }
table { border-collapse: collapse; width: 100%; font-size: 12.5px; }
th, td { padding: 6px 8px; border-bottom: 1px solid var(--line); text-align: left;
         vertical-align: top; }
thead th { position: sticky; top: 0; background: var(--panel); z-index: 1; vertical-align: bottom; }
th button { all: unset; cursor: pointer; font-weight: 600; }
th button:focus-visible { outline: 2px solid var(--accent); outline-offset: 2px; }
th button::after { content: "\\00a0\\2195"; color: #b0b8c1; font-weight: 400; }
th[aria-sort=ascending] button::after { content: "\\00a0\\2191"; color: var(--accent); }
th[aria-sort=descending] button::after { content: "\\00a0\\2193"; color: var(--accent); }
th.num, td.num { text-align: right; font-variant-numeric: tabular-nums; }
td.num, td.op { white-space: nowrap; }
tbody tr:nth-child(even) { background: #fbfcfd; }
tbody tr:hover { background: #eef4ff; }
td.name { font-weight: 600; min-width: 9.5em; overflow-wrap: anywhere; }
td .alg { color: var(--muted); font-size: 11.5px; }
td.speedup span { display: inline-block; min-width: 4.2em; padding: 1px 7px; border-radius: 10px;
                  font-weight: 650; text-align: right; }
td.good span { color: var(--good); background: var(--good-bg); }
td.bad span { color: var(--bad); background: var(--bad-bg); }
td.mono { font-family: ui-monospace, "DejaVu Sans Mono", monospace; font-size: 12px; }
td.winner { max-width: 32em; min-width: 14em; cursor: pointer; }
td.winner div { display: -webkit-box; -webkit-line-clamp: 2; -webkit-box-orient: vertical;
                overflow: hidden; overflow-wrap: anywhere; }
td.winner.open div { display: block; }
.empty { color: var(--muted); padding: 18px; text-align: center; }
footer { color: var(--muted); font-size: 12px; margin-top: 28px; }
#selfcheck { display: inline; font-size: 11px; color: #8c959f; margin: 0; }
"""

JS = r"""
(function () {
  var table = document.getElementById('matrices');
  var body = table.tBodies[0];
  var heads = table.tHead.rows[0].cells;
  var collator = new Intl.Collator(undefined, {numeric: true, sensitivity: 'base'});

  // The sort key of a cell: data-v when given (numbers), else its text; null sorts last.
  function key(cell, numeric) {
    var v = cell.hasAttribute('data-v') ? cell.getAttribute('data-v') : cell.textContent.trim();
    if (v === '') return null;
    return numeric ? parseFloat(v) : v;
  }

  function sortBy(col) {
    var th = heads[col];
    var numeric = th.classList.contains('num');
    var dir = th.getAttribute('aria-sort') === 'ascending' ? -1 : 1;
    for (var i = 0; i < heads.length; i++) heads[i].removeAttribute('aria-sort');
    th.setAttribute('aria-sort', dir === 1 ? 'ascending' : 'descending');
    var rows = Array.prototype.slice.call(body.rows);
    rows.forEach(function (r, i) { r._at = i; });
    rows.sort(function (a, b) {
      var x = key(a.cells[col], numeric), y = key(b.cells[col], numeric);
      if (x === null || y === null) {
        if (x === y) return a._at - b._at;
        return x === null ? 1 : -1;  // unknown values last in both directions
      }
      var c = numeric ? x - y : collator.compare(x, y);
      return c !== 0 ? dir * c : a._at - b._at;
    });
    rows.forEach(function (r) { body.appendChild(r); });
  }

  Array.prototype.forEach.call(heads, function (th, col) {
    th.querySelector('button').addEventListener('click', function () { sortBy(col); });
  });

  body.addEventListener('click', function (e) {
    var cell = e.target.closest('td.winner');
    if (cell) cell.classList.toggle('open');
  });

  var filter = document.getElementById('filter');
  var shown = document.getElementById('shown');
  function applyFilter() {
    var words = filter.value.toLowerCase().split(/\s+/).filter(Boolean);
    var n = 0;
    Array.prototype.forEach.call(body.rows, function (r) {
      var text = r.textContent.toLowerCase();
      var hit = words.every(function (w) { return text.indexOf(w) >= 0; });
      r.hidden = !hit;
      if (hit) n++;
    });
    shown.textContent = n + ' of ' + body.rows.length + ' rows';
  }
  filter.addEventListener('input', applyFilter);
  applyFilter();

  // What scripts/check-report.sh reads back from the rendered page.
  window.addEventListener('load', function () {
    var ok = 0, bad = 0;
    Array.prototype.forEach.call(document.images, function (img) {
      if (img.complete && img.naturalWidth > 0) ok++; else bad++;
    });
    document.getElementById('selfcheck').textContent =
      'images-ok=' + ok + ' images-bad=' + bad + ' rows=' + body.rows.length +
      ' height=' + document.documentElement.scrollHeight;
  });
})();
"""


def table_columns(rows):
    """(header, css class, numeric, cell function) per column; cells give (data-v, html)."""
    def text(column):
        return lambda r: (None, esc(r[column]))

    def number(column, fmt):
        return lambda r: (r[column], esc(fmt(r[column])))

    def name(r):
        title = f"fingerprint {r['fingerprint']}" if r["fingerprint"] else ""
        return None, f'<span title="{esc(title)}">{esc(r["name"])}</span>'

    def cusparse(r):
        if r["cusparse_us"] is None:
            return None, ""
        alg = f'<br><span class="alg">{esc(r["cusparse_alg"])}</span>' if r["cusparse_alg"] else ""
        return r["cusparse_us"], esc(fmt_us(r["cusparse_us"])) + alg

    def speedup(r):
        s = r["speedup"]
        return s, "" if s is None else f"<span>{s:.2f}{TIMES}</span>"

    def winner(r):
        return None, f'<div title="{esc(r["winner"])}">{esc(r["winner"])}</div>'

    def bandwidth(r):
        f = r["bandwidth_fraction"]
        return f, "" if f is None else esc(f"{100.0 * f:.1f}%")

    def candidates(r):
        c = r["candidates"]
        extra = []
        if r["structures"] is not None:
            extra.append(f"{r['structures']} structures")
        if r["failures"]:
            extra.append(f"{r['failures']} failed")
        title = ", ".join(extra)
        return c, f'<span title="{esc(title)}">{esc(fmt_int(c))}</span>'

    def op(r):
        return None, esc(" ".join(v for v in (r["op"], r["dtype"]) if v))

    columns = [("Name", "name", False, name), ("Family", "", False, text("family")),
               ("Op", "op", False, op)]
    if len({r["device"] for r in rows}) > 1:
        columns.append(("Device", "", False, text("device")))
    # The long winner comes last, so a narrow window still shows every number.
    columns += [
        ("Rows", "num", True, number("rows", fmt_int)),
        ("Cols", "num", True, number("cols", fmt_int)),
        ("nnz", "num", True, number("nnz", fmt_int)),
        (f"Tuned {MICRO}s", "num", True, number("tuned_us", fmt_us)),
        (f"cuSPARSE {MICRO}s", "num", True, cusparse),
        ("Speedup", "num speedup", True, speedup),
        ("Bandwidth % of peak", "num", True, bandwidth),
        ("Search s", "num", True, number("search_s", lambda v: fmt_float(v, 1))),
        ("Candidates", "num", True, candidates),
        ("Structure", "mono", False, text("structure")),
        ("Winner", "mono winner", False, winner),
    ]
    return columns


def render_table(rows):
    columns = table_columns(rows)
    head = "".join(
        f'<th class="{cls.split()[0] if cls else ""}" scope="col">'
        f'<button type="button">{esc(title)}</button></th>'
        for title, cls, numeric, _ in columns)
    body = []
    for r in rows:
        cells = []
        for _, cls, numeric, cell in columns:
            value, content = cell(r)
            classes = cls
            if "speedup" in cls and value is not None:
                classes += " good" if value >= 1 else " bad"
            data = ""
            if numeric:
                data = f' data-v="{"" if value is None else repr(float(value))}"'
            cells.append(f'<td class="{classes}"{data}>{content}</td>')
        body.append("<tr>" + "".join(cells) + "</tr>")
    empty = "" if rows else '<p class="empty">No rows: the database holds no tuned matrix.</p>'
    return (f'<div class="scroll"><table id="matrices"><thead><tr>{head}</tr></thead>\n'
            f'<tbody>\n' + "\n".join(body) + f'\n</tbody></table>{empty}</div>')


def render_page(rows, predictions, summary, images, directory):
    devices = summary.get("devices")
    if not isinstance(devices, list) or not devices:
        devices = sorted({r["device"] for r in rows if r["device"]})
    speedups = [r["speedup"] for r in rows if r["speedup"] and r["speedup"] > 0]
    # From the rows, as the plots are; summary.json's value only when the rows have none.
    g = geomean(speedups)
    if g is None:
        g = summary.get("geomean_speedup")
        if not isinstance(g, (int, float)) or isinstance(g, bool) or g <= 0:
            g = None
    wins = sum(s >= 1 for s in speedups)
    matrices = len({r["fingerprint"] or r["name"] for r in rows})
    bandwidths = [r["bandwidth_fraction"] for r in rows if r["bandwidth_fraction"] is not None]
    search = sum(r["search_s"] or 0.0 for r in rows)

    def card(value, label, cls=""):
        return (f'<div class="card {cls}"><div class="v">{esc(value)}</div>'
                f'<div class="k">{esc(label)}</div></div>')

    cards = [
        card(f"{g:.2f}{TIMES}" if g else "n/a", "geomean speedup over the best cuSPARSE",
             "" if g is None else ("good" if g >= 1 else "bad")),
        card(f"{wins} / {len(speedups)}", "rows faster than cuSPARSE"),
        card(f"{matrices}", f"matrices ({len(rows)} rows: matrix, op, dtype, device)"),
        card(f"{100.0 * median(bandwidths):.0f}%" if bandwidths else "n/a",
             "median bandwidth, % of peak"),
        card(duration(search), "search time in all"),
    ]

    meta = []
    if summary.get("database"):
        meta.append(f"database <code>{esc(summary['database'])}</code>")
    if devices:
        meta.append("on " + ", ".join(esc(d) for d in devices))
    if summary.get("generated_at"):
        meta.append(f"generated {esc(str(summary['generated_at']).replace('T', ' '))}")
    if summary.get("tool_version"):
        meta.append(f"sparsetune {esc(summary['tool_version'])}")
    downloads = ['<a href="matrices.csv" download>matrices.csv</a>']
    if predictions is not None:
        downloads.append('<a href="predictions.csv" download>predictions.csv</a>')
    if os.path.exists(os.path.join(directory, "summary.json")):
        downloads.append('<a href="summary.json">summary.json</a>')
    meta.append("data: " + ", ".join(downloads))

    figures = []
    for (file, title, caption), (width, height) in zip(PLOTS, images):
        wide = ' class="wide"' if width > 1100 else ""
        figures.append(
            f'<figure{wide}><a href="{esc(file)}"><img src="{esc(file)}" alt="{esc(title)}" '
            f'width="{width}" height="{height}"></a>'
            f'<figcaption><b>{esc(title)}.</b> {esc(caption)}</figcaption></figure>')

    title = "sparsetune report"
    if summary.get("database"):
        title += " \u2014 " + os.path.basename(str(summary["database"]))
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{esc(title)}</title>
<style>{CSS}</style>
</head>
<body>
<main>
<header>
<h1>sparsetune report <span>tuned kernels against cuSPARSE</span></h1>
<p class="meta">{" &middot; ".join(meta)}</p>
</header>
<section class="cards">
{chr(10).join(cards)}
</section>
<h2>Plots</h2>
<section class="plots">
{chr(10).join(figures)}
</section>
<h2>Matrices</h2>
<div class="tools"><input id="filter" type="search" aria-label="Filter rows"
 placeholder="Filter rows (name, family, structure...)"><span class="count" id="shown"></span>
<span class="count">Click a column header to sort; click a winner to see all of it.</span></div>
{render_table(rows)}
<footer>Times in {MICRO}s; speedup = cuSPARSE time / tuned time; bandwidth = effective GB/s of
the winner / the device's measured peak.
Page check: <pre id="selfcheck">images-ok=? (the page's script has not run)</pre></footer>
</main>
<script>{JS}</script>
</body>
</html>
"""


# ---------------------------------------------------------------- main

def main(argv):
    if len(argv) != 2 or argv[1] in ("-h", "--help"):
        fail("usage: render.py DIR (a folder holding matrices.csv)", 2)
    directory = argv[1]
    if not os.path.isdir(directory):
        fail(f"{directory}: no such folder", 2)
    try:
        rows = read_csv(os.path.join(directory, "matrices.csv"), MATRIX_COLUMNS, MATRIX_TYPES,
                        required=True)
        predictions = read_csv(os.path.join(directory, "predictions.csv"), PREDICTION_COLUMNS,
                               PREDICTION_TYPES, required=False)
    except InputError as e:
        fail(str(e), 2)
    summary = read_summary(os.path.join(directory, "summary.json"))
    complete(rows)

    plotter = Plotter(rows, predictions)
    # Everything is drawn under temporary names first and renamed at the end, so a failure
    # leaves no half-written file (and the previous outputs, if any, whole).
    written = []
    try:
        images = []
        for file, _, _ in PLOTS:
            tmp = os.path.join(directory, f".{file}.tmp")
            written.append((tmp, os.path.join(directory, file)))
            getattr(plotter, file[:-len(".png")])(tmp)
            images.append(png_size(tmp))
        tmp = os.path.join(directory, ".index.html.tmp")
        written.append((tmp, os.path.join(directory, "index.html")))
        with open(tmp, "w", encoding="utf-8", newline="\n") as f:
            f.write(render_page(rows, predictions, summary, images, directory))
        for tmp, final in written:
            os.replace(tmp, final)
    except BaseException:
        for tmp, _ in written:
            try:
                os.remove(tmp)
            except OSError:
                pass
        raise
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
