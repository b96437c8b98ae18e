#!/usr/bin/env bash
# session-3 GPU run 2 (driver, run detached on the device from the repo root with data/ carried):
# full build + GPU tests + final measurements into /tmp/r2. The machine was released before
# the steps after t_f64row finished (see run2-steps.txt); run 3 filled part of the gap.
set -uo pipefail
R=/tmp/r2; mkdir -p $R; cd "$(dirname "$0")/../../.."  # the repo root
export PATH=/usr/local/cuda/bin:$PATH
step() { local n=$1; shift; local t=$SECONDS; "$@" > $R/$n.log 2>&1; echo "$n: exit $?, $((SECONDS-t)) s" >> $R/steps.txt; }
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv > $R/gpu.txt 2>&1
step build bash -c "cmake -S . -B build/gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DSPMAT_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 -DSPMAT_SKIP_INSTALL_TEST=ON && cmake --build build/gpu -j16"
[ -x build/gpu/spmat ] || { touch $R/done; exit 1; }
step tests bash -c "./build/gpu/tests/spmat_tests --gtest_brief=1 > $R/gpu-tests.log 2>&1"
export SPMAT=./build/gpu/spmat REPS=10 WARMUP=3
REAL="data/Maragal_6.mtx.gz data/EAT_RS.mtx.gz data/ct2010.mtx.gz data/HEP-th-new.mtx.gz"
GEN7="gen:lap2d:1000 gen:random_k:500000:16 gen:rmat:20:16 gen:powerlaw:1000000:16 gen:banded:1000000:8 gen:lap3d:100 data/G3_circuit.mtx.gz"
PRECISIONS=fp32 LAYOUTS=row PARTS=model step t_f32row bench/tiled_bench.sh $R/tiled $GEN7 $REAL
SPMAT_BIN=$SPMAT step hisparse bench/hisparse_bench.sh $R/hisparse round4
PRECISIONS=fp64 LAYOUTS=row PARTS=model step t_f64row bench/tiled_bench.sh $R/tiled $GEN7
PRECISIONS=fp32 LAYOUTS=col PARTS=model step t_f32col bench/tiled_bench.sh $R/tiled $GEN7
PRECISIONS=fp32 LAYOUTS=row PARTS="plain balanced reordered" step t_var bench/tiled_bench.sh $R/tiled gen:banded:1000000:8 gen:lap3d:100 data/G3_circuit.mtx.gz gen:powerlaw:1000000:16
PRECISIONS=fp64 LAYOUTS=col PARTS=model step t_f64col bench/tiled_bench.sh $R/tiled $GEN7
touch $R/done
