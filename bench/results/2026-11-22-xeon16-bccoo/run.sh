#!/bin/bash
# session-6 device run 3: bccoo CPU scaling on the GPU machine's 16 cores (issue 6, the paper's
# "compression pays once the cores saturate memory bandwidth"): bench/bccoo_cpu.sh at 1..16 threads.
cd "$(dirname "$0")/.."
R=out8; rm -rf $R; mkdir -p $R
(lscpu; echo; nproc; free -g) > $R/cpu.txt 2>&1
BUILD=data/cpu16 SPMAT_MATRIX_DIR=data BCCOO_THREADS="1 2 4 8 16" BCCOO_REPS=10 \
  SPMAT_COMMIT=$(cat data/cpu16/COMMIT) bash bench/bccoo_cpu.sh $R/cpu16 \
  data/G3_circuit.mtx.gz data/Maragal_6.mtx.gz data/bcsstk29_pattern.mtx.gz data/bcsstk33_pattern.mtx.gz \
  gen:lap2d:1000 gen:random_k:1000000:16 gen:lap2d:2000 gen:random_k:2000000:16 > $R/run.log 2>&1
echo "exit $?" > $R/rc
touch $R/DONE
