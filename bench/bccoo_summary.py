#!/usr/bin/env python3
# bench/bccoo_summary.py — the bccoo-gpu table of docs/formats/bccoo.md from the JSON files of
# `bench/reproduce bccoo-gpu` (schema: bench/README.md), and the geometric-mean speedup over the
# fastest cuSPARSE SpMV with the worst case, over the matrices with >= 1M rows.
# SPDX-License-Identifier: MIT
#
#   python3 bench/bccoo_summary.py DIR_OR_JSON... [--precision fp64] [--min-rows 1000000]
#                                  [--unweighted] [--compact]
# --compact prints the page's table: bccoo-gpu with its default options, spmat csr, cuSPARSE.
#
# Exit status 0, or 2 when there is no data.
import argparse
import glob
import json
import math
import os
import sys


def load(paths):
    results, devices = [], set()
    for p in paths:
        files = sorted(glob.glob(os.path.join(p, "*.json"))) if os.path.isdir(p) else [p]
        for f in files:
            with open(f) as fh:
                d = json.load(fh)
            if "results" not in d:
                continue
            devices.add(d.get("device", {}).get("name", "?"))
            results += d["results"]
    return results, devices


def label(r):
    return r["format"] + (":" + r["options"] if r.get("options") else "")


def main():
    ap = argparse.ArgumentParser(description="bccoo-gpu table and geometric-mean speedup")
    ap.add_argument("paths", nargs="+")
    ap.add_argument("--precision", default="fp64")
    ap.add_argument("--min-rows", type=int, default=1_000_000)
    ap.add_argument("--unweighted", action="store_true",
                    help="replace each generated graph by its values=ones twin where one was run "
                         "(graphs stored as patterns, as SuiteSparse stores them)")
    ap.add_argument("--compact", action="store_true",
                    help="only bccoo-gpu with its default options, spmat csr and cuSPARSE")
    args = ap.parse_args()
    results, devices = load(args.paths)
    # best (median) time per (matrix, variant) among completed, correct spmv results
    best, rows, nnz, bytes_ = {}, {}, {}, {}
    for r in results:
        if r.get("op") != "spmv" or r.get("precision") != args.precision:
            continue
        if not r.get("completed") or not r.get("correct") or r.get("time_ms") is None:
            continue
        m = r["matrix"]["name"]
        rows[m], nnz[m] = r["matrix"]["rows"], r["matrix"]["nnz"]
        key = (m, label(r))
        if key not in best or r["time_ms"] < best[key]:
            best[key] = r["time_ms"]
            bytes_[key] = r.get("storage_bytes")
    ones = ":values=ones"
    names = {m for m, _ in best}
    if args.unweighted:
        names = {m for m in names if m.endswith(ones) or m + ones not in names}
    else:
        names = {m for m in names if not m.endswith(ones)}
    mats = sorted(names, key=lambda m: (-rows[m], m))
    if not mats:
        print("no completed spmv results for", args.precision, file=sys.stderr)
        return 2
    variants = sorted({v for _, v in best if v.startswith("bccoo-gpu")})
    others = [v for v in ("csr", "coo", "bcoo") if any((m, v) in best for m in mats)]
    if args.compact:
        variants = [v for v in variants if v == "bccoo-gpu"]
        others = [v for v in others if v == "csr"]

    def cus(m):
        c = [(t, v) for (mm, v), t in best.items() if mm == m and v.startswith("cusparse-")]
        return min(c) if c else (None, None)

    print(f"# bccoo-gpu SpMV, {args.precision}, device: {', '.join(sorted(devices))}; times in ms "
          "(median); speedup = fastest cuSPARSE / time\n")
    head = ["matrix", "rows", "nnz", "B/nnz bccoo-gpu", "fastest cuSPARSE"]
    head += variants + [f"speedup {v}" for v in variants] + others
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for m in mats:
        tc, vc = cus(m)
        b = bytes_.get((m, "bccoo-gpu"))
        cells = [m, f"{rows[m]:,}", f"{nnz[m]:,}", f"{b / nnz[m]:.2f}" if b and nnz[m] else "-",
                 f"{tc:.4f} ({vc.removeprefix('cusparse-')})" if tc else "-"]
        cells += [f"{best[(m, v)]:.4f}" if (m, v) in best else "-" for v in variants]
        cells += [f"{tc / best[(m, v)]:.2f}x" if tc and (m, v) in best else "-" for v in variants]
        cells += [f"{best[(m, v)]:.4f}" if (m, v) in best else "-" for v in others]
        print("| " + " | ".join(cells) + " |")

    print(f"\n## Speedup over the fastest cuSPARSE SpMV, matrices with >= {args.min_rows:,} rows\n")
    suite = [m for m in mats if rows[m] >= args.min_rows and cus(m)[0]]
    for v in variants:
        sp = {}
        for m in suite:
            tc, _ = cus(m)
            if (m, v) in best:
                sp[m] = tc / best[(m, v)]
        if not sp:
            print(f"{v}: no matrices")
            continue
        if len(sp) < len(suite):  # a mean over part of the suite would mislead
            print(f"{v}: measured on {len(sp)} of the {len(suite)} matrices "
                  f"(missing: {', '.join(sorted(set(suite) - set(sp)))}): no mean")
            continue
        geo = math.exp(sum(math.log(s) for s in sp.values()) / len(sp))
        worst_m = min(sp, key=sp.get)
        print(f"{v}: geomean speedup {geo:.3f}x over {len(sp)} matrices "
              f"({', '.join(sorted(sp))}); worst {sp[worst_m]:.3f}x on {worst_m}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
