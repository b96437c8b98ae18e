#!/usr/bin/env python3
# bench/plot.py — charts from `spmat bench --json` results: speedup vs cuSPARSE and bandwidth fraction.
# SPDX-License-Identifier: MIT
"""Reads one or more result JSON files written by `spmat bench` and writes PNG charts:

  speedup_<op>_<precision>.png   speedup vs the fastest cuSPARSE format, per matrix and format
                                 (heatmap: formats x matrices); skipped when no result has one
  bw_<op>_<precision>.png        bw_fraction (CSR-floor bytes / time / device copy bandwidth),
                                 per matrix and format (heatmap, coloured around 50 %)

usage: python3 bench/plot.py results.json [more.json ...] --out DIR

With files from several devices, each series is labelled "format @ device".
"""
import argparse
import json
import os
import sys
from collections import OrderedDict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402


def op_label(r):
    op = r["op"]
    if op == "spmm":
        op += "_k%d_%s" % (r.get("k", 0), r.get("layout", "row"))
    return op


def load(paths):
    """All completed results, each tagged with its file's device name."""
    rows = []
    devices = []
    for path in paths:
        with open(path) as f:
            doc = json.load(f)
        device = doc.get("device", {}).get("name", "unknown")
        devices.append(device)
        for r in doc.get("results", []):
            if not r.get("completed"):
                continue
            r = dict(r)
            r["_device"] = device
            rows.append(r)
    return rows, len(set(devices)) > 1


def heatmap(ax, matrices, series, values, ref_line, fmt):
    """values[(series, matrix)] -> float; one cell per (format, matrix), coloured around ref_line
    (red below, blue above; grey where the format did not run). Readable with 20+ formats."""
    grid = np.full((len(series), len(matrices)), np.nan)
    for i, s in enumerate(series):
        for j, m in enumerate(matrices):
            grid[i, j] = values.get((s, m), np.nan)
    finite = grid[np.isfinite(grid)]
    # Colour saturates at 2x either way, so that a few collapses do not wash out the rest.
    spread = 1.0
    cmap = plt.get_cmap("RdBu").copy()
    cmap.set_bad("#dddddd")
    shown = np.ma.masked_invalid(np.log2(np.where(grid > 0, grid, np.nan) / ref_line))
    ax.imshow(shown, cmap=cmap, vmin=-spread, vmax=spread, aspect="auto")
    for i in range(len(series)):
        for j in range(len(matrices)):
            v = grid[i, j]
            ax.text(j, i, fmt % v if np.isfinite(v) else "-", ha="center", va="center", fontsize=7)
    ax.set_xticks(np.arange(len(matrices)))
    ax.set_xticklabels(matrices, rotation=30, ha="right", fontsize=8)
    ax.set_yticks(np.arange(len(series)))
    ax.set_yticklabels(series, fontsize=8)


def chart(rows, field, scale, title, ref_line, fmt, path, several_devices):
    values = OrderedDict()
    matrices, series = [], []
    for r in rows:
        v = r.get(field)
        if v is None:
            continue
        m = r["matrix"]["name"]
        s = r["format"] + ("[%s]" % r["options"] if r.get("options") else "")
        if several_devices:
            s += " @ " + r["_device"]
        if m not in matrices:
            matrices.append(m)
        if s not in series:
            series.append(s)
        values[(s, m)] = v * scale
    if not values:
        return False
    fig, ax = plt.subplots(figsize=(2.0 + 0.9 * len(matrices), 1.5 + 0.28 * len(series)))
    heatmap(ax, matrices, series, values, ref_line, fmt)
    ax.set_title(title, fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("results", nargs="+", help="JSON files written by spmat bench --json")
    p.add_argument("--out", required=True, help="output folder for the PNG charts")
    args = p.parse_args(argv)

    rows, several = load(args.results)
    os.makedirs(args.out, exist_ok=True)
    groups = OrderedDict()
    for r in rows:
        groups.setdefault((op_label(r), r["precision"]), []).append(r)
    written = []
    for (op, prec), rs in groups.items():
        name = "speedup_%s_%s.png" % (op, prec)
        if chart(rs, "speedup_vs_cusparse", 1.0,
                 "Speedup vs fastest cuSPARSE (>1: faster; blue): %s, %s" % (op, prec),
                 1.0, "%.2f", os.path.join(args.out, name), several):
            written.append(name)
        name = "bw_%s_%s.png" % (op, prec)
        if chart(rs, "bw_fraction", 100.0,
                 "%% of copy bandwidth, CSR-floor bytes / time: %s, %s" % (op, prec),
                 50.0, "%.0f", os.path.join(args.out, name), several):
            written.append(name)
    if not any(n.startswith("speedup_") for n in written):
        print("plot.py: no result has speedup_vs_cusparse (no cusparse-* format ran): speedup charts skipped",
              file=sys.stderr)
    for n in written:
        print(os.path.join(args.out, n))
    if not written:
        print("plot.py: no completed results to plot", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
