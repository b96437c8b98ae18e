#!/bin/bash
# session-5 final device run (089080c): full GPU tests, then bench/bccoo_gpu.sh without chunk runs
cd "$(dirname "$0")/.."
R=out5; mkdir -p $R/bccoo
export SPMAT_COMMIT=089080c
nvidia-smi --query-gpu=name,driver_version --format=csv > $R/gpu.txt 2>&1
bv/spmat_tests --gtest_brief=1 > $R/gpu-tests.log 2>&1; echo "tests exit $?" > $R/tests.rc
SPMAT=bv/spmat BCCOO_CHUNKS="" bash bench/bccoo_gpu.sh $R/bccoo > $R/bccoo/run.log 2>&1; echo "bench exit $?" > $R/bench.rc
touch $R/DONE
