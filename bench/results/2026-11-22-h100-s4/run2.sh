#!/usr/bin/env bash
# session-4 GPU run 2 (driver, run detached on the device from the repo root with data/ carried):
# build, all GPU tests (the bccoo-gpu stream/block decode changed: 32-bit local rows/columns,
# 10–12 resident blocks per SM), bccoo-gpu vs cuSPARSE on the >= 1M-row suite (fp64) with an
# ncu probe, then the tiled column-major runs that run 1 could not finish.
set -uo pipefail
R=/tmp/r2; mkdir -p $R; cd "$(dirname "$0")/../../.."  # the repo root
export PATH=/usr/local/cuda/bin:$PATH
step() { local n=$1; shift; local t=$SECONDS; "$@" > $R/$n.log 2>&1; echo "$n: exit $?, $((SECONDS-t)) s" >> $R/steps.txt; }
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv > $R/gpu.txt 2>&1
step build bash -c "cmake -S . -B build/gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DSPMAT_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 -DSPMAT_SKIP_INSTALL_TEST=ON && cmake --build build/gpu -j16"
[ -x build/gpu/spmat ] || { touch $R/done; exit 1; }
export SPMAT=./build/gpu/spmat
step tests_bccoo ./build/gpu/tests/spmat_tests --gtest_brief=1 --gtest_filter='*Bccoo*:*bccoo*'
M="gen:lap2d:2000 gen:lap3d:150 gen:random_k:2000000:16 gen:rmat:21:16 gen:powerlaw:2000000:8 gen:banded:2000000:4 data/G3_circuit.mtx.gz"
mkdir -p $R/bccoo
step bccoo $SPMAT bench --backend cuda --ops spmv --reps 50 --precision fp64 \
  --formats bccoo-gpu,csr,coo,cusparse-csr,cusparse-csr-alg2,cusparse-coo \
  --variant bccoo-gpu:kernel=stream --variant bccoo-gpu:kernel=block --json $R/bccoo/bccoo_gpu_main.json $M
step bccoo_unw $SPMAT bench --backend cuda --ops spmv --reps 50 --precision fp64 \
  --formats bccoo-gpu,csr,cusparse-csr,cusparse-csr-alg2,cusparse-coo --variant bccoo-gpu:kernel=stream \
  --json $R/bccoo/bccoo_gpu_unweighted.json gen:random_k:2000000:16:values=ones \
  gen:rmat:21:16:values=ones gen:powerlaw:2000000:8:values=ones
step ncu_lap2d ncu --kernel-name regex:bccoo_gpu_stream --launch-skip 3 --launch-count 1 \
  --section SpeedOfLight --section WarpStateStats --section InstructionStats --section Occupancy \
  --section MemoryWorkloadAnalysis $SPMAT bench --backend cuda --precision fp64 --formats bccoo-gpu \
  --option bccoo-gpu:kernel=stream --ops spmv --reps 3 --warmup 1 gen:lap2d:2000
step tests bash -c "./build/gpu/tests/spmat_tests --gtest_brief=1 > $R/gpu-tests.log 2>&1"
export REPS=10 WARMUP=3
REAL="data/Maragal_6.mtx.gz data/EAT_RS.mtx.gz data/ct2010.mtx.gz data/HEP-th-new.mtx.gz"
REST="gen:powerlaw:1000000:16 gen:banded:1000000:8 gen:lap3d:100 data/G3_circuit.mtx.gz"
PRECISIONS=fp32 LAYOUTS=col PARTS=all step t_f32col bench/tiled_bench.sh $R/tiled $REST $REAL
PRECISIONS=fp64 LAYOUTS=col PARTS=all step t_f64col bench/tiled_bench.sh $R/tiled gen:lap2d:1000 gen:random_k:500000:16 gen:rmat:20:16 $REST $REAL
touch $R/done
