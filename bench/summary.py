#!/usr/bin/env python3
# bench/summary.py — "what is fastest for my matrices": the planned format against a baseline.
# SPDX-License-Identifier: MIT
"""Reads `spmat bench` JSON and prints, per operation and precision, each matrix's planned
format (`auto`, `tune`) and its time against the baseline: the fastest cuSPARSE format of the
same run on the GPU, spmat's own `csr` on the CPU. Ends with the geometric mean and the worst
matrix. Writes summary_<planner>.json and, when matplotlib is present,
summary_<planner>_<op>_<precision>.png.

usage: python3 bench/summary.py bench.json [--planner auto|tune] [--out DIR] [--markdown]
"""
import argparse
import json
import math
import os
import sys
from collections import defaultdict


def short(name):
    base = os.path.basename(name)
    for ext in (".mtx.gz", ".mtx", ".smc"):
        if base.endswith(ext):
            return base[: -len(ext)]
    return base


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("json", nargs="+")
    ap.add_argument("--planner", default="auto", help="auto or tune (default auto)")
    ap.add_argument("--out", default=None, help="folder for summary.json and charts")
    ap.add_argument("--markdown", action="store_true",
                    help="print one Markdown table (a row per matrix, a column per operation and precision)")
    a = ap.parse_args()

    rows, device, backend = [], "", ""
    for p in a.json:
        with open(p) as f:
            d = json.load(f)
        device = device or d.get("device", {}).get("name", "")
        backend = backend or d.get("backend", "")
        rows += [r for r in d["results"] if r.get("completed") and r.get("correct")]
    gpu = any(r["format"].startswith("cusparse") for r in rows)
    baseline_name = "fastest cuSPARSE" if gpu else "spmat csr"

    by_case = defaultdict(dict)
    for r in rows:
        key = (r["op"], r["precision"], r["matrix"]["name"])
        by_case[key][r["format"]] = r
    table = defaultdict(list)
    for (op, prec, m), fmts in sorted(by_case.items()):
        me = fmts.get(a.planner)
        if not me:
            continue
        if gpu:
            base = [r for f, r in fmts.items() if f.startswith("cusparse")]
        else:
            base = [fmts["csr"]] if "csr" in fmts else []
        if not base:
            continue
        b = min(base, key=lambda r: r["time_ms"])
        row = {
            "matrix": short(m), "nnz": me["matrix"]["nnz"], "planned": me.get("planned", ""),
            "time_ms": me["time_ms"], "baseline": b["format"], "baseline_ms": b["time_ms"],
            "speedup": b["time_ms"] / me["time_ms"], "plan_ms": me.get("plan_ms"),
            "setup_ms": me.get("setup_ms"),
        }
        # With a full sweep in the same run: the fastest spmat format chosen afterwards (every
        # format but the planners and the vendor library, default options).
        own = [r for f, r in fmts.items()
               if f not in ("auto", "tune") and not f.startswith("cusparse") and not r.get("options")]
        if len(own) > 1:
            best = min(own, key=lambda r: r["time_ms"])
            row.update({"best_format": best["format"], "best_format_ms": best["time_ms"],
                        "vs_best_format": best["time_ms"] / me["time_ms"]})
        table[(op, prec)].append(row)
    if not table:
        sys.exit("summary: no %s results with a baseline in %s" % (a.planner, ", ".join(a.json)))

    if a.markdown:
        cols = sorted(table)
        cells = defaultdict(dict)
        nnz = {}
        for col in cols:
            for x in table[col]:
                cells[x["matrix"]][col] = x
                nnz[x["matrix"]] = x["nnz"]
        print("| matrix | nnz | " + " | ".join("%s %s: planned | x" % c for c in cols) + " |")
        print("|---|---:|" + "---|---:|" * len(cols))
        for m in sorted(cells, key=lambda m: nnz[m]):
            row = []
            for col in cols:
                x = cells[m].get(col)
                row += [x["planned"], "%.2f" % x["speedup"]] if x else ["-", "-"]
            print("| %s | %d | %s |" % (m, nnz[m], " | ".join(row)))
        gms = []
        for col in cols:
            sp = [x["speedup"] for x in table[col]]
            gms += ["", "**%.2f** (worst %.2f)" % (math.exp(sum(map(math.log, sp)) / len(sp)), min(sp))]
        print("| geometric mean | | %s |" % " | ".join(gms))
        return

    out = {"device": device, "planner": a.planner, "baseline": baseline_name, "tables": []}
    for (op, prec), t in sorted(table.items()):
        sp = [x["speedup"] for x in t]
        gm = math.exp(sum(math.log(x) for x in sp) / len(sp))
        worst = min(t, key=lambda x: x["speedup"])
        print("\n%s %s on %s: %s against the %s" % (op, prec, device, a.planner, baseline_name))
        print("%-28s %10s  %-22s %10s %10s  %-18s %7s" % ("matrix", "nnz", "planned", "ms", "base ms", "baseline", "x"))
        for x in t:
            flag = "" if x["speedup"] >= 0.95 else "  (slower)"
            print("%-28s %10d  %-22s %10.4f %10.4f  %-18s %6.2fx%s" % (
                x["matrix"][:28], x["nnz"], x["planned"][:22], x["time_ms"], x["baseline_ms"],
                x["baseline"][:18], x["speedup"], flag))
        print("geometric mean %.2fx over %d matrices; worst %.2fx (%s)" % (gm, len(t), worst["speedup"], worst["matrix"]))
        entry = {"op": op, "precision": prec, "geomean": gm, "worst": worst["speedup"],
                 "worst_matrix": worst["matrix"], "rows": t}
        vs = [x for x in t if "vs_best_format" in x]
        if vs:
            within = sum(1 for x in vs if x["vs_best_format"] >= 1 / 1.05)
            print("within 5%% of the fastest spmat format (chosen afterwards) on %d of %d matrices" % (within, len(vs)))
            for x in vs:
                if x["vs_best_format"] < 1 / 1.05:
                    print("  %-28s %s %.4f ms, fastest %s %.4f ms" % (
                        x["matrix"][:28], a.planner, x["time_ms"], x["best_format"], x["best_format_ms"]))
            entry.update({"within_5pct_of_best_format": within, "with_best_format": len(vs)})
        out["tables"].append(entry)
    if a.out:
        os.makedirs(a.out, exist_ok=True)
        with open(os.path.join(a.out, "summary_%s.json" % a.planner), "w") as f:
            json.dump(out, f, indent=1)
        try:
            import matplotlib
            matplotlib.use("Agg")
            import matplotlib.pyplot as plt
        except ImportError:
            print("summary: matplotlib missing, no charts")
            return
        for tb in out["tables"]:
            t = tb["rows"]
            fig, ax = plt.subplots(figsize=(max(6, 0.32 * len(t)), 4))
            colors = ["tab:green" if x["speedup"] >= 1 else "tab:red" for x in t]
            ax.bar(range(len(t)), [x["speedup"] for x in t], color=colors)
            ax.axhline(1.0, color="black", lw=0.8)
            ax.set_xticks(range(len(t)))
            ax.set_xticklabels([x["matrix"] for x in t], rotation=75, fontsize=7)
            ax.set_ylabel("speedup vs %s" % baseline_name)
            ax.set_title("%s %s %s on %s: geo-mean %.2fx" % (a.planner, tb["op"], tb["precision"], device, tb["geomean"]))
            fig.tight_layout()
            fig.savefig(os.path.join(a.out, "summary_%s_%s_%s.png" % (a.planner, tb["op"], tb["precision"])), dpi=110)
            plt.close(fig)


if __name__ == "__main__":
    main()
