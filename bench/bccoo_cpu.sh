#!/usr/bin/env bash
# bench/bccoo_cpu.sh — CPU measurements of issue 6 (BCCOO) on a 2-core machine: spmat bccoo, bcoo
# and csr SpMV (fp64) at 1 and 2 OpenMP threads, against Eigen3's row-major sparse × vector at 1
# and 2 threads (bench/cpu/eigen_spmv, timed the same way: median of reps after warm-up).
# SPDX-License-Identifier: MIT
#
#   bench/bccoo_cpu.sh OUT_DIR [MATRIX...]
# Default matrices: the largest shared ones (G3_circuit, Maragal_6, bcsstk29_pattern,
# bcsstk33_pattern from $SPMAT_MATRIX_DIR, default /work/shared/matrices; missing ones skipped)
# and gen:lap2d:1000 (1M rows) and gen:random_k:1000000:16. Env: BUILD (default ./build-cpu,
# holding spmat and eigen_spmv), BCCOO_REPS (default 10), BCCOO_WARMUP (default 2), BCCOO_THREADS
# (default "1 2"; e.g. "1 2 4 8 16" for a scaling run on a many-core machine).
# Writes OUT_DIR/spmat_t{1,2,…}.json (spmat bench schema), eigen_t{1,2,…}.jsonl (one JSON object per
# matrix), bccoo_cpu.csv and prints the table (bench/bccoo_cpu_summary.py). Run it on a quiet
# machine: other processes distort 2-thread timings most.
set -euo pipefail
out=${1:?usage: bench/bccoo_cpu.sh OUT_DIR [MATRIX...]}
shift
build=${BUILD:-./build-cpu}
reps=${BCCOO_REPS:-10}
warmup=${BCCOO_WARMUP:-2}
mdir=${SPMAT_MATRIX_DIR:-/work/shared/matrices}
[ -x "$build/spmat" ] || { echo "bccoo_cpu.sh: $build/spmat not found (set BUILD)" >&2; exit 2; }
eigen="$build/eigen_spmv"
[ -x "$eigen" ] || echo "bccoo_cpu.sh: $eigen not built (apt install libeigen3-dev, re-run cmake); Eigen skipped" >&2
mats=("$@")
if [ ${#mats[@]} -eq 0 ]; then
  for name in G3_circuit Maragal_6 bcsstk29_pattern bcsstk33_pattern; do
    f="$mdir/$name.mtx.gz"
    if [ -f "$f" ]; then mats+=("$f"); else echo "bccoo_cpu.sh: $f missing, skipped" >&2; fi
  done
  mats+=(gen:lap2d:1000 gen:random_k:1000000:16)
fi
mkdir -p "$out"
threads=${BCCOO_THREADS:-1 2}
for t in $threads; do
  OMP_NUM_THREADS=$t OMP_PROC_BIND=close "$build/spmat" bench --backend cpu --ops spmv \
    --precision fp64 --formats bccoo,bcoo,csr --reps "$reps" --warmup "$warmup" \
    --json "$out/spmat_t$t.json" "${mats[@]}"
  if [ -x "$eigen" ]; then
    OMP_NUM_THREADS=$t OMP_PROC_BIND=close "$eigen" --threads "$t" --reps "$reps" \
      --warmup "$warmup" "${mats[@]}" > "$out/eigen_t$t.jsonl"
  fi
done
python3 "$(dirname "$0")/bccoo_cpu_summary.py" "$out"
