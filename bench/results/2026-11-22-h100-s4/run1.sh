#!/usr/bin/env bash
# session-4 GPU run 1 (driver, run detached on the device from the repo root with data/ carried):
# build, an ncu probe of the bccoo-gpu stream kernel, the HiSparse final runs (fp32 + fp64) and
# the tiled measurement matrix (PARTS=all: every variant, cuSPARSE and the model's choice per K)
# for row and column major, fp32 and fp64. Results in /tmp/r1; steps.txt has exit codes + times.
set -uo pipefail
R=/tmp/r1; mkdir -p $R; cd "$(dirname "$0")/../../.."  # the repo root
export PATH=/usr/local/cuda/bin:$PATH
step() { local n=$1; shift; local t=$SECONDS; "$@" > $R/$n.log 2>&1; echo "$n: exit $?, $((SECONDS-t)) s" >> $R/steps.txt; }
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv > $R/gpu.txt 2>&1
step build bash -c "cmake -S . -B build/gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DSPMAT_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 -DSPMAT_SKIP_INSTALL_TEST=ON && cmake --build build/gpu -j16"
[ -x build/gpu/spmat ] || { touch $R/done; exit 1; }
export SPMAT=./build/gpu/spmat
for m in gen:lap2d:2000 gen:random_k:2000000:16; do
  step ncu_${m//[:]/_} ncu --kernel-name regex:bccoo_gpu_stream --launch-skip 3 --launch-count 1 \
    --section SpeedOfLight --section WarpStateStats --section InstructionStats --section Occupancy \
    --section MemoryWorkloadAnalysis $SPMAT bench --backend cuda --precision fp64 --formats bccoo-gpu \
    --option bccoo-gpu:kernel=stream --ops spmv --reps 3 --warmup 1 $m
done
PRECISIONS=fp32,fp64 step hisparse bench/hisparse_bench.sh $R/hisparse final
export REPS=10 WARMUP=3
REAL="data/Maragal_6.mtx.gz data/EAT_RS.mtx.gz data/ct2010.mtx.gz data/HEP-th-new.mtx.gz"
GEN7="gen:lap2d:1000 gen:random_k:500000:16 gen:rmat:20:16 gen:powerlaw:1000000:16 gen:banded:1000000:8 gen:lap3d:100 data/G3_circuit.mtx.gz"
PRECISIONS=fp32 LAYOUTS=row PARTS=all step t_f32row bench/tiled_bench.sh $R/tiled $GEN7 $REAL
PRECISIONS=fp64 LAYOUTS=row PARTS=all step t_f64row bench/tiled_bench.sh $R/tiled $GEN7 $REAL
PRECISIONS=fp32 LAYOUTS=col PARTS=all step t_f32col bench/tiled_bench.sh $R/tiled $GEN7 $REAL
PRECISIONS=fp64 LAYOUTS=col PARTS=all step t_f64col bench/tiled_bench.sh $R/tiled $GEN7 $REAL
touch $R/done
