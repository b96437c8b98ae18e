#!/usr/bin/env bash
# session-3 GPU run 1 (driver, run detached on the device from the repo root with data/ carried):
# builds spmat, runs measurement steps into /tmp/r1 (tarred by the polling calls).
set -uo pipefail
R=/tmp/r1; mkdir -p $R; cd "$(dirname "$0")/../../.."  # the repo root
export PATH=/usr/local/cuda/bin:$PATH
t0=$SECONDS
{ cmake -S . -B build/gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DSPMAT_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 -DSPMAT_SKIP_INSTALL_TEST=ON && cmake --build build/gpu -j16 --target spmat; } > $R/build.log 2>&1 || { echo build failed >> $R/steps.txt; touch $R/done; exit 1; }
echo "build: $((SECONDS-t0)) s" >> $R/steps.txt
B=./build/gpu/spmat
step() { local n=$1; shift; local t=$SECONDS; "$@" > $R/$n.log 2>&1; echo "$n: exit $?, $((SECONDS-t)) s" >> $R/steps.txt; }
mkdir -p $R/gcsb $R/bccoo $R/tiled
P="gen:ideal gen:random_p:8192:0.005 gen:random_p:8192:0.01 gen:random_p:8192:0.05 gen:random_p:8192:0.1 gen:random_p:8192:0.2 gen:random_p:8192:0.3 gen:random_p:8192:0.4 gen:random_p:8192:0.5"
for cfg in fp64:32 fp64:64 fp32:16 fp32:64; do
  pr=${cfg%%:*}; b=${cfg##*:}
  step gcsb_${pr}_b$b $B bench --ops spmv,spmv_t --precision $pr --reps 30 --warmup 5 --formats gcsb,gcsb-det --option gcsb:beta=$b --option gcsb-det:beta=$b --json $R/gcsb/beta_${pr}_$b.json $P
done
step bccoo_unw $B bench --backend cuda --ops spmv --reps 50 --precision fp64 --formats bccoo-gpu,csr,cusparse-csr,cusparse-csr-alg2,cusparse-coo --json $R/bccoo/bccoo_gpu_unweighted.json gen:random_k:2000000:16:values=ones gen:rmat:21:16:values=ones gen:powerlaw:2000000:8:values=ones
REAL="data/Maragal_6.mtx.gz data/EAT_RS.mtx.gz data/ct2010.mtx.gz data/HEP-th-new.mtx.gz"
export SPMAT=$B REPS=20 WARMUP=3
PRECISIONS=fp32 LAYOUTS=row PARTS="cusparse model" step tiled_real bench/tiled_bench.sh $R/tiled $REAL
PRECISIONS=fp64 LAYOUTS=row PARTS="cusparse" step tiled_cus64row bench/tiled_bench.sh $R/tiled
PRECISIONS="fp32 fp64" LAYOUTS=col PARTS="cusparse" step tiled_cuscol bench/tiled_bench.sh $R/tiled
PRECISIONS=fp32 LAYOUTS=row PARTS="plain balanced reordered" step tiled_var bench/tiled_bench.sh $R/tiled
touch $R/done
