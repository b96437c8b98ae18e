#!/usr/bin/env python3
# bench/hisparse_summary.py — the measured table of docs/formats/hisparse.md from the JSON of
# `bench/reproduce hisparse`: DIR/spmv.json (SpMV, SpMVᵀ), DIR/add_t.json (A + Aᵀ) and
# DIR/add_a.json (A + A), hisparse against cuSPARSE CSR, per matrix and precision, with the
# geometric means. hisparse's A + Aᵀ flips its transposed flag (add_b=t_flag); cuSPARSE's runs
# csr2csc inside the timed add (add_b=t_flag, the table's comparison) or adds a CSR transposed in
# setup (add_b=t, the "pre-T" line). Prints Markdown; every number comes from the files.
# SPDX-License-Identifier: MIT
#
#   python3 bench/hisparse_summary.py DIR
import json
import math
import os
import sys


def load(path):
    t = {}
    if not os.path.exists(path):
        return t, None
    doc = json.load(open(path))
    for r in doc["results"]:
        if r.get("completed") and r.get("correct"):
            t[(r["matrix"]["name"], r["precision"], r["op"], r["format"], r.get("options") or "")] = r
    return t, doc["device"]["name"]


def gmean(v):
    return math.exp(sum(map(math.log, v)) / len(v)) if v else float("nan")


def main(argv):
    if len(argv) != 1:
        print("usage: hisparse_summary.py DIR", file=sys.stderr)
        return 2
    d = argv[0]
    s, dev = load(os.path.join(d, "spmv.json"))
    at, _ = load(os.path.join(d, "add_t.json"))
    aa, _ = load(os.path.join(d, "add_a.json"))
    if not s and not at:
        print("no results in", d, file=sys.stderr)
        return 2
    precs = sorted({k[1] for k in list(s) + list(at)})
    mats = list(dict.fromkeys(k[0] for k in list(s) + list(at)))
    print(f"{dev}; ms = median; × = cuSPARSE time / hisparse time (> 1: hisparse faster)\n")
    print("| matrix | precision | bytes / CSR | SpMV hisparse / cuSPARSE | × | SpMVᵀ hisparse / "
          "cuSPARSE op T | × | A + Aᵀ hisparse / cuSPARSE csr2csc + csrgeam2 | × | "
          "A + A hisparse / cuSPARSE | × |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    sp = {p: {"n": [], "t": [], "at": [], "pre": [], "aa": []} for p in precs}
    for p in precs:
        for m in mats:
            cells = [m, p]
            h, c = s.get((m, p, "spmv", "hisparse", "")), s.get((m, p, "spmv", "cusparse-csr", ""))
            cells.append(f"{h['storage_bytes'] / c['storage_bytes']:.2f}" if h and c else "")
            pairs = [(s.get((m, p, "spmv", "hisparse", "")), s.get((m, p, "spmv", "cusparse-csr", "")), "n"),
                     (s.get((m, p, "spmv_t", "hisparse", "")), s.get((m, p, "spmv_t", "cusparse-csr", "")), "t"),
                     (at.get((m, p, "add", "hisparse", "add_b=t_flag")),
                      at.get((m, p, "add", "cusparse-csr", "add_b=t_flag")), "at"),
                     (aa.get((m, p, "add", "hisparse", "add_b=a")),
                      aa.get((m, p, "add", "cusparse-csr", "add_b=a")), "aa")]
            if not any(a and b for a, b, _ in pairs):
                continue
            for a, b, key in pairs:
                if a and b:
                    x = b["time_ms"] / a["time_ms"]
                    sp[p][key].append(x)
                    cells += [f"{a['time_ms']:.4f} / {b['time_ms']:.4f}", f"{x:.2f}×"]
                else:
                    cells += ["", ""]
            pre = at.get((m, p, "add", "cusparse-csr", "add_b=t"))
            if pre and pairs[2][0]:
                sp[p]["pre"].append(pre["time_ms"] / pairs[2][0]["time_ms"])
            print("| " + " | ".join(cells) + " |")
    print()
    for p in precs:
        g = {k: gmean(v) for k, v in sp[p].items()}
        print(f"- {p} geometric means: SpMV {g['n']:.2f}× ({len(sp[p]['n'])} matrices), SpMVᵀ "
              f"{g['t']:.2f}×, A + Aᵀ {g['at']:.2f}× ({len(sp[p]['at'])} matrices; against "
              f"csrgeam2 on a CSR transposed in setup: {g['pre']:.2f}×), A + A {g['aa']:.2f}×")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
