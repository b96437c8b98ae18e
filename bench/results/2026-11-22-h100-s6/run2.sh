#!/bin/bash
# session-6 device run 2 (1f34b2a): same-run A/B final vs x-evict-last; full GPU tests; then
# bench/bccoo_gpu.sh (no chunk runs) with the final binary.
cd "$(dirname "$0")/.."
R=out7; rm -rf $R; mkdir -p $R/bccoo
rm -rf data/bv6; tar xzf data/bv6.tgz -C data
B=data/bv6
nvidia-smi --query-gpu=name,driver_version --format=csv > $R/gpu.txt 2>&1
M="gen:lap2d:2000 gen:lap3d:150 gen:banded:2000000:4 data/G3_circuit.mtx.gz gen:random_k:2000000:16 gen:rmat:21:16 gen:powerlaw:2000000:8"
common="--backend cuda --ops spmv --reps 50 --precision fp64"
for round in 1 2; do for v in final xlast; do
  SPMAT_COMMIT=1f34b2a $B/v_$v bench $common --formats bccoo-gpu --json $R/ab${round}_$v.json $M > $R/ab${round}_$v.log 2>&1
  echo "$v $round done $(date +%T)" >> $R/progress
done; done
$B/t_final --gtest_brief=1 > $R/gpu-tests.log 2>&1; echo "tests exit $?" > $R/tests.rc
echo "tests done $(date +%T)" >> $R/progress
SPMAT_COMMIT=1f34b2a SPMAT=$B/v_final BCCOO_CHUNKS="" bash bench/bccoo_gpu.sh $R/bccoo > $R/bccoo/run.log 2>&1; echo "bench exit $?" > $R/bench.rc
echo "bench done $(date +%T)" >> $R/progress
touch $R/DONE
