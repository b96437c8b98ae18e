#!/usr/bin/env python3
# bench/bccoo_cpu_summary.py — tables of `bench/reproduce bccoo-cpu`: time per format and thread
# count, speedup over spmat csr at the same thread count, scaling from 1 to 2 threads (or, with
# more thread counts, a scaling table: one column per thread count); with --threads N, the
# compact table of docs/formats/bcoo.md at N threads.
# SPDX-License-Identifier: MIT
#
#   python3 bench/bccoo_cpu_summary.py DIR [--threads N] [--csv PATH]
#     (reads DIR/spmat_t*.json and DIR/eigen_t*.jsonl; --csv also writes every row as CSV)
import argparse
import csv
import glob
import json
import os
import re
import sys


def main():
    ap = argparse.ArgumentParser(description="bccoo / bcoo / csr / Eigen CPU tables")
    ap.add_argument("dir")
    ap.add_argument("--threads", type=int, help="compact table at this thread count")
    ap.add_argument("--csv", help="also write every (matrix, format, threads) row here")
    args = ap.parse_args()
    d = args.dir
    t_ms, nnz = {}, {}  # (matrix, format, threads) -> median ms
    for f in glob.glob(os.path.join(d, "spmat_t*.json")):
        threads = int(re.search(r"_t(\d+)\.json$", f).group(1))
        for r in json.load(open(f))["results"]:
            if r["op"] == "spmv" and r.get("completed") and r.get("correct"):
                m = r["matrix"]["name"]
                nnz[m] = r["matrix"]["nnz"]
                t_ms[(m, r["format"], threads)] = r["time_ms"]
    for f in glob.glob(os.path.join(d, "eigen_t*.jsonl")):
        for line in open(f):
            if line.strip():
                r = json.loads(line)
                if r.get("correct"):
                    nnz[r["matrix"]["name"]] = r["matrix"]["nnz"]
                    t_ms[(r["matrix"]["name"], "eigen-csr", r["threads"])] = r["time_ms"]
    if not t_ms:
        print("no results in", d, file=sys.stderr)
        return 2
    mats = sorted(nnz, key=lambda m: -nnz[m])
    fmts = [f for f in ("bccoo", "bcoo", "csr", "eigen-csr") if any(k[1] == f for k in t_ms)]
    threads = sorted({k[2] for k in t_ms})
    rows = []
    for m in mats:
        for f in fmts:
            for t in threads:
                if (m, f, t) not in t_ms:
                    continue
                ms = t_ms[(m, f, t)]
                csr = t_ms.get((m, "csr", t))
                one = t_ms.get((m, f, 1))
                rows.append({"matrix": m, "nnz": nnz[m], "format": f, "threads": t,
                             "time_ms": ms, "gflops": 2 * nnz[m] / (ms * 1e6),
                             "speedup_vs_csr": csr / ms if csr else "",
                             "scaling_vs_1_thread": one / ms if one else ""})
    if args.csv:
        with open(args.csv, "w", newline="") as fh:
            w = csv.DictWriter(fh, fieldnames=list(rows[0].keys()))
            w.writeheader()
            w.writerows(rows)
    if args.threads:
        return compact_table(mats, nnz, fmts, args.threads, t_ms)
    if len(threads) > 2:
        return scaling_table(mats, nnz, fmts, threads, t_ms)
    head = ["matrix", "nnz"] + [f"{f} {t}t" for f in fmts for t in threads]
    head += [f"bccoo/csr {t}t" for t in threads] + [f"{f} 2t/1t" for f in fmts]
    print("| " + " | ".join(head) + " |\n|" + "---|" * len(head))
    for m in mats:
        c = [m, f"{nnz[m]:,}"]
        c += [f"{t_ms[(m, f, t)]:.3f}" if (m, f, t) in t_ms else "-" for f in fmts for t in threads]
        for t in threads:
            a, b = t_ms.get((m, "csr", t)), t_ms.get((m, "bccoo", t))
            c.append(f"{a / b:.2f}x" if a and b else "-")
        for f in fmts:
            a, b = t_ms.get((m, f, 1)), t_ms.get((m, f, 2))
            c.append(f"{a / b:.2f}x" if a and b else "-")
        print("| " + " | ".join(c) + " |")
    print("\ntimes in ms (median); bccoo/csr > 1 means bccoo is faster")
    return 0


def compact_table(mats, nnz, fmts, n, t_ms):
    """One row per matrix: csr at 1 thread, every format at n threads, bcoo and bccoo against csr."""
    cols = [f for f in ("csr", "bcoo", "bccoo", "eigen-csr") if any((m, f, n) in t_ms for m in mats)]
    head = ["matrix", "nnz", "csr 1t"] + [f"{f} {n}t" for f in cols]
    head += [f"{f}/csr {n}t" for f in ("bcoo", "bccoo") if f in cols]
    print("| " + " | ".join(head) + " |\n|" + "---|" * 2 + "---:|" * (len(head) - 2))
    ms = lambda x: f"{x:.3f}" if x < 1 else (f"{x:.2f}" if x < 100 else f"{x:.1f}")
    for m in mats:
        c = [m, f"{nnz[m]:,}", ms(t_ms[(m, "csr", 1)]) if (m, "csr", 1) in t_ms else "-"]
        c += [ms(t_ms[(m, f, n)]) if (m, f, n) in t_ms else "-" for f in cols]
        for f in ("bcoo", "bccoo"):
            if f in cols:
                a, b = t_ms.get((m, "csr", n)), t_ms.get((m, f, n))
                c.append(f"{a / b:.2f}x" if a and b else "-")
        print("| " + " | ".join(c) + " |")
    print(f"\ntimes in ms (median); X/csr > 1 means X is faster than csr at {n} threads")
    return 0


def scaling_table(mats, nnz, fmts, threads, t_ms):
    """More than two thread counts (a many-core scaling run): one row per matrix and format,
    one column per thread count, then the scaling from 1 thread to the most; and one row per
    matrix with bccoo's speedup over csr at each thread count."""
    head = ["matrix", "format"] + [f"{t}t ms" for t in threads] + [f"{threads[-1]}t/1t"]
    print("| " + " | ".join(head) + " |\n|" + "---|" * len(head))
    for m in mats:
        for f in fmts:
            c = [m, f]
            c += [f"{t_ms[(m, f, t)]:.3f}" if (m, f, t) in t_ms else "-" for t in threads]
            a, b = t_ms.get((m, f, threads[0])), t_ms.get((m, f, threads[-1]))
            c.append(f"{a / b:.1f}x" if a and b else "-")
            print("| " + " | ".join(c) + " |")
        c = [m, "**bccoo/csr**"]
        for t in threads:
            a, b = t_ms.get((m, "csr", t)), t_ms.get((m, "bccoo", t))
            c.append(f"**{a / b:.2f}x**" if a and b else "-")
        print("| " + " | ".join(c + [""]) + " |")
    print("\ntimes in ms (median); bccoo/csr > 1 means bccoo is faster")
    return 0


if __name__ == "__main__":
    sys.exit(main())
