#!/usr/bin/env python3
# bench/planner_fit.py — fits the planner's GPU time model to a calibration sweep.
# SPDX-License-Identifier: MIT
"""Fits, per format, operation and structural class, the two constants of the planner's model
(spmat/plan/model.cpp): the fixed cost of a call on matrices that stay in L2 (a high quantile
over those) and the share of the DRAM bandwidth reached in CSR-floor bytes on matrices past
25 MB (a low quantile over those): a format whose speed varies within a class is ranked by its
slower cases. Matrices past 25 MB whose rows are not skewed and hold LONG_ROW_MEAN nonzeros or
more on average give a separate efficiency, whatever their class (the model's long_eff). Prints the rows of the kGpu table and how the fitted model would choose
on the sweep itself (a check of the fit, not of held-out matrices).

The statistics come from `spmat plan MATRIX --json` (same code as the planner), cached in
--stats. Matrices are found by the names in the JSON (files: --matrix-dir).

usage: python3 bench/planner_fit.py calibration.json [more.json] --spmat build/release/spmat
           --matrix-dir data --stats stats.json [--bandwidth 3352]
"""
import argparse
import glob
import json
import math
import os
import subprocess
from collections import defaultdict

CLASSES = ["stencil", "regular", "irregular", "skewed"]
PADDING = {"ellr": "ell_fill", "ell": "ell_fill", "sell": "slice_fill"}
SMALL_BYTES = 25e6
LONG_ROW_MEAN = 64.0  # plan_model's kLongRowMean
L2_SPEEDUP = 2.5
SPMV = ["csr", "csr-vector", "bro-csr", "ellr", "sell", "hyb", "bccoo-gpu", "bro-hyb", "bro-coo", "cusparse-csr",
        "cusparse-csr-alg2", "cusparse-coo"]
SPMV_T = ["csc", "csr", "bccoo-gpu", "coo", "hyb", "ellr", "gcsb-det", "cusparse-csr",
          "cusparse-csr-alg2", "cusparse-coo"]


def classify(s):  # the same rule as plan_model::classify
    if s["heavy_share"] >= 0.1 or s["long_share"] > 0:
        return "skewed"
    if s["shifted_rows"] >= 0.5:
        return "stencil"
    if s["col_spread"] >= 0.05 and s["sectors_per_nnz"] > 0.5:
        return "irregular"
    return "regular"


def long_rows(s, small):  # the same rule as plan_model's long_rows
    return not small and classify(s) != "skewed" and s["mean_row"] >= LONG_ROW_MEAN


def floor_bytes(s, vb, ib=4):
    return s["nnz"] * (vb + ib) + (s["rows"] + 1) * ib + (s["rows"] + s["cols"]) * vb


def quantile(v, q):
    v = sorted(v)
    return v[min(len(v) - 1, int(q * len(v)))] if v else None


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("json", nargs="+")
    ap.add_argument("--spmat", default="build/release/spmat")
    ap.add_argument("--matrix-dir", default="data")
    ap.add_argument("--stats", default="planner_stats.json")
    ap.add_argument("--bandwidth", type=float, default=3352.0, help="GB/s (H100 SXM nominal)")
    ap.add_argument("--verbose", action="store_true", help="print the matrices the fit misjudges")
    ap.add_argument("--cross-validate", action="store_true",
                    help="also choose for each matrix with a model fitted without it")
    ap.add_argument("--launch-quantile", type=float, default=0.75,
                    help="quantile of the fixed costs per class: above 0.5 a format whose speed "
                         "varies within a class ranks lower")
    ap.add_argument("--efficiency-quantile", type=float, default=0.5,
                    help="quantile of the efficiencies per class (below 0.5: pessimistic)")
    a = ap.parse_args()
    bw = a.bandwidth * 1e9

    times = defaultdict(dict)
    for p in a.json:
        for r in json.load(open(p))["results"]:
            if r.get("completed") and r.get("correct"):
                times[(r["matrix"]["name"], r["op"], r["precision"])][r["format"]] = r["time_ms"] * 1e-3
    stats = json.load(open(a.stats)) if os.path.exists(a.stats) else {}
    for name in sorted({k[0] for k in times}):
        if name in stats:
            continue
        spec = name
        if not name.startswith("gen:") and not os.path.exists(name):
            base = os.path.basename(name)
            hits = [h for pat in (base, base + ".mtx.gz", base + ".mtx")
                    for h in glob.glob(os.path.join(a.matrix_dir, "**", pat), recursive=True)]
            if not hits:
                print("planner_fit: %s not found, skipped" % name)
                continue
            spec = hits[0]
        out = subprocess.run([a.spmat, "plan", spec, "--json", "--backend", "cpu", "--ops", "spmv"],
                             capture_output=True, text=True, check=True).stdout
        stats[name] = json.loads(out)["stats"]
        json.dump(stats, open(a.stats, "w"), indent=1)

    for op, formats in (("spmv", SPMV), ("spmv_t", SPMV_T)):
        launch, eff, evidence = fit(times, stats, op, formats, bw, a, exclude=None)
        print("\n// %s; calibration matrices per class (in L2 / past it): %s" % (op, ", ".join(
            "%s %d/%d" % (c, evidence.get((c, True), 0), evidence.get((c, False), 0)) for c in CLASSES)))
        for f in formats:
            if not any((f, c) in eff or (f, c) in launch for c in CLASSES):
                continue
            print('    {"%s", Op::%s, {%s}, {%s}, %.2f},' % (
                f, op, ", ".join("%.1f" % (launch[(f, c)] * 1e6) for c in CLASSES),
                ", ".join("%.2f" % eff.get((f, c), 0) for c in CLASSES), eff.get((f, "long"), 0)))
        for prec in ("fp64", "fp32"):
            report(op, prec, "fitted choice", choose_all(times, stats, op, prec, formats, bw,
                                                         lambda m: (launch, eff, evidence)), a.verbose)
            if a.cross_validate:
                # Each matrix chosen for by a model fitted without it: an estimate of how the
                # planner does on matrices it has not seen.
                models = {}

                def held_out(m):
                    if m not in models:
                        models[m] = fit(times, stats, op, formats, bw, a, exclude=m)
                    return models[m]
                report(op, prec, "left out of the fit", choose_all(times, stats, op, prec, formats, bw,
                                                                    held_out), a.verbose)


def margin(n):
    """How much faster than cuSPARSE another format must be predicted when its figures for a
    class rest on n calibration matrices: a class seen on one or two matrices says little about
    the next one."""
    return 0.0 if n >= 3 else (0.15 if n == 2 else 0.3)


def fit(times, stats, op, formats, bw, a, exclude):
    """Per (format, class): the fixed cost while in L2 and the efficiency past it, and per
    (class, regime) the number of matrices behind them."""
    launch, eff, seen = {}, {}, defaultdict(set)
    for (m, o, p), v in times.items():
        if o == op and m in stats and m != exclude:
            vb = 8 if p == "fp64" else 4
            small = floor_bytes(stats[m], vb) < SMALL_BYTES
            seen[("long" if long_rows(stats[m], small) else classify(stats[m]), small)].add(m)
    evidence = {k: len(v) for k, v in seen.items()}
    for f in formats:
        longs = []
        for (m, o, p), v in times.items():
            if o == op and f in v and m in stats and m != exclude:
                b = floor_bytes(stats[m], 8 if p == "fp64" else 4)
                if long_rows(stats[m], b < SMALL_BYTES):
                    longs.append((b / stats[m][PADDING[f]] if f in PADDING else b, v[f]))
        if longs:
            eff[(f, "long")] = quantile([b / bw / t for b, t in longs], a.efficiency_quantile)
        for c in CLASSES:
            small, large = [], []
            for (m, o, p), v in times.items():
                if o != op or f not in v or m not in stats or m == exclude or classify(stats[m]) != c:
                    continue
                s = stats[m]
                vb = 8 if p == "fp64" else 4
                b = floor_bytes(s, vb)
                if long_rows(s, b < SMALL_BYTES):
                    continue  # fitted apart above
                padded = b / s[PADDING[f]] if f in PADDING else b
                (small if b < SMALL_BYTES else large).append((padded, v[f]))
            if large:
                eff[(f, c)] = quantile([b / bw / t for b, t in large], a.efficiency_quantile)
            if small:
                launch[(f, c)] = quantile([t - b / (bw * L2_SPEEDUP) for b, t in small], a.launch_quantile)
        for c in CLASSES:  # gaps: the regular class's fixed cost; the smaller efficiency
            if (f, c) not in launch:
                l = [launch[(f, x)] for x in CLASSES if (f, x) in launch]
                launch[(f, c)] = launch.get((f, "regular"), max(l) if l else 20e-6)
        if (f, "regular") not in eff:
            e = [eff[(f, x)] for x in ("stencil", "irregular") if (f, x) in eff]
            if e:
                eff[(f, "regular")] = min(e)
        if (f, "stencil") not in eff and (f, "regular") in eff:
            eff[(f, "stencil")] = eff[(f, "regular")]
    return launch, eff, evidence


def predict(model, f, s, vb, bw):
    launch, eff, evidence = model
    c = classify(s)
    e = eff.get((f, c), 0)
    if e <= 0 or (f in PADDING and c == "skewed"):
        return None
    b = floor_bytes(s, vb)
    padded = b / s[PADDING[f]] if f in PADDING else b
    small = b < SMALL_BYTES
    regime = c
    if long_rows(s, small) and eff.get((f, "long"), 0) > 0:
        e, regime = eff[(f, "long")], "long"
    t = (launch[(f, c)] if small else 0) + padded / (bw * (L2_SPEEDUP if small else 1) * e)
    if not f.startswith("cusparse"):
        t *= 1 + margin(evidence.get((regime, small), 0))
    return t


def choose_all(times, stats, op, prec, formats, bw, model_for):
    """(matrix, chosen format, its speedup over cuSPARSE, the best format's speedup)."""
    got = []
    for (m, o, p), v in sorted(times.items()):
        if o != op or p != prec or m not in stats:
            continue
        vb = 8 if p == "fp64" else 4
        model = model_for(m)
        pred = {f: predict(model, f, stats[m], vb, bw) for f in formats if f in v}
        pred = {f: x for f, x in pred.items() if x}
        vendor = [x for f, x in v.items() if f.startswith("cusparse")]
        if not pred or not vendor:
            continue
        ch = min(pred, key=pred.get)
        got.append((os.path.basename(m), ch, min(vendor) / v[ch], min(vendor) / min(v.values())))
    return got


def report(op, prec, label, got, verbose):
    if not got:
        return
    if verbose:
        for m, ch, got_x, best_x in got:
            if got_x < 0.95 * best_x:
                print("//   %-24s %-16s %.2fx (best %.2fx)" % (m[:24], ch, got_x, best_x))
    gm = math.exp(sum(math.log(x[2]) for x in got) / len(got))
    om = math.exp(sum(math.log(x[3]) for x in got) / len(got))
    print("// %s %s, %s: %.3fx of cuSPARSE (geo-mean), worst %.2fx; best per matrix %.3fx"
          % (op, prec, label, gm, min(x[2] for x in got), om))


if __name__ == "__main__":
    main()
