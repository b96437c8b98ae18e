#!/bin/bash
# session-6 device run 4: the row-walk de-duplication (for_each_row_end) — full GPU tests, and a
# same-run timing check against the measured 1f34b2a binary (final) on the criterion suite.
cd "$(dirname "$0")/.."
R=out9; rm -rf $R; mkdir -p $R
rm -rf data/bv7; tar xzf data/bv7.tgz -C data
B=data/bv7
nvidia-smi --query-gpu=name,driver_version --format=csv > $R/gpu.txt 2>&1
$B/t_dedup --gtest_brief=1 > $R/gpu-tests.log 2>&1; echo "tests exit $?" > $R/tests.rc
M="gen:lap2d:2000 gen:lap3d:150 gen:banded:2000000:4 data/G3_circuit.mtx.gz gen:random_k:2000000:16 gen:rmat:21:16 gen:powerlaw:2000000:8"
common="--backend cuda --ops spmv --reps 50 --precision fp64"
for v in final dedup; do
  SPMAT_COMMIT=$( [ $v = final ] && echo 1f34b2a || echo 9d8814b ) $B/v_$v bench $common --formats bccoo-gpu --json $R/ab_$v.json $M > $R/ab_$v.log 2>&1
done
touch $R/DONE
