#!/usr/bin/env python3
# bench/plot.py — charts from `spmat bench --json` results: speedup vs cuSPARSE and bandwidth fraction.
# SPDX-License-Identifier: MIT
"""Reads one or more result JSON files written by `spmat bench` and writes PNG charts:

  speedup_<op>_<precision>.png   speedup vs the fastest cuSPARSE format, per matrix and format
                                 (grouped bars, a line at 1.0); skipped when no result has one
  bw_<op>_<precision>.png        bw_fraction (CSR-floor bytes / time / device copy bandwidth),
                                 per matrix and format (grouped bars, a line at 100 %)

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


def grouped_bars(ax, matrices, series, values):
    """values[(series, matrix)] -> float; draws one bar group per matrix."""
    n = max(len(series), 1)
    width = 0.8 / n
    x = np.arange(len(matrices))
    cmap = plt.get_cmap("tab20")
    for i, s in enumerate(series):
        ys = [values.get((s, m), np.nan) for m in matrices]
        ax.bar(x - 0.4 + width * (i + 0.5), ys, width, label=s, color=cmap(i % 20))
    ax.set_xticks(x)
    ax.set_xticklabels(matrices, rotation=30, ha="right", fontsize=8)


def chart(rows, field, scale, title, ylabel, ref_line, path, several_devices):
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
    fig, ax = plt.subplots(figsize=(max(6.0, 1.2 + 0.35 * len(matrices) * max(len(series), 1) / 2), 4.5))
    grouped_bars(ax, matrices, series, values)
    ax.axhline(ref_line, color="black", linewidth=1, linestyle="--")
    ax.set_title(title)
    ax.set_ylabel(ylabel)
    ax.grid(axis="y", alpha=0.3)
    ax.legend(fontsize=7, ncol=2 if len(series) > 8 else 1, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    fig.tight_layout()
    fig.savefig(path, dpi=120)
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
        if chart(rs, "speedup_vs_cusparse", 1.0, "Speedup vs cuSPARSE: %s, %s" % (op, prec),
                 "speedup (fastest cuSPARSE median / median)", 1.0, os.path.join(args.out, name), several):
            written.append(name)
        name = "bw_%s_%s.png" % (op, prec)
        if chart(rs, "bw_fraction", 100.0, "Bandwidth fraction: %s, %s" % (op, prec),
                 "% of device copy bandwidth (CSR-floor bytes)", 100.0, os.path.join(args.out, name), several):
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
