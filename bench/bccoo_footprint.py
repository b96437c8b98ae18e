#!/usr/bin/env python3
# bench/bccoo_footprint.py — bytes per nonzero of bccoo, bccoo-gpu, COO and CSR (the BCCOO
# paper's Figs. 1 and 3) for every top-level matrix of a directory and the generator suite.
# SPDX-License-Identifier: MIT
#
#   python3 bench/bccoo_footprint.py [--spmat build/cpu/spmat] [--dir $SPMAT_MATRIX_DIR or data]
#                                    [--gens gen:lap2d:2000,...] [--json OUT.json] > table.md
# Runs `spmat bench --backend cpu --ops spmv --precision fp64 --reps 1 --warmup 0` (int32
# indices) per matrix and reads storage_bytes; prints a markdown table sorted by nnz, then the
# median ratios. Footprints: bccoo = 256·8 + 4·nb + 8·(nb+1) + stream; bccoo-gpu adds per chunk
# column (4 B) and format (1 B) and 8-byte padding of three sub-arrays; COO = 16·nnz; CSR = 12·nnz
# + 4·(rows+1). Matrices spmat cannot read (complex) are listed as skipped.
import argparse
import glob
import json
import os
import statistics
import subprocess
import sys
import tempfile

FORMATS = ["bccoo", "bccoo-gpu", "coo", "csr"]
GENS = ("gen:lap2d:2000,gen:lap3d:150,gen:random_k:2000000:16,gen:rmat:21:16,"
        "gen:powerlaw:2000000:8,gen:banded:2000000:4,gen:ideal,gen:lap3d27:100")


def measure(spmat, spec):
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "r.json")
        cmd = [spmat, "bench", "--backend", "cpu", "--ops", "spmv", "--precision", "fp64",
               "--reps", "1", "--warmup", "0", "--formats", ",".join(FORMATS), "--json", out, spec]
        p = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        if p.returncode != 0 and not os.path.exists(out):
            return None, p.stderr.strip().splitlines()[-1:] or ["failed"]
        with open(out) as fh:
            res = json.load(fh)["results"]
    row = {}
    for r in res:
        if r.get("storage_bytes"):
            row["name"] = r["matrix"]["name"]
            row["rows"], row["nnz"] = r["matrix"]["rows"], r["matrix"]["nnz"]
            row[r["format"]] = r["storage_bytes"]
    if not all(f in row for f in FORMATS):
        errs = [r.get("error", "") for r in res if r.get("error")]
        return None, errs[:1] or ["no storage_bytes"]
    return row, None


def main():
    ap = argparse.ArgumentParser(description="bytes/nnz of bccoo, bccoo-gpu, COO and CSR")
    ap.add_argument("--spmat", default="build/cpu/spmat")
    ap.add_argument("--dir", default=os.environ.get("SPMAT_MATRIX_DIR") or "data")
    ap.add_argument("--gens", default=GENS)
    ap.add_argument("--json", help="also write the rows as JSON")
    args = ap.parse_args()
    specs = sorted(glob.glob(os.path.join(args.dir, "*.mtx.gz"))) if args.dir else []
    specs += [g for g in args.gens.split(",") if g]
    rows, skipped = [], []
    for i, s in enumerate(specs):
        print(f"[{i + 1}/{len(specs)}] {s}", file=sys.stderr)
        row, err = measure(args.spmat, s)
        if row:
            rows.append(row)
        else:
            skipped.append((s, err[0] if err else ""))
    rows.sort(key=lambda r: (r["nnz"], r["name"]))
    print("| matrix | rows | nnz | bccoo | bccoo-gpu | COO | CSR | bccoo/CSR | bccoo-gpu/CSR |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        b = {f: r[f] / r["nnz"] if r["nnz"] else float("nan") for f in FORMATS}
        print(f"| {r['name']} | {r['rows']:,} | {r['nnz']:,} | {b['bccoo']:.2f} | "
              f"{b['bccoo-gpu']:.2f} | {b['coo']:.2f} | {b['csr']:.2f} | "
              f"{r['bccoo'] / r['csr']:.2f} | {r['bccoo-gpu'] / r['csr']:.2f} |")
    if rows:
        med = lambda f: statistics.median(r[f] / r["csr"] for r in rows)
        smaller = lambda f: sum(r[f] < r["csr"] for r in rows)
        print(f"\n{len(rows)} matrices (bytes per nonzero; int32 indices, fp64 values). "
              f"Median size relative to CSR: bccoo {med('bccoo'):.2f}, bccoo-gpu "
              f"{med('bccoo-gpu'):.2f}, COO {med('coo'):.2f}. Smaller than CSR: bccoo "
              f"{smaller('bccoo')}/{len(rows)}, bccoo-gpu {smaller('bccoo-gpu')}/{len(rows)}; "
              f"bccoo-gpu smaller than COO: {sum(r['bccoo-gpu'] < r['coo'] for r in rows)}/{len(rows)}.")
    for s, e in skipped:
        print(f"\nskipped {os.path.basename(s)}: {e}")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"rows": rows, "skipped": skipped}, fh, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
