#!/usr/bin/env bash
# bench/gcsb_sweep.sh DIR [all|ideal|random] — the GCSB thesis sweeps (Izawa 2023, spec gcsb.md):
#   ideal:  β = 8, 16, 32, 64, 128 for csb, gcsb, gcsb-thesis, gcsb-det on the 8192² ideal matrix
#           (thesis Tables 4.5–4.7), plus the β-free baselines once;
#   random: random_p on 8192², p = 0.0001 … 0.5 (thesis Table 4.4), every format at its default
#           β (Eq. 3.3: fp32 32, fp64 16), against COO, CSR scalar and cuSPARSE.
# One JSON (+ log) per `spmat bench` run in DIR: ideal_beta<β>.json, ideal_baselines.json,
# random_p.json; DIR/steps.txt lists each step's exit status, DIR/done appears at the end.
# Both precisions, spmv and spmv_t. Storage (memory ratio vs CSR) is in each result's
# storage_bytes. Meant to stay under 8 minutes on one H200 (--reps 30, --warmup 5); run the two
# parts as separate commands if a device command must be shorter.
#
# Environment overrides (defaults in brackets):
#   SPMAT_BIN [./build/gpu/spmat]  PRECISION [fp32,fp64]  REPS [30]  WARMUP [5]
#   BETAS ["8 16 32 64 128"]  PS ["0.0001 0.0005 0.001 0.005 0.01 0.05 0.1 0.2 0.3 0.4 0.5"]
#   N [8192]  IDEAL [gen:ideal]  BLOCK_FORMATS [csb,gcsb,gcsb-thesis,gcsb-det]
#   BASELINES [cusparse-csr,cusparse-csr-alg2,cusparse-coo,csr-scalar,coo]  EXTRA_ARGS [""]
# Dry check of the command lines on a CPU build (no GPU):
#   SPMAT_BIN=./build-cpu/spmat BLOCK_FORMATS=csb,gcsb,gcsb-det BASELINES=csr,coo \
#   IDEAL=gen:ideal:256 N=256 PS="0.01 0.1" REPS=1 WARMUP=0 EXTRA_ARGS="--backend cpu" \
#   bench/gcsb_sweep.sh /tmp/sweep
set -uo pipefail
dir=${1:?usage: bench/gcsb_sweep.sh DIR [all|ideal|random]}
part=${2:-all}
case "$part" in all | ideal | random) ;; *) echo "unknown part '$part' (all, ideal, random)" >&2; exit 2 ;; esac
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
cd "$(dirname "$0")/.."
bin=${SPMAT_BIN:-./build/gpu/spmat}
precision=${PRECISION:-fp32,fp64}
reps=${REPS:-30}
warmup=${WARMUP:-5}
betas=${BETAS:-8 16 32 64 128}
ps=${PS:-0.0001 0.0005 0.001 0.005 0.01 0.05 0.1 0.2 0.3 0.4 0.5}
n=${N:-8192}
ideal=${IDEAL:-gen:ideal}
block_formats=${BLOCK_FORMATS:-csb,gcsb,gcsb-thesis,gcsb-det}
baselines=${BASELINES:-cusparse-csr,cusparse-csr-alg2,cusparse-coo,csr-scalar,coo}
read -r -a extra <<< "${EXTRA_ARGS:-}"

status=0
step() {
  local name=$1; shift
  local t0=$SECONDS
  "$bin" bench --ops spmv,spmv_t --precision "$precision" --reps "$reps" --warmup "$warmup" \
    "${extra[@]}" --json "$dir/$name.json" "$@" > "$dir/$name.log" 2>&1
  local rc=$?
  echo "$name: exit $rc, $((SECONDS - t0)) s" >> "$dir/steps.txt"
  [ "$rc" -eq 0 ] || status=1
}

if [ "$part" != random ]; then
  for b in $betas; do
    opts=()
    IFS=, read -r -a fmts <<< "$block_formats"
    for f in "${fmts[@]}"; do opts+=(--option "$f:beta=$b"); done
    step "ideal_beta$b" --formats "$block_formats" "${opts[@]}" "$ideal"
  done
  step ideal_baselines --formats "$baselines" "$ideal"
fi

if [ "$part" != ideal ]; then
  mats=()
  for p in $ps; do mats+=("gen:random_p:$n:$p"); done
  step random_p --formats "$block_formats,$baselines" "${mats[@]}"
fi

touch "$dir/done"
exit $status
