#!/usr/bin/env bash
# bench/gcsb_round.sh DIR — GPU check of the issue-4 criteria for the gcsb kernels (session 2,
# round 2): T/N ≤ 1.15, gcsb N + T vs cuSPARSE best N + best T, storage vs CSR.
# Matrices: gen:ideal, gen:random_p:8192:{0.005,0.01,0.05,0.1}, gen:lap2d:2000 and G3_circuit
# ($G3, skipped when missing). Runs, one JSON + log each in DIR:
#   main.json      gcsb (defaults: spmv window kernel, spmv_t dense-output kernel), gcsb-det,
#                  gcsb-atomic, cusparse-csr, cusparse-csr-alg2, cusparse-coo, csr
#   off.json       gcsb dense=off (round-1 window kernel for both ops, split windows via the buffer)
#   both.json      gcsb dense=both (dense-output kernel for spmv too, no plan stored at all)
#   atomic.json    gcsb dense=off flush=atomic (exactly the round-1 gcsb)
#   parts<P>.json  gcsb dense_parts=P for P in $PARTS (the dense kernel's CTA count)
#   beta32.json    fp64 only: gcsb and gcsb-det at beta=32 — the β that fp64 needs for storage ≤ 1.1× CSR at p = 0.005/0.01
#                  (CPU storage_bytes: gcsb 1.127/1.064, dense=both 1.061/1.031, det 1.194/1.098)
#   both32.json    fp64 only: gcsb dense=both beta=32
# Then bench/gcsb_tables.py-style summary: bench/gcsb_round_summary.py DIR.
# Environment: SPMAT_BIN [./build/gpu/spmat]  PRECISION [fp64,fp32]  REPS [20]  WARMUP [5]
#   G3 [shared/matrices/G3_circuit.mtx.gz]  PARTS ["33 66 264"] (auto = SM count)  MATS [the list above]
#   MAIN_FORMATS [the main.json list]  STEPS ["main off both atomic parts beta32 both32"; also bl (block_lanes=1,2,4), list (plan_form=list)]: a subset
#   keeps one command short (e.g. STEPS=main first, then the rest). CPU dry run (storage only, no cuSPARSE):
#   SPMAT_BIN=./build-cpu/spmat MAIN_FORMATS=csr,gcsb,gcsb-det REPS=1 WARMUP=0 \
#     MATS="gen:random_p:512:0.05 gen:ideal:256" bench/gcsb_round.sh /tmp/r && bench/gcsb_round_summary.py /tmp/r
set -uo pipefail
dir=${1:?usage: bench/gcsb_round.sh DIR}
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
cd "$(dirname "$0")/.."
bin=${SPMAT_BIN:-./build/gpu/spmat}
precision=${PRECISION:-fp64,fp32}
reps=${REPS:-20}
warmup=${WARMUP:-5}
g3=${G3:-shared/matrices/G3_circuit.mtx.gz}
read -r -a mats <<< "${MATS:-gen:ideal gen:random_p:8192:0.005 gen:random_p:8192:0.01 gen:random_p:8192:0.05 gen:random_p:8192:0.1 gen:lap2d:2000}"
[ -z "${MATS:-}" ] && [ -f "$g3" ] && mats+=("$g3")
status=0
step() {
  local name=$1; shift
  local t0=$SECONDS
  "$bin" bench --ops spmv,spmv_t --precision "$precision" --reps "$reps" --warmup "$warmup" \
    --json "$dir/$name.json" "$@" "${mats[@]}" > "$dir/$name.log" 2>&1
  local rc=$?
  echo "$name: exit $rc, $((SECONDS - t0)) s" | tee -a "$dir/steps.txt"
  [ "$rc" -eq 0 ] || status=1
}
steps=" ${STEPS:-main off both atomic parts beta32 both32} "
has() { [[ "$steps" == *" $1 "* ]]; }
has main && step main --formats "${MAIN_FORMATS:-gcsb,gcsb-det,gcsb-atomic,cusparse-csr,cusparse-csr-alg2,cusparse-coo,csr}"
has off && step off --formats gcsb --option gcsb:dense=off
has both && step both --formats gcsb --option gcsb:dense=both
has atomic && step atomic --formats gcsb --option gcsb:dense=off --option gcsb:flush=atomic
if has parts; then
  for p in ${PARTS:-33 66 264}; do step "parts$p" --formats gcsb --option "gcsb:dense_parts=$p"; done
fi
# round 3: block lanes (auto picks 4 for fp32 gen:ideal / random_p >= 0.05) and plan forms
if has bl; then
  for b in 1 2 4; do step "bl$b" --formats gcsb,gcsb-det --option "gcsb:block_lanes=$b" --option "gcsb-det:block_lanes=$b"; done
fi
has list && step list --formats gcsb,gcsb-det --option gcsb:plan_form=list --option gcsb-det:plan_form=list
precision=fp64
has beta32 && step beta32 --formats gcsb,gcsb-det --option gcsb:beta=32 --option gcsb-det:beta=32
has both32 && step both32 --formats gcsb --option gcsb:beta=32 --option gcsb:dense=both
exit $status
