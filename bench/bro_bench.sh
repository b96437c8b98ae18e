#!/usr/bin/env bash
# bench/bro_bench.sh DIR — the BRO GPU benchmark (issue 5): BRO formats against ELL, ELLPACK-R,
# SELL, HYB, CSR and cuSPARSE, fp32 and fp64, on the issue's targets (gen:lap2d:2000, the ~10M-row
# gen:lap3d:215, G3_circuit) and the matrices where BRO-ELL's η >= 70 % (docs/formats/bro.md,
# "Which matrices have η >= 70 %"). Writes DIR/bro_<prec>.json (+ .log) per precision, and
# DIR/bro_variants_fp64.json: the paper's settings (h=256, first=abs) and the classic kernel of
# bro-ell, for the kernel comparison. Expects ./build/gpu/spmat (scripts/gpu-check builds it).
# Takes about 9-12 minutes on an H200 (the builds of the 10M-row matrices dominate). Then:
#   python3 bench/bro_table.py DIR/bro_fp64.json DIR/bro_fp32.json DIR/bro_variants_fp64.json
# SPDX-License-Identifier: MIT
set -uo pipefail
dir=${1:?usage: bench/bro_bench.sh DIR}
mkdir -p "$dir"
cd "$(dirname "$0")/.."
export SPMAT_MATRIX_DIR=${SPMAT_MATRIX_DIR:-$PWD/data}
bin=${SPMAT_BIN:-./build/gpu/spmat}

targets=(gen:lap2d:2000 gen:lap3d:215)
g3="$SPMAT_MATRIX_DIR/G3_circuit.mtx.gz"
if [[ -f $g3 ]]; then targets+=("$g3"); else echo "G3_circuit skipped: $g3 not found" | tee "$dir/skipped.txt"; fi
# η >= 70 % for BRO-ELL (spmat compress; docs/formats/bro.md) and large enough (> 50 MB L2).
eta70=(gen:lap3d27:100 gen:banded:2000000:16)

base=(ell ellr sell hyb csr cusparse-csr cusparse-csr-alg2 cusparse-coo)
bro=(bro-ell bro-hyb bro-csr)
join() { local IFS=,; echo "$*"; }

run() {  # name, then bench args
  local name=$1; shift
  echo "== $name: $bin bench $*" | tee -a "$dir/steps.txt"
  "$bin" bench --ops spmv --json "$dir/$name.json" "$@" > "$dir/$name.log" 2>&1
  echo "$name: exit $?" | tee -a "$dir/steps.txt"
}

for prec in fp64 fp32; do
  run "bro_$prec" --precision "$prec" --formats "$(join "${bro[@]}" "${base[@]}")" \
    "${targets[@]}" "${eta70[@]}"
  # BAR costs ~50 s of host time on the 70M-nonzero lap3d (and gains nothing on a stencil):
  # bro-ell-bar runs on the other matrices only.
  run "bro_bar_$prec" --precision "$prec" --formats bro-ell-bar,cusparse-csr,cusparse-coo \
    gen:lap2d:2000 "${targets[@]:2}" "${eta70[@]}"
done
# Kernel / coding variants of bro-ell (fp64): paper settings with the new kernel, the classic
# kernel with the new coding, and unroll 4.
run bro_variants_paper_fp64 --precision fp64 --formats bro-ell,cusparse-csr,cusparse-coo \
  --option bro-ell:h=256 --option bro-ell:first=abs "${targets[@]}"
run bro_variants_classic_fp64 --precision fp64 --formats bro-ell,cusparse-csr,cusparse-coo \
  --option bro-ell:kernel=classic "${targets[@]}"
run bro_variants_unroll4_fp64 --precision fp64 --formats bro-ell,cusparse-csr,cusparse-coo \
  --option bro-ell:unroll=4 "${targets[@]}"
# Round 2: the fit kernel (default) against the batched one, both precisions, every target and
# η >= 70 % matrix (the batched kernel is what the fit kernel falls back to); bro-hyb with the
# paper's CUSP split against the byte-cost split (default, in bro_<prec>.json).
for prec in fp64 fp32; do
  run "bro_variants_batched_$prec" --precision "$prec" --formats bro-ell,bro-hyb,ell \
    --option bro-ell:kernel=batched --option bro-hyb:kernel=batched "${targets[@]}" "${eta70[@]}"
done
# Round 3: the 64-bit-only fit kernel (round 2's; 128-bit rows such as G3_circuit and lap3d run
# batched) against the default 128-bit fit kernel (in bro_<prec>.json).
run bro_variants_fit64_fp64 --precision fp64 --formats bro-ell,bro-hyb,ell \
  --option bro-ell:fit_bits=64 --option bro-hyb:fit_bits=64 "${targets[@]}"
run bro_variants_cusp_split_fp64 --precision fp64 --formats bro-hyb,hyb \
  --option bro-hyb:split=cusp "${targets[@]}"
touch "$dir/done"
