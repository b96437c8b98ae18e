#!/usr/bin/env python3
# bench/bro_table.py — the "Measured results" table of docs/formats/bro.md from the JSON files of
# bench/bro_bench.sh: per matrix and precision, every format's median time, GB/s of *uncompressed
# CSR bytes* per second (csr_equiv_gbs: the CSR floor bytes over the time, so a compressed format
# can exceed the copy bandwidth), % of copy bandwidth of its own traffic, speedup against the
# fastest cuSPARSE SpMV and, for BRO formats, against their uncompressed baseline (bro-ell → ell,
# bro-hyb → hyb). Prints Markdown; the numbers are only those in the files given.
# SPDX-License-Identifier: MIT
"""usage: python3 bench/bro_table.py RESULT.json [RESULT.json ...] > table.md"""
import json
import os
import sys

BASELINE = {"bro-ell": "ell", "bro-ell-bar": "ell", "bro-hyb": "hyb", "bro-hyb-bar": "hyb",
            "bro-csr": "csr"}


def label(r):
    return r["format"] + (" (%s)" % r["options"] if r.get("options") else "")


def main(paths):
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
