#!/usr/bin/env bash
# bench/gcsb_sweep.sh DIR [all|ideal|random|real] — the GCSB thesis sweeps (Izawa 2023, spec gcsb.md):
#   ideal:  β = 8, 16, 32, 64, 128 for csb, gcsb, gcsb-thesis, gcsb-det (+ gcsb-atomic) on the
#           8192² ideal matrix (thesis Tables 4.5–4.7), plus the β-free baselines once;
#   random: random_p on 8192², p = 0.0001 … 0.5 (thesis Table 4.4), every format at its default
#           β (Eq. 3.3: fp32 32, fp64 16), against COO, CSR scalar and cuSPARSE;
#   real:   the thesis Table 4.3 matrices found in $SPMAT_MATRIX_DIR (default ./data) as
#           NAME.mtx.gz or NAME.mtx; missing ones are listed in DIR/missing.txt and skipped.
#           Symmetric files are expanded to full storage by the reader (spec OQ12 "correct"
#           mode): both triangles are stored and multiplied, so nnz and memory are those of the
#           full matrix, not the thesis's stored-triangle counts (docs/formats/gcsb.md).
# One JSON (+ log) per `spmat bench` run in DIR: ideal_beta<β>.json, ideal_baselines.json,
# random_p.json, real.json; DIR/steps.txt lists each step's exit status, DIR/done appears at
# the end. bench/gcsb_tables.py DIR prints the markdown tables.
# Both precisions, spmv and spmv_t. Storage (memory ratio vs CSR) is in each result's
# storage_bytes. Meant to stay under 8 minutes on one H200 (--reps 30, --warmup 5); run the two
# parts as separate commands if a device command must be shorter.
#
# Environment overrides (defaults in brackets):
#   SPMAT_BIN [./build/gpu/spmat]  PRECISION [fp32,fp64]  REPS [30]  WARMUP [5]
#   BETAS ["8 16 32 64 128"]  PS ["0.0001 0.0005 0.001 0.005 0.01 0.05 0.1 0.2 0.3 0.4 0.5"]
#   N [8192]  IDEAL [gen:ideal]  BLOCK_FORMATS [csb,gcsb,gcsb-thesis,gcsb-det]
#   BASELINES [cusparse-csr,cusparse-csr-alg2,cusparse-coo,csr-scalar,coo]  EXTRA_ARGS [""]
#   SPMAT_MATRIX_DIR [./data]  REAL [the 18 Table 4.3 names]
# Dry check of the command lines on a CPU build (no GPU):
#   SPMAT_BIN=./build-cpu/spmat BLOCK_FORMATS=csb,gcsb,gcsb-det BASELINES=csr,coo \
#   IDEAL=gen:ideal:256 N=256 PS="0.01 0.1" REPS=1 WARMUP=0 EXTRA_ARGS="--backend cpu" \
#   bench/gcsb_sweep.sh /tmp/sweep && bench/gcsb_tables.py /tmp/sweep
set -uo pipefail
dir=${1:?usage: bench/gcsb_sweep.sh DIR [all|ideal|random]}
part=${2:-all}
case "$part" in all | ideal | random | real) ;; *) echo "unknown part '$part' (all, ideal, random, real)" >&2; exit 2 ;; esac
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
block_formats=${BLOCK_FORMATS:-csb,gcsb,gcsb-thesis,gcsb-det,gcsb-atomic}
matrix_dir=${SPMAT_MATRIX_DIR:-./data}
real=${REAL:-msc00726 spaceStation_4 CAG_mat1916 heart2 psmigr_3 raefsky6 heart1 exdata_1 TSC_OPF_1047 nemeth26 sme3Da appu human_gene2 olafu nd6k human_gene1 nd12k mouse_gene}
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

if [ "$part" = all ] || [ "$part" = random ]; then
  mats=()
  for p in $ps; do mats+=("gen:random_p:$n:$p"); done
  step random_p --formats "$block_formats,$baselines" "${mats[@]}"
fi

if [ "$part" = all ] || [ "$part" = real ]; then
  mats=()
  : > "$dir/missing.txt"
  for m in $real; do
    f=""
    for cand in "$matrix_dir/$m.mtx.gz" "$matrix_dir/$m.mtx"; do [ -f "$cand" ] && { f=$cand; break; }; done
    if [ -n "$f" ]; then mats+=("$f"); else echo "$m" >> "$dir/missing.txt"; fi
  done
  if [ -s "$dir/missing.txt" ]; then
    echo "gcsb_sweep: not in $matrix_dir (skipped): $(tr '\n' ' ' < "$dir/missing.txt")" >&2
  fi
  if [ "${#mats[@]}" -gt 0 ]; then
    step real --formats "$block_formats,$baselines" "${mats[@]}"
  else
    echo "real: skipped, no Table 4.3 matrix in $matrix_dir" >> "$dir/steps.txt"
  fi
fi

touch "$dir/done"
exit $status
