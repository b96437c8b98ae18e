#!/usr/bin/env python3
"""bench/gcsb_round_summary.py DIR [JSON ...] — issue-4 criteria from bench/gcsb_round.sh output.

Per matrix and precision: N and T time of every gcsb variant (main, off, both, atomic, partsP,
gcsb-det), T/N, (cuSPARSE best N + best T) / (N + T) (> 1: gcsb wins), storage / CSR storage;
then the geometric mean of that speedup over gen:ideal and random_p with p >= 0.005.
Without JSON arguments it reads every *.json in DIR. Also works on CPU runs (storage only)."""
import glob, json, math, os, sys
from collections import defaultdict

files = sys.argv[2:] or sorted(glob.glob(os.path.join(sys.argv[1], "*.json")))
t = defaultdict(dict)      # (matrix, prec) -> {(variant, op): ms}
st = defaultdict(dict)     # (matrix, prec) -> {variant: storage}
device = ""
for f in files:
    d = json.load(open(f))
    device = device or d.get("device", "")
    tag = os.path.splitext(os.path.basename(f))[0]
    for r in d["results"]:
        if not r.get("correct", True) or r.get("time_ms") is None:
            continue
        key = (r["matrix"]["name"], r["precision"])
        fmt = r["format"]
        var = fmt if (tag == "main" or not fmt.startswith("gcsb")) else f"{fmt}[{tag}]"
        t[key][(var, r["op"])] = r["time_ms"]
        st[key][var] = r["storage_bytes"]
print(f"device: {device}\n")
print("| matrix | prec | variant | N ms | T ms | T/N | cuSPARSE (N+T) / (N+T) | storage / CSR |")
print("|---|---|---|---|---|---|---|---|")
geo = defaultdict(list)
for key in sorted(t):
    m, p = key
    tt = t[key]
    cus = lambda op: min((v for (f, o), v in tt.items() if f.startswith("cusparse") and o == op), default=None)
    cn, ct = cus("spmv"), cus("spmv_t")
    csr = st[key].get("csr") or st[key].get("cusparse-csr")
    for var in sorted({f for (f, o) in tt if f.startswith("gcsb")}):
        n, tr = tt.get((var, "spmv")), tt.get((var, "spmv_t"))
        if n is None or tr is None:
            continue
        sp = (cn + ct) / (n + tr) if cn and ct else None
        ratio = st[key][var] / csr if csr else None
        if sp and (m == "gen:ideal" or (m.startswith("gen:random_p") and float(m.split(":")[-1]) >= 0.005)):
            geo[(var, p)].append(sp)
        print(f"| {m} | {p} | {var} | {n:.4f} | {tr:.4f} | {tr / n:.2f} | "
              f"{'%.2f' % sp if sp else '-'} | {'%.3f' % ratio if ratio else '-'} |")
print("\ngeo-mean of cuSPARSE (best N + best T) / (gcsb N + T), gen:ideal and random_p p >= 0.005:")
for (var, p), v in sorted(geo.items()):
    print(f"  {var:16s} {p}: {math.exp(sum(map(math.log, v)) / len(v)):.3f} over {len(v)} matrices")
