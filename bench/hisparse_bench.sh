#!/usr/bin/env bash
# bench/hisparse_bench.sh — HiSparse on the GPU (issue 7): SpMV, SpMVᵀ, A + A, A + Aᵀ against
# spmat's csr and cuSPARSE (SpMV op N / op T, csrgeam2 with and without a timed csr2csc), fp32 and
# fp64, on the generated GPU suite plus the thesis matrices found in $SPMAT_MATRIX_DIR.
# SPDX-License-Identifier: MIT
#
#   bench/hisparse_bench.sh OUT_DIR        # ~5–8 minutes on an H200
#   bench/hisparse_bench.sh OUT_DIR final  # session 4: the defaults, fp32 + fp64, A + Aᵀ against
#                                          # cuSPARSE with and without a timed transpose
#   bench/hisparse_bench.sh OUT_DIR round4 # session 3 round 4 only (~3 minutes, fp32): SpMV/SpMVᵀ
#                                          # with spmv=plan and spmv=plan_tl, A + Aᵀ (t_flag; add=merge
#                                          # and add=merge_ct) and A + A against cuSPARSE, and a
#                                          # per-phase profile of the GPU add (SPMAT_HISPARSE_PROFILE=1)
#                                          # in hisparse_r4_profile{,_ct}.txt
#
# Environment: SPMAT (default ./build/gpu/spmat), SPMAT_MATRIX_DIR (default ./data),
# PRECISIONS (default fp32,fp64), HISPARSE_GPU_ADD=0 to leave hisparse out of the GPU add runs
# (its GPU add, hisparse_add_cuda.cu, is on by default).
# Construction time is each result's setup_ms (build + upload + plan); time_ms is the operation.
# The spmv run is repeated with hisparse:build=gpu (hisparse_spmv_buildgpu.json): same products,
# setup_ms with the GPU construction; compare setup_ms of the two files per matrix.
# Add modes (harness option add_b, see spmat/bench/harness.cpp):
#   a      A + A
#   t      A + Aᵀ, Aᵀ transposed on the host in setup (cuSPARSE "without conversion")
#   t_flag A + Aᵀ, B built from A with transposed=1: cusparse-csr runs cusparseCsr2cscEx2 inside
#          the timed add ("with conversion"); hisparse flips its state flag (free).
# Writes OUT_DIR/hisparse_{spmv,spmv_buildgpu,add_a,add_t,add_tflag}.json and OUT_DIR/summary.md.
set -euo pipefail
OUT=${1:?usage: bench/hisparse_bench.sh OUT_DIR}
SPMAT=${SPMAT:-./build/gpu/spmat}
MDIR=${SPMAT_MATRIX_DIR:-./data}
PRECISIONS=${PRECISIONS:-fp32,fp64}
mkdir -p "$OUT"

MATS=(gen:lap2d:2000 gen:random_k:2000000:16 gen:rmat:21:16 gen:powerlaw:2000000:16
      gen:banded:1000000:8 gen:ideal)
# The thesis's 20 matrices (Fig. 7.1; "special" and "dense" are not public / are generated) and
# G3_circuit, the real matrix of the default GPU suite.
for m in asia_osm ASIC_320k ldoor mip1 bone010 cage12 parabolic_fem poisson3Da circuit5M \
         cont11_l rail4284 rajat31 FullChip Rucci1 sme3Dc in-2004 kkt_power webbase-1M G3_circuit; do
  if [[ -f "$MDIR/$m.mtx.gz" ]]; then MATS+=("$MDIR/$m.mtx.gz");
  elif [[ -f "$MDIR/$m.mtx" ]]; then MATS+=("$MDIR/$m.mtx");
  else echo "hisparse_bench: $m not found in $MDIR, skipped" >&2; fi
done
MATS+=(gen:random_p:5000:1)  # the thesis's "dense": 5000², 25 M entries, all stored

COMMON=(--backend cuda --precision "$PRECISIONS" --reps 30 --warmup 5)

if [[ "${2:-}" == final ]]; then
  # Session 4: the defaults (spmv=plan_tl, add=merge_ct) in fp32 and fp64, and A + Aᵀ both ways
  # for cuSPARSE: csrgeam2 on a pre-transposed CSR (add_b=t, transpose in setup) and with the
  # csr2csc timed (add_b=t_flag). hisparse runs t_flag in both files: its transpose is a flag.
  F=(--backend cuda --precision "$PRECISIONS" --reps 20 --warmup 5)
  G3=()
  [[ -f "$MDIR/G3_circuit.mtx.gz" ]] && G3=("$MDIR/G3_circuit.mtx.gz")
  SPMV_MATS=(gen:banded:1000000:8 "${G3[@]}" gen:random_k:2000000:16 gen:powerlaw:2000000:16
             gen:lap2d:2000 gen:ideal gen:rmat:21:16 gen:random_p:5000:1)
  ADD_T=(gen:lap2d:1000 "${G3[@]}" gen:banded:1000000:8 gen:random_k:500000:16)
  echo "== final: spmv, spmv_t" >&2
  "$SPMAT" bench "${F[@]}" --formats hisparse,cusparse-csr --ops spmv,spmv_t \
    --json "$OUT/hisparse_final_spmv.json" "${SPMV_MATS[@]}"
  echo "== final: A + Aᵀ: hisparse flag vs cuSPARSE csr2csc + csrgeam2 (t_flag) and csrgeam2 alone (t)" >&2
  "$SPMAT" bench "${F[@]}" --ops add --variant hisparse:add_b=t_flag \
    --variant cusparse-csr:add_b=t_flag --variant cusparse-csr:add_b=t \
    --json "$OUT/hisparse_final_add_t.json" "${ADD_T[@]}"
  echo "== final: A + A" >&2
  "$SPMAT" bench "${F[@]}" --formats hisparse,cusparse-csr --ops add \
    --option hisparse:add_b=a --option cusparse-csr:add_b=a \
    --json "$OUT/hisparse_final_add_a.json" "${ADD_T[@]}"
  exit 0
fi
if [[ "${2:-}" == round4 ]]; then
  R4=(--backend cuda --precision fp32 --reps 30 --warmup 5)
  G3=()
  [[ -f "$MDIR/G3_circuit.mtx.gz" ]] && G3=("$MDIR/G3_circuit.mtx.gz")
  SPMV_MATS=(gen:banded:1000000:8 "${G3[@]}" gen:random_k:2000000:16 gen:powerlaw:2000000:16
             gen:lap2d:2000 gen:ideal gen:rmat:21:16 gen:random_p:5000:1)
  echo "== r4: spmv, spmv_t (hisparse spmv=plan, cuSPARSE)" >&2
  "$SPMAT" bench "${R4[@]}" --formats hisparse,cusparse-csr --ops spmv,spmv_t \
    --json "$OUT/hisparse_r4_spmv_plan.json" "${SPMV_MATS[@]}"
  echo "== r4: spmv_t with hisparse spmv=plan_tl" >&2
  "$SPMAT" bench "${R4[@]}" --formats hisparse --ops spmv_t --option hisparse:spmv=plan_tl \
    --json "$OUT/hisparse_r4_spmv_tl.json" "${SPMV_MATS[@]}"
  ADD_T=(gen:lap2d:1000 "${G3[@]}" gen:banded:1000000:8 gen:random_k:500000:16)
  echo "== r4: A + Aᵀ (add_b=t_flag)" >&2
  "$SPMAT" bench "${R4[@]}" --formats hisparse,cusparse-csr --ops add \
    --option hisparse:add_b=t_flag --option cusparse-csr:add_b=t_flag \
    --json "$OUT/hisparse_r4_add_tflag.json" "${ADD_T[@]}"
  echo "== r4: A + Aᵀ (add_b=t_flag), hisparse add=merge_ct" >&2
  "$SPMAT" bench "${R4[@]}" --formats hisparse --ops add \
    --option hisparse:add_b=t_flag --option hisparse:add=merge_ct \
    --json "$OUT/hisparse_r4_add_tflag_ct.json" "${ADD_T[@]}"
  echo "== r4: A + A (add_b=a)" >&2
  "$SPMAT" bench "${R4[@]}" --formats hisparse,cusparse-csr --ops add \
    --option hisparse:add_b=a --option cusparse-csr:add_b=a \
    --json "$OUT/hisparse_r4_add_a.json" gen:lap2d:2000 "${G3[@]}"
  echo "== r4: GPU add phase profile (SPMAT_HISPARSE_PROFILE=1, stderr)" >&2
  SPMAT_HISPARSE_PROFILE=1 "$SPMAT" bench --backend cuda --precision fp32 --reps 3 --warmup 1 \
    --formats hisparse --ops add --option hisparse:add_b=t_flag "${ADD_T[@]}" \
    2> "$OUT/hisparse_r4_profile.txt" > /dev/null
  SPMAT_HISPARSE_PROFILE=1 "$SPMAT" bench --backend cuda --precision fp32 --reps 3 --warmup 1 \
    --formats hisparse --ops add --option hisparse:add_b=t_flag --option hisparse:add=merge_ct \
    "${ADD_T[@]}" 2> "$OUT/hisparse_r4_profile_ct.txt" > /dev/null
  grep -c profile "$OUT/hisparse_r4_profile.txt" >&2 || true
  exit 0
fi
echo "== spmv, spmv_t" >&2
"$SPMAT" bench "${COMMON[@]}" --formats hisparse,csr,cusparse-csr --ops spmv,spmv_t \
  --json "$OUT/hisparse_spmv.json" "${MATS[@]}"

echo "== spmv, hisparse build=gpu (construction time in setup_ms)" >&2
"$SPMAT" bench "${COMMON[@]}" --formats hisparse --ops spmv --option hisparse:build=gpu \
  --json "$OUT/hisparse_spmv_buildgpu.json" "${MATS[@]}"

ADD_FORMATS=hisparse,cusparse-csr
[[ "${HISPARSE_GPU_ADD:-1}" == 0 ]] && ADD_FORMATS=cusparse-csr
for mode in a t t_flag; do
  echo "== add, add_b=$mode" >&2
  opts=(--option "cusparse-csr:add_b=$mode")
  [[ "$ADD_FORMATS" == hisparse,* ]] && opts+=(--option "hisparse:add_b=$mode")
  "$SPMAT" bench "${COMMON[@]}" --formats "$ADD_FORMATS" --ops add "${opts[@]}" \
    --json "$OUT/hisparse_add_${mode/_/}.json" "${MATS[@]}"
done
python3 "$(dirname "$0")/hisparse_summary.py" "$OUT"/hisparse_*.json | tee "$OUT/summary.md"
