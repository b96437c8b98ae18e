// spmat/formats/bro_hyb/bro_hyb_cpu.cpp — OpenMP BRO-HYB kernels (BRO-ELL pass + BRO-COO pass).
// SPDX-License-Identifier: MIT
#include <vector>

#include "spmat/core/parallel.hpp"
#include "spmat/formats/bro_hyb/bro_hyb.hpp"

namespace spmat {

// Contract: as BRO-ELL and BRO-COO (x: cols, y: rows; spmv_t swaps). spmv: the COO part's row
// sums go to a temporary (rows values, scatter_reduce), then each BRO-ELL row adds its COO sum
// before y = alpha*s + beta*y (beta == 0 never reads y). Deterministic. Work 2·nnz flops.
template <class Value, class Index>
void spmv(const BroHyb<Value, Index>& m, const Value* x, Value* y, Value alpha, Value beta) {
  if (m.coo.nnz == 0) {
    bro_ell_spmv_plus(m.ell, x, y, alpha, beta, static_cast<const Value*>(nullptr));
    return;
  }
  std::vector<Value> tmp(static_cast<std::size_t>(m.rows));
  spmv(m.coo, x, tmp.data(), Value(1), Value(0));
  bro_ell_spmv_plus(m.ell, x, y, alpha, beta, tmp.data());
}

template <class Value, class Index>
void spmv_t(const BroHyb<Value, Index>& m, const Value* x, Value* y, Value alpha, Value beta) {
  const std::int64_t ns = m.ell.slices();
  scatter_reduce<Value>(m.cols, ns + m.coo.intervals(), y, alpha, beta,
                        [&](std::int64_t i, Value* acc) {
                          if (i < ns)
                            bro_ell_scatter_t(m.ell, i, x, acc);
                          else
                            bro_coo_scatter_t(m.coo, i - ns, x, acc);
                        });
}

SPMAT_INSTANTIATE_CPU_KERNELS(BroHyb)

}  // namespace spmat
