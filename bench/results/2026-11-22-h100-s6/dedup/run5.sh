#!/bin/bash
# session-6 device run 5: G3_circuit timing check of the row-walk de-duplication, alternating order.
cd "$(dirname "$0")/.."
R=out10; rm -rf $R; mkdir -p $R
rm -rf data/bv7; tar xzf data/bv7.tgz -C data
B=data/bv7
M="data/G3_circuit.mtx.gz gen:lap2d:2000 gen:lap3d:150"
common="--backend cuda --ops spmv --reps 100 --precision fp64"
for r in 1 2; do for v in dedup final; do
  SPMAT_COMMIT=$( [ $v = final ] && echo 1f34b2a || echo 9d8814b ) $B/v_$v bench $common --formats bccoo-gpu --json $R/ab${r}_$v.json $M > $R/ab${r}_$v.log 2>&1
done; done
touch $R/DONE
