#!/usr/bin/env bash
# bench/hisparse_stats.sh — HiSparse node statistics (thesis Fig. 7.1) and bytes per non-zero
# against COO and CSR (thesis Fig. 3.2), printed as Markdown, from the real builder (d = 128).
# Runs on the CPU: the tables come from the test HiSparseStats.PrintTables, which is skipped
# unless SPMAT_HISPARSE_STATS lists the matrices.
# SPDX-License-Identifier: MIT
#
#   bench/hisparse_stats.sh [BUILD_DIR]          # default build-cpu; ~1–3 minutes on 2 cores
# Environment: SPMAT_MATRIX_DIR (default ./data; the thesis matrices found there are added),
# HISPARSE_STATS_D (node size, default 128), HISPARSE_STATS_GEN (override the generated list).
set -euo pipefail
BUILD=${1:-build-cpu}
MDIR=${SPMAT_MATRIX_DIR:-./data}
GEN=${HISPARSE_STATS_GEN:-"gen:lap2d:2000;gen:random_k:2000000:16;gen:rmat:21:16;gen:powerlaw:2000000:16;gen:banded:1000000:8;gen:ideal;gen:random_p:5000:1"}
LIST="$GEN"
for m in asia_osm ASIC_320k ldoor mip1 bone010 cage12 parabolic_fem poisson3Da circuit5M \
         cont11_l rail4284 rajat31 FullChip Rucci1 sme3Dc in-2004 kkt_power webbase-1M G3_circuit; do
  if [[ -f "$MDIR/$m.mtx.gz" ]]; then LIST+=";$MDIR/$m.mtx.gz";
  else echo "hisparse_stats: $m not found in $MDIR, skipped" >&2; fi
done
SPMAT_HISPARSE_STATS="$LIST" SPMAT_HISPARSE_STATS_D="${HISPARSE_STATS_D:-128}" \
  "$BUILD/tests/spmat_tests" --gtest_filter=HiSparseStats.PrintTables | sed -n '/^###/,$p' | grep -v '^\[' 
