#!/usr/bin/env python3
"""bench/tiled_model_eval.py — join the measured tiled/cuSPARSE SpMM times of bench/tiled_bench.sh
with the model's predictions (spmat model --json) and print the issue-8 tables:

  * speedup of each tiled variant over cuSPARSE's fastest SpMM (per precision, layout, K):
    geometric mean and the number of matrices where the variant is slower;
  * model accuracy of the row-wise kernel: |predicted - measured| / measured, the fraction
    within 25 %, and the fraction of cases bracketed by the optimistic and all-miss bounds;
  * a predicted-vs-measured plot (matplotlib), bounds as error bars.

usage: python3 bench/tiled_model_eval.py DIR [--plot PATH] [--markdown PATH]
DIR holds bench/*.json (spmat bench) and model/*.json (spmat model), as tiled_bench.sh writes.
"""
import argparse
import glob
import json
import math
import os
import sys
from collections import defaultdict

# bench variant -> the name of the matching row-wise variant in the model JSON
MODEL_NAME = {"plain": "baseline", "balanced": "segmented", "reordered": "baseline+reorder"}


def variant_of(fmt, options):
    if fmt.startswith("cusparse"):
        return "cusparse"
    if fmt != "tiled":
        return None
    opts = dict(kv.split("=", 1) for kv in options.split(",") if "=" in kv) if options else {}
    if opts.get("kernel") == "sell":
        return "sell"
    v, r = opts.get("variant", "auto"), opts.get("reorder", "auto")
    if v == "auto" and r == "auto":
        return "model"
    if v == "segmented" and r == "off":
        return "balanced"
    if v == "baseline" and r == "on":
        return "reordered"
    if v == "baseline" and r == "off":
        return "plain"
    return "other"


def load_measured(d):
    """{(matrix, precision, layout, k): {variant: time_ms}} (cusparse = fastest of its formats)."""
    out = defaultdict(dict)
    for path in sorted(glob.glob(os.path.join(d, "bench", "*.json"))):
        with open(path) as f:
            doc = json.load(f)
        for r in doc.get("results", []):
            if r.get("op") != "spmm" or not r.get("completed") or not r.get("correct", True):
                continue
            v = variant_of(r["format"], r.get("options", ""))
            if v is None:
                continue
            key = (r["matrix"]["name"], r["precision"], r.get("layout", "row"), int(r["k"]))
            t = float(r["time_ms"])
            if v not in out[key] or t < out[key][v]:
                out[key][v] = t
    return out


def load_model(d):
    out = {}
    for path in sorted(glob.glob(os.path.join(d, "model", "*.json"))):
        with open(path) as f:
            m = json.load(f)
        out[(m["matrix"]["name"], m["precision"], m["layout"], int(m["k"]))] = m
    return out


def geomean(xs):
    xs = [x for x in xs if x > 0]
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")


def speedup_table(meas):
    lines = ["| precision | layout | K | variant | matrices | geo-mean speedup vs cuSPARSE | slower than cuSPARSE |",
             "|---|---|---|---|---|---|---|"]
    groups = defaultdict(lambda: defaultdict(list))
    for (mat, prec, lay, k), vs in meas.items():
        if "cusparse" not in vs:
            continue
        for v, t in vs.items():
            if v != "cusparse":
                groups[(prec, lay, k)][v].append(vs["cusparse"] / t)
    for (prec, lay, k) in sorted(groups):
        for v in ("model", "plain", "balanced", "reordered", "sell", "other"):
            s = groups[(prec, lay, k)].get(v)
            if s:
                lines.append("| %s | %s | %d | %s | %d | %.2fx | %d |" % (prec, lay, k, v, len(s), geomean(s),
                                                                         sum(1 for x in s if x < 1)))
    return lines if len(lines) > 2 else ["(no cuSPARSE measurements: speedup table empty)"]


def accuracy(meas, model):
    """Rows: (matrix, prec, layout, k, variant, measured, predicted, optimistic, all_miss)."""
    rows = []
    for key, vs in sorted(meas.items()):
        m = model.get(key)
        if not m:
            continue
        by_name = {v["name"]: v for v in m["rows_variants"]}
        for v, t in vs.items():
            name = m["chosen"] if v == "model" else MODEL_NAME.get(v)
            if name not in by_name:
                continue
            p = by_name[name]
            rows.append(key + (v, t, p["predicted"]["time_ms"], p["optimistic"]["time_ms"], p["all_miss"]["time_ms"]))
    return rows


def accuracy_table(rows):
    if not rows:
        return ["(no case has both a measurement and a prediction)"]
    lines = ["| precision | layout | variant | cases | median error | within 25% | bracketed |",
             "|---|---|---|---|---|---|---|"]
    groups = defaultdict(list)
    for r in rows:
        groups[(r[1], r[2], r[4])].append(r)
        groups[("all", "all", "all")].append(r)
    for g in sorted(groups):
        rs = groups[g]
        errs = sorted(abs(r[6] - r[5]) / r[5] for r in rs)
        within = sum(1 for e in errs if e <= 0.25) / len(rs)
        bracket = sum(1 for r in rs if r[7] <= r[5] <= r[8]) / len(rs)
        lines.append("| %s | %s | %s | %d | %.0f%% | %.0f%% | %.0f%% |" % (g[0], g[1], g[2], len(rs),
                                                                         100 * errs[len(errs) // 2],
                                                                         100 * within, 100 * bracket))
    return lines


def plot(rows, path):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib missing: no plot (pip install -r bench/requirements.txt)", file=sys.stderr)
        return
    fig, ax = plt.subplots(figsize=(6.5, 6))
    colors = {"model": "C0", "plain": "C1", "balanced": "C2", "reordered": "C3"}
    for v in colors:
        rs = [r for r in rows if r[4] == v]
        if not rs:
            continue
        x = [r[5] for r in rs]
        y = [r[6] for r in rs]
        lo = [max(0.0, r[6] - r[7]) for r in rs]
        hi = [max(0.0, r[8] - r[6]) for r in rs]
        ax.errorbar(x, y, yerr=[lo, hi], fmt="o", ms=3, color=colors[v], alpha=0.7, elinewidth=0.6, label=v)
    if rows:
        lo = min(min(r[5], r[7]) for r in rows) * 0.8
        hi = max(max(r[5], r[8]) for r in rows) * 1.25
        ax.plot([lo, hi], [lo, hi], "k-", lw=0.8)
        ax.fill_between([lo, hi], [lo * 0.75, hi * 0.75], [lo * 1.25, hi * 1.25], color="k", alpha=0.08,
                        label="±25%")
        ax.set_xlim(lo, hi)
        ax.set_ylim(lo, hi)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("measured time (ms)")
    ax.set_ylabel("predicted time (ms); bars: optimistic .. all-miss")
    ax.set_title("tiled SpMM (row-wise kernel): model vs measurement")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=130)
    print("wrote %s" % path, file=sys.stderr)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("dir")
    ap.add_argument("--plot", default=None, help="PNG path (default DIR/tiled_pred_vs_meas.png)")
    ap.add_argument("--markdown", default=None, help="also write the tables to this file")
    a = ap.parse_args(argv)
    meas, model = load_measured(a.dir), load_model(a.dir)
    if not meas:
        print("no spmm measurements under %s/bench" % a.dir, file=sys.stderr)
        return 1
    rows = accuracy(meas, model)
    out = ["## Speedup over cuSPARSE's fastest SpMM", ""] + speedup_table(meas)
    out += ["", "## Model accuracy (row-wise kernel)", ""] + accuracy_table(rows)
    out += ["", "## Per case", "", "| matrix | precision | layout | K | variant | measured ms | predicted ms | optimistic | all-miss |",
            "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        out.append("| %s | %s | %s | %d | %s | %.4f | %.4f | %.4f | %.4f |" % r)
    text = "\n".join(out)
    print(text)
    if a.markdown:
        with open(a.markdown, "w") as f:
            f.write(text + "\n")
    plot(rows, a.plot or os.path.join(a.dir, "tiled_pred_vs_meas.png"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
