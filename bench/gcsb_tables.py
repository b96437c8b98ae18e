#!/usr/bin/env python3
# bench/gcsb_tables.py — markdown tables of a `bench/reproduce gcsb` run (the GCSB thesis sweeps).
# SPDX-License-Identifier: MIT
"""Usage: bench/gcsb_tables.py DIR [--precision fp32,fp64] [--summary]

Reads DIR/ideal_beta*.json, DIR/ideal_baselines.json, DIR/random_p.json and DIR/real.json (any
may be missing) and prints:
  1. the beta sweep on the ideal matrix (thesis Tables 4.5-4.7): SpMV / SpMV^T time per beta for
     csb and the gcsb variants, and memory (MB, 10^6 B);
  2. random_p (Table 4.4, Figs. 4.6-4.8) and 3. the Table 4.3 matrices: SpMV + SpMV^T total time
     per format, cuSPARSE best-N + best-T, speedup against CSR scalar and memory ratio against CSR;
  4. the summary of docs/formats/gcsb.md: N, T, T/N of gcsb and gcsb-det, (cuSPARSE best N +
     best T) / (N + T) and its geometric mean over the ideal matrix and random_p with
     p >= 0.005, storage ratio vs CSR.
--summary prints only 4. (the table of docs/formats/gcsb.md is `--precision fp64 --summary`).
Times are medians (time_ms) in ms. Only the Python standard library is used.
"""
import glob
import json
import math
import os
import re
import sys

BLOCK = ["csb", "gcsb", "gcsb-thesis", "gcsb-det", "gcsb-atomic"]
TOTAL_COLS = ["coo", "csr-scalar", "csb", "gcsb", "gcsb-thesis", "gcsb-det", "gcsb-atomic"]
DEFAULT_BETA = {"fp32": 32, "fp64": 16}  # thesis Eq. 3.3 with a 128-B L1 line
P_MIN = 0.005  # density floor of the summary's geometric mean (sparser: block ids dominate)


def load(path):
    """Results of one JSON file keyed by (matrix, format, op, precision); device name."""
    if not os.path.exists(path):
        return {}, None
    with open(path) as f:
        doc = json.load(f)
    out = {}
    for r in doc.get("results", []):
        if not r.get("completed", True) or r.get("time_ms") is None:
            continue
        out[(r["matrix"]["name"], r["format"], r["op"], r["precision"])] = r
    dev = doc.get("device", {})
    return out, (dev.get("name") if isinstance(dev, dict) else dev)


def t(res, m, f, op, prec):
    r = res.get((m, f, op, prec))
    return r["time_ms"] if r else None


def mem(res, m, f, prec):
    for op in ("spmv", "spmv_t"):
        r = res.get((m, f, op, prec))
        if r:
            return r["storage_bytes"]
    return None


def total(res, m, f, prec):
    a, b = t(res, m, f, "spmv", prec), t(res, m, f, "spmv_t", prec)
    return a + b if a is not None and b is not None else None


def cusparse_best(res, m, prec):
    """Best cuSPARSE op N time + best cuSPARSE op T time (possibly different formats)."""
    best = {}
    for (mm, f, op, p), r in res.items():
        if mm == m and p == prec and f.startswith("cusparse"):
            best[op] = min(best.get(op, math.inf), r["time_ms"])
    if "spmv" in best and "spmv_t" in best:
        return best["spmv"] + best["spmv_t"]
    return None


def csr_bytes(res, m, prec):
    for f in ("csr-scalar", "csr", "cusparse-csr"):
        b = mem(res, m, f, prec)
        if b:
            return b
    return None


def fmt(x, digits=4):
    if x is None:
        return "—"
    return f"{x:.{digits}f}" if abs(x) < 1000 else f"{x:.0f}"


def row(cells):
    return "| " + " | ".join(cells) + " |"


def beta_sweep(dir_, prec):
    files = glob.glob(os.path.join(dir_, "ideal_beta*.json"))
    betas = sorted(int(re.search(r"ideal_beta(\d+)", f).group(1)) for f in files)
    if not betas:
        return []
    lines = [f"#### β sweep, ideal matrix, {prec} (ms, SpMV / SpMVᵀ; memory MB = 10⁶ B)", ""]
    fmts = []
    for b in betas:
        res, _ = load(os.path.join(dir_, f"ideal_beta{b}.json"))
        fmts += [f for f in BLOCK if any(k[1] == f and k[3] == prec for k in res) and f not in fmts]
    lines.append(row(["β"] + [f"{f} N / T" for f in fmts] + [f"mem {f}" for f in fmts if f in ("csb", "gcsb", "gcsb-det")]))
    lines.append(row(["---"] * (1 + len(fmts) + len([f for f in fmts if f in ("csb", "gcsb", "gcsb-det")]))))
    for b in sorted(betas, reverse=True):
        res, _ = load(os.path.join(dir_, f"ideal_beta{b}.json"))
        m = next((k[0] for k in res), None)
        cells = [str(b)]
        for f in fmts:
            cells.append(f"{fmt(t(res, m, f, 'spmv', prec))} / {fmt(t(res, m, f, 'spmv_t', prec))}")
        for f in fmts:
            if f in ("csb", "gcsb", "gcsb-det"):
                mb = mem(res, m, f, prec)
                cells.append(fmt(mb / 1e6 if mb else None, 2))
        lines.append(row(cells))
    base, _ = load(os.path.join(dir_, "ideal_baselines.json"))
    if base:
        m = next(iter(base))[0]
        parts = []
        for f in sorted({k[1] for k in base if k[3] == prec}):
            mb = mem(base, m, f, prec)
            parts.append(f"{f} {fmt(t(base, m, f, 'spmv', prec))} / {fmt(t(base, m, f, 'spmv_t', prec))}"
                         f" ({fmt(mb / 1e6 if mb else None, 2)} MB)")
        lines += ["", "β-free baselines (N / T): " + "; ".join(parts)]
    return lines + [""]


def totals_table(res, mats, prec, title):
    if not mats:
        return []
    fmts = [f for f in TOTAL_COLS if any(k[1] == f and k[3] == prec for k in res)]
    lines = [f"#### {title}, {prec}: SpMV + SpMVᵀ total (ms); speedup vs CSR scalar; memory / CSR", ""]
    head = ["matrix", "nnz"] + fmts + ["cuSPARSE N+T"] + [f"× {f}" for f in fmts if f != "csr-scalar"] + \
           [f"mem {f}" for f in fmts if f not in ("csr-scalar",)]
    lines += [row(head), row(["---"] * len(head))]
    for m in mats:
        nnz = next((r["matrix"]["nnz"] for k, r in res.items() if k[0] == m), None)
        base = total(res, m, "csr-scalar", prec)
        cb = csr_bytes(res, m, prec)
        cells = [m, str(nnz)] + [fmt(total(res, m, f, prec)) for f in fmts] + [fmt(cusparse_best(res, m, prec))]
        for f in fmts:
            if f != "csr-scalar":
                tt = total(res, m, f, prec)
                cells.append(fmt(base / tt if base and tt else None, 2))
        for f in fmts:
            if f != "csr-scalar":
                b = mem(res, m, f, prec)
                cells.append(fmt(b / cb if b and cb else None, 3))
        lines.append(row(cells))
    return lines + [""]


def p_of(name):
    m = re.match(r"gen:random_p:[^:]+:([0-9.eE+-]+)$", name)
    return float(m.group(1)) if m else None


def summary(dir_, rnd, real, prec, formats=("gcsb", "gcsb-det")):
    """Summary: T/N, (cuSPARSE N+T)/(gcsb N+T) and its geo-mean, storage / CSR."""
    b = DEFAULT_BETA[prec]
    ideal, _ = load(os.path.join(dir_, f"ideal_beta{b}.json"))
    base, _ = load(os.path.join(dir_, "ideal_baselines.json"))
    cases = []  # (label, results, matrix, counted in the geometric mean)
    if ideal:
        m = next(iter(ideal))[0]
        merged = dict(base)
        merged.update(ideal)
        cases.append((f"{m} (β={b})", merged, m, True))
    for m in sorted({k[0] for k in rnd}, key=lambda n: p_of(n) or 0):
        p = p_of(m)
        cases.append((m, rnd, m, p is not None and p >= P_MIN))
    for m in sorted({k[0] for k in real}):
        cases.append((m, real, m, False))
    if not cases:
        return []
    lines = [f"#### Summary, {prec} (geometric mean over ideal and random_p with p ≥ {P_MIN}: "
             "rows marked *)", ""]
    head = ["matrix", "*"]
    for f in formats:
        head += [f"{f} N", f"{f} T", f"{f} T/N", f"cuSPARSE/{f}", f"{f} mem/CSR"]
    lines += [row(head), row(["---"] * len(head))]
    ratios = {f: [] for f in formats}
    worst_tn = {f: 0.0 for f in formats}
    worst_mem = {f: 0.0 for f in formats}
    for label, res, m, crit in cases:
        cells = [label, "*" if crit else ""]
        cs = cusparse_best(res, m, prec)
        cb = csr_bytes(res, m, prec)
        for f in formats:
            n, tt = t(res, m, f, "spmv", prec), t(res, m, f, "spmv_t", prec)
            tot = n + tt if n is not None and tt is not None else None
            tn = tt / n if n and tt is not None else None
            sp = cs / tot if cs and tot else None
            mr = mem(res, m, f, prec) / cb if mem(res, m, f, prec) and cb else None
            cells += [fmt(n), fmt(tt), fmt(tn, 2), fmt(sp, 2), fmt(mr, 3)]
            if crit:
                if sp:
                    ratios[f].append(sp)
                if tn:
                    worst_tn[f] = max(worst_tn[f], tn)
                if mr:
                    worst_mem[f] = max(worst_mem[f], mr)
        lines.append(row(cells))
    lines.append("")
    for f in formats:
        g = math.exp(sum(math.log(x) for x in ratios[f]) / len(ratios[f])) if ratios[f] else None
        lines.append(f"- {f}: geo-mean (cuSPARSE best N + best T) / ({f} N + T) over {len(ratios[f])} "
                     f"matrices = {fmt(g, 3)}; worst T/N = {fmt(worst_tn[f] or None, 2)}; "
                     f"worst memory / CSR = {fmt(worst_mem[f] or None, 3)}")
    return lines + [""]


def main(argv):
    if len(argv) < 2 or argv[1] in ("-h", "--help"):
        print(__doc__)
        return 0 if len(argv) >= 2 else 2
    dir_ = argv[1]
    precs = ["fp32", "fp64"]
    if "--precision" in argv:
        precs = argv[argv.index("--precision") + 1].split(",")
    rnd, dev_r = load(os.path.join(dir_, "random_p.json"))
    real, dev_m = load(os.path.join(dir_, "real.json"))
    _, dev_i = load(os.path.join(dir_, "ideal_baselines.json"))
    dev = dev_i or dev_r or dev_m or "unknown device"
    print(f"### GCSB sweep on {dev} ({dir_})\n")
    missing = os.path.join(dir_, "missing.txt")
    if os.path.exists(missing):
        names = open(missing).read().split()
        if names:
            print(f"Table 4.3 matrices not found (skipped): {', '.join(names)}\n")
    only_summary = "--summary" in argv
    for prec in precs:
        if only_summary:
            print("\n".join(summary(dir_, {k: v for k, v in rnd.items() if k[3] == prec},
                                     {k: v for k, v in real.items() if k[3] == prec}, prec)))
            continue
        out = beta_sweep(dir_, prec)
        mats = sorted({k[0] for k in rnd if k[3] == prec}, key=lambda n: p_of(n) or 0)
        out += totals_table(rnd, mats, prec, "random_p")
        out += totals_table(real, sorted({k[0] for k in real if k[3] == prec}), prec, "Table 4.3 matrices")
        out += summary(dir_, {k: v for k, v in rnd.items() if k[3] == prec},
                       {k: v for k, v in real.items() if k[3] == prec}, prec)
        print("\n".join(out))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
