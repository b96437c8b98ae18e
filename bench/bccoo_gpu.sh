#!/usr/bin/env bash
# bench/bccoo_gpu.sh — GPU measurements of issue 6 (BCCOO): bccoo-gpu against cuSPARSE CSR/COO
# and spmat's csr and coo, SpMV in fp64 and fp32, on the >= 1M-row suite of the done criterion.
# SPDX-License-Identifier: MIT
#
#   bench/bccoo_gpu.sh OUT_DIR            (then: python3 bench/bccoo_summary.py OUT_DIR)
# Env: SPMAT (default ./build/gpu/spmat), SPMAT_MATRIX_DIR (default ./data: real matrices, missing
# ones are skipped), BCCOO_CHUNKS (default "2048 4096": extra fp64 runs of bccoo-gpu with these
# chunk sizes; "" for none), BCCOO_REPS (default 50).
# Writes OUT_DIR/bccoo_gpu_main.json (all formats, fp64+fp32; bccoo-gpu with its default kernel
# `auto`: block or stream picked per matrix, bccoo::auto_kernel), bccoo_gpu_stream.json (the
# persistent kernel, forced), bccoo_gpu_block.json (the round-1 one-block-per-chunk kernel,
# fp64), bccoo_gpu_atomic.json (the session-1 kernel, fp64), bccoo_gpu_prefetch{0,2}.json
# (stream kernel without / with a 2-chunk L2 prefetch, fp64), bccoo_gpu_chunk<b>.json (fp64).
# The default chunk stays 1024: at 2048 or 4096 a Laplacian chunk spans more than 255 rows, so
# its row offsets need 2 bytes (4.0 -> 5.0 B/nnz on lap2d); the chunk runs show the trade. About 5–8 minutes on an H200, most of
# it building the formats and checking results against the fp64 reference on the host.
# bcoo is CPU-only (no CUDA kernel) and is measured by bench/bccoo_cpu.sh instead.
set -euo pipefail
out=${1:?usage: bench/bccoo_gpu.sh OUT_DIR}
spmat=${SPMAT:-./build/gpu/spmat}
mdir=${SPMAT_MATRIX_DIR:-./data}
reps=${BCCOO_REPS:-50}
chunks=${BCCOO_CHUNKS-2048 4096}
[ -x "$spmat" ] || { echo "bccoo_gpu.sh: $spmat not found (build with CUDA, or set SPMAT)" >&2; exit 2; }
mkdir -p "$out"

# The criterion suite: every matrix has >= 1M rows. lap2d:2000 = 4.0M rows (5-point, 2 values),
# lap3d:150 = 3.4M rows (7-point, 2 values), random_k 2M x 16 (uniform values), rmat:21:16 = 2M
# rows (power-law graph), powerlaw 2M rows mean 8, banded 2M rows |i-j| <= 4; G3_circuit 1.6M.
mats=(gen:lap2d:2000 gen:lap3d:150 gen:random_k:2000000:16 gen:rmat:21:16 gen:powerlaw:2000000:8
      gen:banded:2000000:4)
for name in G3_circuit; do
  f="$mdir/$name.mtx.gz"
  if [ -f "$f" ]; then mats+=("$f"); else echo "bccoo_gpu.sh: $f missing, skipped" >&2; fi
done

common=(--backend cuda --ops spmv --reps "$reps")
"$spmat" bench "${common[@]}" --precision fp64,fp32 \
  --formats bccoo-gpu,csr,coo,cusparse-csr,cusparse-csr-alg2,cusparse-coo \
  --json "$out/bccoo_gpu_main.json" "${mats[@]}"
# The same graphs stored as patterns (every value 1.0), as SuiteSparse stores unweighted graphs:
# the value table then holds one entry. bccoo_summary.py --unweighted swaps them in.
"$spmat" bench "${common[@]}" --precision fp64 \
  --formats bccoo-gpu,csr,cusparse-csr,cusparse-csr-alg2,cusparse-coo \
  --json "$out/bccoo_gpu_unweighted.json" gen:random_k:2000000:16:values=ones \
  gen:rmat:21:16:values=ones gen:powerlaw:2000000:8:values=ones
for k in stream block atomic; do  # persistent, round-1 (one block per chunk), session-1 kernels
  "$spmat" bench "${common[@]}" --precision fp64 --formats bccoo-gpu \
    --option "bccoo-gpu:kernel=$k" --json "$out/bccoo_gpu_$k.json" "${mats[@]}"
done
for pf in 0 2; do  # L2 prefetch distance of the stream kernel (default 1)
  "$spmat" bench "${common[@]}" --precision fp64 --formats bccoo-gpu \
    --option "bccoo-gpu:kernel=stream" --option "bccoo-gpu:prefetch=$pf" --json "$out/bccoo_gpu_prefetch$pf.json" "${mats[@]}"
done
for b in $chunks; do
  "$spmat" bench "${common[@]}" --precision fp64 --formats bccoo-gpu \
    --option "bccoo-gpu:chunk=$b" --json "$out/bccoo_gpu_chunk$b.json" "${mats[@]}"
done
python3 "$(dirname "$0")/bccoo_summary.py" "$out" || true
python3 "$(dirname "$0")/bccoo_summary.py" --unweighted "$out" || true
