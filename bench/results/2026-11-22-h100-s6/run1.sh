#!/bin/bash
# session-6 device run 1: GPU tests of the one-thread-per-chunk fix-up + streaming hints build;
# same-run A/B of base (089080c), fix1 (c5bba6f fix-up), hints (fix1 + ld/st .cs) on the suite.
cd "$(dirname "$0")/.."
R=out6; rm -rf $R; mkdir -p $R
tar xzf data/bv6.tgz -C data
B=data/bv6
nvidia-smi --query-gpu=name,driver_version --format=csv > $R/gpu.txt 2>&1
$B/t_hints --gtest_brief=1 --gtest_filter='*ccoo*:*onformance*' > $R/tests_bccoo.log 2>&1; echo "tests exit $?" > $R/tests.rc
M="gen:lap2d:2000 gen:lap3d:150 gen:banded:2000000:4 data/G3_circuit.mtx.gz gen:random_k:2000000:16 gen:rmat:21:16 gen:powerlaw:2000000:8"
common="--backend cuda --ops spmv --reps 50 --precision fp64"
for v in base fix1 hints; do
  $B/v_$v bench $common --formats bccoo-gpu --json $R/ab_$v.json $M > $R/ab_$v.log 2>&1
  echo "$v done $(date +%T)" >> $R/progress
done
$B/v_base bench $common --formats cusparse-csr,cusparse-coo --json $R/ab_cusparse.json $M > $R/ab_cusparse.log 2>&1
for v in base fix1 hints; do
  $B/v_$v bench $common --formats bccoo-gpu --json $R/ab2_$v.json $M > $R/ab2_$v.log 2>&1
  echo "$v round2 done $(date +%T)" >> $R/progress
done
touch $R/DONE
