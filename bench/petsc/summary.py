#!/usr/bin/env python3
"""bench/petsc/summary.py OUTDIR — the table (Markdown, stdout) and plot of bench/petsc/run.

Reads OUTDIR/petsc.json (JSON lines of petsc_bench). For every matrix and rank count: MatMult
time of AIJ and of each spmat format, the speedup over AIJ in the same run, the parallel
speedup over the same type on one rank, and KSP iterations and time to solution. Writes
OUTDIR/matmult_scaling.png when matplotlib is installed.
"""
import json
import sys
from collections import defaultdict
from pathlib import Path


def main():
    out = Path(sys.argv[1] if len(sys.argv) > 1 else ".")
    rows = [json.loads(l) for l in (out / "petsc.json").read_text().splitlines() if l.strip()]
    by = defaultdict(dict)  # (matrix, ranks) -> label -> row
    for r in rows:
        label = "AIJ" if r["type"] == "aij" else f"spmat {r['format']}"
        by[(r["name"], r["ranks"])][label] = r
    matrices = list(dict.fromkeys(r["name"] for r in rows))
    labels = list(dict.fromkeys(("AIJ" if r["type"] == "aij" else f"spmat {r['format']}") for r in rows))

    print("| matrix | ranks | type | MatMult ms | vs AIJ | vs 1 rank | KSP its | KSP s | vs AIJ | formats per rank (diag/off-diag) |")
    print("|---|---:|---|---:|---:|---:|---:|---:|---:|---|")
    for m in matrices:
        for n in sorted({k[1] for k in by if k[0] == m}):
            run = by[(m, n)]
            aij = run.get("AIJ")
            for label in labels:
                r = run.get(label)
                if not r:
                    continue
                one = by.get((m, 1), {}).get(label)
                scal = f"{one['matmult_ms'] / r['matmult_ms']:.2f}x" if one else "-"
                vs = f"{aij['matmult_ms'] / r['matmult_ms']:.2f}x" if aij else "-"
                slower = " (slower)" if aij and r is not aij and r["matmult_ms"] > aij["matmult_ms"] else ""
                ksp = r["ksp_its"] > 0
                kvs = f"{aij['ksp_s'] / r['ksp_s']:.2f}x" if ksp and aij and aij["ksp_s"] > 0 else "-"
                print(f"| {m} ({r['rows']} rows, {r['nnz']} nnz) | {n} | {label} | {r['matmult_ms']:.3f} | {vs}{slower} | {scal} | "
                      f"{r['ksp_its'] if ksp else '-'} | {r['ksp_s']:.2f} | {kvs} | {r['local_formats']} |"
                      if ksp else
                      f"| {m} ({r['rows']} rows, {r['nnz']} nnz) | {n} | {label} | {r['matmult_ms']:.3f} | {vs}{slower} | {scal} | - | - | - | {r['local_formats']} |")
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("\n(matplotlib not installed: no plot)", file=sys.stderr)
        return
    fig, axes = plt.subplots(1, len(matrices), figsize=(5 * len(matrices), 4), squeeze=False)
    for ax, m in zip(axes[0], matrices):
        for label in labels:
            pts = sorted((n, run[label]["matmult_ms"]) for (mm, n), run in by.items() if mm == m and label in run)
            if pts:
                ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=label)
        ax.set_title(m)
        ax.set_xlabel("MPI ranks (1 OpenMP thread each)")
        ax.set_ylabel("MatMult ms (median)")
        ax.set_xticks(sorted({n for (mm, n) in by if mm == m}))
        ax.set_ylim(bottom=0)
        ax.legend()
    fig.tight_layout()
    fig.savefig(out / "matmult_scaling.png", dpi=110)


if __name__ == "__main__":
    main()
