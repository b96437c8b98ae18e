#!/usr/bin/env python3
# bench/bro_table.py — the "Measured results" table of docs/formats/bro.md from the JSON files of
# `bench/reproduce bro`: per matrix and precision, every format's median time, GB/s of *uncompressed
# CSR bytes* per second (csr_equiv_gbs: the CSR floor bytes over the time, so a compressed format
# can exceed the copy bandwidth), % of copy bandwidth of its own traffic, speedup against the
# fastest cuSPARSE SpMV and, for BRO formats, against their uncompressed baseline (bro-ell → ell,
# bro-hyb → hyb). Prints Markdown; the numbers are only those in the files given.
# SPDX-License-Identifier: MIT
"""usage: python3 bench/bro_table.py RESULT.json [RESULT.json ...] > tables.md
       python3 bench/bro_table.py --summary BRO_FP64.json BRO_FP32.json [--eta ETA.json]

The first form prints one table per matrix and precision. --summary prints the one table of
docs/formats/bro.md: per matrix, the fp64 times of bro-ell, bro-hyb, bro-csr, ell and the fastest
cuSPARSE SpMV, the best BRO format against cuSPARSE, bro-ell against ell in fp64 and fp32, the
byte ratio of ell to bro-ell (storage + x + y, fp64: the speedup at equal efficiency) and, with
--eta (the gpu_defaults.json of `bench/reproduce bro-eta`), BRO-ELL's index space savings with
the GPU defaults, metadata counted."""
import json
import os
import sys

BASELINE = {"bro-ell": "ell", "bro-ell-bar": "ell", "bro-hyb": "hyb", "bro-hyb-bar": "hyb",
            "bro-csr": "csr"}


def label(r):
    return r["format"] + (" (%s)" % r["options"] if r.get("options") else "")


def summary(f64, f32, eta_path):
    def load(path):
        doc = json.load(open(path))
        t = {}
        for r in doc["results"]:
            if r["op"] == "spmv" and r.get("completed") and r.get("correct", True) \
                    and not r.get("options"):
                t[(r["matrix"]["name"], r["format"])] = r
        return t, doc["device"]["name"]
    a, dev = load(f64)
    b, _ = load(f32)
    eta = {}
    if eta_path:
        for m in json.load(open(eta_path))["matrices"]:
            e = m.get("bro_ell_h32_slice") or {}
            if e.get("eta_meta") is not None:
                eta[m["name"]] = 100 * e["eta_meta"]
    mats = list(dict.fromkeys(k[0] for k in a))
    print("%s, fp64 SpMV, ms (median); *×* = time ratio (> 1: the first is faster); *bytes ell / "
          "bro-ell* = (storage + x + y) of ell over bro-ell, the speedup at equal efficiency.\n" % dev)
    head = ["matrix", "rows", "η (%)", "bro-ell", "bro-hyb", "bro-csr", "ell", "fastest cuSPARSE",
            "best BRO vs cuSPARSE", "bro-ell vs ell", "bro-ell vs ell, fp32", "bytes ell / bro-ell"]
    print("| " + " | ".join(head) + " |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for m in mats:
        g = lambda t, f: t[(m, f)]["time_ms"] if (m, f) in t else None
        cus = [(g(a, f), f) for f in ("cusparse-csr", "cusparse-csr-alg2", "cusparse-coo") if g(a, f)]
        tc, fc = min(cus) if cus else (None, "")
        bro = [g(a, f) for f in ("bro-ell", "bro-hyb", "bro-csr") if g(a, f)]
        r = a.get((m, "bro-ell")) or a.get((m, "ell"))
        rows_, v = r["matrix"]["rows"], 8
        xy = (r["matrix"]["rows"] + r["matrix"]["cols"]) * v
        by = lambda f: a[(m, f)]["storage_bytes"] + xy if (m, f) in a else None
        ratio = lambda x, y: "%.2f×" % (x / y) if x and y else "—"
        ms = lambda x: "%.4f" % x if x else "—"
        short = m.replace(".mtx.gz", "")
        cells = [short, f"{rows_:,}", "%.1f" % eta[short] if short in eta else "—",
                 ms(g(a, "bro-ell")), ms(g(a, "bro-hyb")), ms(g(a, "bro-csr")), ms(g(a, "ell")),
                 "%s (%s)" % (ms(tc), fc.removeprefix("cusparse-")) if tc else "—",
                 ratio(tc, min(bro)) if bro else "—", ratio(g(a, "ell"), g(a, "bro-ell")),
                 ratio(g(b, "ell"), g(b, "bro-ell")), ratio(by("ell"), by("bro-ell"))]
        print("| " + " | ".join(cells) + " |")
    return 0


def main(paths):
    if paths and paths[0] == "--summary":
        eta = None
        if "--eta" in paths:
            i = paths.index("--eta")
            eta, paths = paths[i + 1], paths[:i] + paths[i + 2:]
        if len(paths) != 3:
            print(__doc__, file=sys.stderr)
            return 2
        return summary(paths[1], paths[2], eta)
    if not paths:
        print(__doc__, file=sys.stderr)
        return 2
    rows = []
    for p in paths:
        doc = json.load(open(p))
        for r in doc["results"]:
            if r["op"] != "spmv":
                continue
            r["_file"] = os.path.basename(p)
            r["_device"] = doc["device"]["name"]
            rows.append(r)
    devices = sorted({r["_device"] for r in rows})
    print("Device: %s. Files: %s. ms = median; *CSR GB/s* = uncompressed CSR bytes (CSR floor) per "
          "second; *%% bw* = the format's own traffic against the measured copy bandwidth; "
          "*vs cuSPARSE* = fastest cuSPARSE SpMV time / this time; *vs base* = the uncompressed "
          "baseline's time / this time (bro-ell→ell, bro-hyb→hyb, bro-csr→csr).\n"
          % (", ".join(devices), ", ".join("`%s`" % os.path.basename(p) for p in paths)))
    keys = []
    for r in rows:
        k = (r["matrix"]["name"], r["precision"])
        if k not in keys:
            keys.append(k)
    for name, prec in keys:
        group = [r for r in rows if r["matrix"]["name"] == name and r["precision"] == prec]
        base = {}
        for r in group:
            if r.get("completed") and not r.get("options") and r["time_ms"]:
                base.setdefault(r["format"], r["time_ms"])
        m = group[0]["matrix"]
        print("**%s** (%s rows, %s nnz), %s\n" % (name, m["rows"], m["nnz"], prec))
        print("| format | ms | CSR GB/s | % bw | vs cuSPARSE | vs base |")
        print("|---|---:|---:|---:|---:|---:|")
        seen = set()
        for r in sorted(group, key=lambda r: (r["time_ms"] if r.get("completed") else 1e30)):
            key = (label(r), r["_file"]) if r["format"].startswith("cusparse") else label(r)
            if key in seen:
                continue
            seen.add(key)
            if not r.get("completed"):
                print("| %s | refused: %s | | | | |" % (label(r), r.get("error", "")[:60].replace("|", "/")))
                continue
            sp = r.get("speedup_vs_cusparse")
            b = BASELINE.get(r["format"])
            vb = "%.2f×" % (base[b] / r["time_ms"]) if b in base else ""
            ok = "" if r.get("correct", True) else " (WRONG)"
            print("| %s%s | %.4f | %.0f | %.0f | %s | %s |" % (
                label(r), ok, r["time_ms"], r.get("csr_equiv_gbs") or 0, 100 * (r.get("bw_fraction") or 0),
                "%.2f×" % sp if sp else "", vb))
        print()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
