#!/usr/bin/env bash
# bench/tiled_bench.sh — tiled SpMM (issue 8): every tiled variant vs cuSPARSE SpMM, fp32 + fp64,
# K in {16,32,64,128}, row-major (and column-major, the paper's layout), plus the model's
# predictions (spmat model --json) for the same cases. One `spmat bench` call per matrix and
# variant, so a part can be re-run alone; JSON goes to DIR/bench/ and DIR/model/.
#
# usage: bench/tiled_bench.sh DIR [matrix ...]
#   env: SPMAT=path/to/spmat (default ./build/spmat, then ./build-cuda/spmat)
#        SPMAT_MATRIX_DIR (default ./data): real matrices <name>.mtx.gz, skipped when missing
#        PRECISIONS="fp32 fp64"  KS="16,32,64,128"  LAYOUTS="row col"  REPS=30  WARMUP=5
#        PARTS="cusparse plain balanced reordered model"  SKIP_MODEL=1 (no predictions)
#        (PARTS=all: the same cases in one `spmat bench` call per matrix, layout and precision:
#         one load and one reference per matrix instead of eight)
#        (extra parts: sell = the paper's kernel; loops = batch 4/8 × cstore plain/stream, kt 64/32;
#         panel = kernel=panel (B row slice once per panel of R rows), R in PANEL_ROWS="8 16",
#         row layout only: column-major calls run the row kernel)
# Without matrix arguments the suite is the generated large matrices below + the real ones.
# Time: ~1 min per generated matrix and part on an H200; split the suite over several calls
# (e.g. two or three matrices per call) to stay under 8 minutes per device command.
set -euo pipefail
DIR=${1:?usage: bench/tiled_bench.sh DIR [matrix ...]}
shift
SPMAT=${SPMAT:-}
if [[ -z "$SPMAT" ]]; then
  for c in ./build/spmat ./build-cuda/spmat; do [[ -x $c ]] && SPMAT=$c && break; done
fi
[[ -x "$SPMAT" ]] || { echo "tiled_bench: no spmat binary (set SPMAT=...)" >&2; exit 2; }
MDIR=${SPMAT_MATRIX_DIR:-./data}
PRECISIONS=${PRECISIONS:-"fp32 fp64"}
KS=${KS:-16,32,64,128}
LAYOUTS=${LAYOUTS:-"row col"}
REPS=${REPS:-30}
WARMUP=${WARMUP:-5}
PARTS=${PARTS:-"cusparse plain balanced reordered model"}
BACKEND=${BACKEND:-}
mkdir -p "$DIR/bench" "$DIR/model"

if [[ $# -gt 0 ]]; then
  MATRICES=("$@")
else
  MATRICES=(gen:lap2d:1000 gen:random_k:500000:16 gen:rmat:20:16 gen:powerlaw:1000000:16
            gen:banded:1000000:8 gen:lap3d:100)
  for name in G3_circuit Maragal_6 EAT_RS ct2010 HEP-th-new; do
    f="$MDIR/$name.mtx.gz"
    if [[ -f "$f" ]]; then MATRICES+=("$f"); else echo "tiled_bench: skipping $name (no $f)" >&2; fi
  done
fi

# The row-wise builds with and without each optimization (tiled_model_eval.py names them back).
declare -A VARIANT_OPTS=([plain]="kernel=rows,variant=baseline,reorder=off"
                         [balanced]="kernel=rows,variant=segmented,reorder=off"
                         [reordered]="kernel=rows,variant=baseline,reorder=on")
safe() { echo "$1" | sed 's#.*/##; s#\.mtx\.gz$##; s#[^A-Za-z0-9_.-]#_#g'; }
backend_flag=()
[[ -n "$BACKEND" ]] && backend_flag=(--backend "$BACKEND")

for m in "${MATRICES[@]}"; do
  tag=$(safe "$m")
  for layout in $LAYOUTS; do
    common=(--ops spmm --k "$KS" --layout "$layout" --reps "$REPS" --warmup "$WARMUP" "${backend_flag[@]}")
    for prec in $PRECISIONS; do
      for part in $PARTS; do
        out="$DIR/bench/${tag}_${layout}_${prec}_${part}.json"
        case $part in
          cusparse)
            if [[ "$BACKEND" == cpu ]]; then continue; fi
            "$SPMAT" bench "${common[@]}" --precision "$prec" --formats cusparse-csr,cusparse-csr-alg2,cusparse-coo \
              --json "$out" "$m" || echo "tiled_bench: $m $part failed ($?)" >&2 ;;
          plain|balanced|reordered)
            opt=${VARIANT_OPTS[$part]}
            "$SPMAT" bench "${common[@]}" --precision "$prec" --formats tiled --option "tiled:$opt" \
              --json "$out" "$m" || echo "tiled_bench: $m $part failed ($?)" >&2 ;;
          all)
            # One load of the matrix for every case: cuSPARSE's three SpMMs, the plain, balanced
            # and reordered row-wise builds, and the model's choice planned for each K (tiled:k=K;
            # tiled_model_eval.py keeps a planned build only at its own K).
            vars=()
            for v in plain balanced reordered; do vars+=(--variant "tiled:${VARIANT_OPTS[$v]}"); done
            for k in ${KS//,/ }; do vars+=(--variant "tiled:k=$k"); done
            cus=()
            [[ "$BACKEND" == cpu ]] || cus=(--variant cusparse-csr --variant cusparse-csr-alg2 --variant cusparse-coo)
            "$SPMAT" bench "${common[@]}" --precision "$prec" "${cus[@]}" "${vars[@]}" \
              --json "$out" "$m" || echo "tiled_bench: $m $part failed ($?)" >&2 ;;
          loops)
            # Round-3 attribution of the row kernel's inner loop: batch 4 (+ tail) vs predicated 8,
            # plain vs streaming C stores, and K-tile 64 (two rows per warp at K = 128, fp32).
            for opt in batch=4,cstore=plain batch=4,cstore=stream batch=8,cstore=plain batch=8,cstore=stream \
                       kt=64,batch=4 kt=32,batch=4; do
              "$SPMAT" bench "${common[@]}" --precision "$prec" --formats tiled --option "tiled:$opt" \
                --json "$DIR/bench/${tag}_${layout}_${prec}_loops_${opt//[=,]/_}.json" "$m" ||
                echo "tiled_bench: $m loops $opt failed ($?)" >&2
            done ;;
          panel)
            [[ "$layout" == row ]] || continue
            for pr in ${PANEL_ROWS:-8 16}; do
              "$SPMAT" bench "${common[@]}" --precision "$prec" --formats tiled \
                --option "tiled:kernel=panel,panel_rows=$pr,variant=baseline,reorder=off" \
                --json "$DIR/bench/${tag}_${layout}_${prec}_panel_r$pr.json" "$m" ||
                echo "tiled_bench: $m panel r=$pr failed ($?)" >&2
            done ;;
          sell)
            "$SPMAT" bench "${common[@]}" --precision "$prec" --formats tiled --option "tiled:kernel=sell" \
              --json "$out" "$m" || echo "tiled_bench: $m $part failed ($?)" >&2 ;;
          model)
            # The model plans for the K it will run: one build per K.
            for k in ${KS//,/ }; do
              "$SPMAT" bench --ops spmm --k "$k" --layout "$layout" --reps "$REPS" --warmup "$WARMUP" \
                "${backend_flag[@]}" --precision "$prec" --formats tiled --option "tiled:k=$k" \
                --json "$DIR/bench/${tag}_${layout}_${prec}_model_k$k.json" "$m" ||
                echo "tiled_bench: $m model k=$k failed ($?)" >&2
            done ;;
          *) echo "tiled_bench: unknown part $part" >&2; exit 2 ;;
        esac
      done
      if [[ -z "${SKIP_MODEL:-}" ]]; then
        for k in ${KS//,/ }; do
          "$SPMAT" model "$m" --k "$k" --precision "$prec" --layout "$layout" \
            --json "$DIR/model/${tag}_${layout}_${prec}_k$k.json" > /dev/null ||
            echo "tiled_bench: model $m k=$k failed" >&2
        done
      fi
    done
  done
done
echo "tiled_bench: results in $DIR (python3 bench/tiled_model_eval.py $DIR)" >&2
