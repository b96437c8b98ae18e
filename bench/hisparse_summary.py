#!/usr/bin/env python3
# bench/hisparse_summary.py — the done criteria of issue 7 from hisparse_bench.sh's JSON files:
# storage vs CSR, SpMVᵀ vs cuSPARSE op=T (geometric mean), A + Aᵀ vs cuSPARSE with and without
# the transpose, per precision. Prints Markdown.   Usage: hisparse_summary.py FILE.json...
# SPDX-License-Identifier: MIT
import json, math, sys
from collections import defaultdict

rows = []
for path in sys.argv[1:]:
    with open(path) as f:
        for r in json.load(f)["results"]:
            r["_file"] = path
            rows.append(r)

def key(r):
    m = r["matrix"]["name"] if isinstance(r["matrix"], dict) else r["matrix"]
    return m

def mode(r):
    o = r.get("options") or ""
    for kv in o.split(","):
        if kv.startswith("add_b="):
            return kv[6:]
    return "t"

t = defaultdict(dict)  # (precision, matrix) -> {label: result}
for r in rows:
    if not r.get("completed") or not r.get("correct"):
        continue
    label = r["format"] + ":" + r["op"] + (":" + mode(r) if r["op"] == "add" else "")
    if "build=gpu" in (r.get("options") or ""):
        label += ":buildgpu"  # hisparse_spmv_buildgpu.json: construction on the GPU
    t[(r["precision"], key(r))][label] = r

def gmean(v):
    v = [x for x in v if x and x > 0]
    return math.exp(sum(map(math.log, v)) / len(v)) if v else float("nan")

for prec in ("fp32", "fp64"):
    mats = sorted(m for (p, m) in t if p == prec)
    if not mats:
        continue
    print(f"\n### {prec}\n")
    print("| matrix | hisparse B / CSR B | spmv ms (hisparse / cuSPARSE N) | spmv_t ms (hisparse / cuSPARSE T) | "
          "setup ms hisparse (build=cpu / gpu) | A+A cuSPARSE / hisparse | A+Aᵀ cuSPARSE pre-T / hisparse | "
          "A+Aᵀ cuSPARSE incl. csr2csc | A+Aᵀ hisparse (flag) |")
    print("|---|---|---|---|---|---|---|---|---|")
    sp_t, sp_n, st = [], [], []
    for m in mats:
        d = t[(prec, m)]
        g = lambda l, f="time_ms": d[l][f] if l in d else float("nan")
        hs_b, csr_b = g("hisparse:spmv", "storage_bytes"), g("csr:spmv", "storage_bytes")
        ratio = hs_b / csr_b if csr_b == csr_b and csr_b else float("nan")
        st.append(ratio)
        n_h, n_c = g("hisparse:spmv"), g("cusparse-csr:spmv")
        t_h, t_c = g("hisparse:spmv_t"), g("cusparse-csr:spmv_t")
        if n_h == n_h and n_c == n_c: sp_n.append(n_c / n_h)
        if t_h == t_h and t_c == t_c: sp_t.append(t_c / t_h)
        print(f"| {m} | {ratio:.3f} | {n_h:.4f} / {n_c:.4f} | {t_h:.4f} / {t_c:.4f} | "
              f"{g('hisparse:spmv','setup_ms'):.1f} / {g('hisparse:spmv:buildgpu','setup_ms'):.1f} | "
              f"{g('cusparse-csr:add:a'):.4f} / {g('hisparse:add:a'):.4f} | "
              f"{g('cusparse-csr:add:t'):.4f} / {g('hisparse:add:t'):.4f} | {g('cusparse-csr:add:t_flag'):.4f} | "
              f"{g('hisparse:add:t_flag'):.4f} |")
    print(f"\nGeometric means over {len(mats)} matrices: storage hisparse/CSR {gmean(st):.3f}; "
          f"speedup vs cuSPARSE op N {gmean(sp_n):.3f}×, op T {gmean(sp_t):.3f}× (> 1: hisparse faster).")
