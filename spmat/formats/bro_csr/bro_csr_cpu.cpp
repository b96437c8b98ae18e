// spmat/formats/bro_csr/bro_csr_cpu.cpp — OpenMP BRO-CSR kernels: decode a group, spmv, spmv_t.
// SPDX-License-Identifier: MIT
#include <algorithm>
#include <vector>

#include "spmat/core/parallel.hpp"
#include "spmat/formats/bro_csr/bro_csr.hpp"

namespace spmat {

// Contract: x has cols entries, y rows entries (spmv_t swaps them); caller allocates. A group's
// columns are decoded with the kernels' reader (bro_common.hpp) into a per-thread buffer (the
// group's entries, at most 32·⌈longest row/W⌉·W), then each row is summed in CSR order.
// Explicit zeros are multiplied; empty rows give beta*y (beta == 0 never reads y). Groups are
// split dynamically; deterministic. Work 2·nnz flops; bytes as traffic_bytes.
template <class Value, class Index>
void spmv(const BroCsr<Value, Index>& m, const Value* x, Value* y, Value alpha, Value beta) {
  const std::int64_t groups = m.groups(), rpg = m.rows_per_group();
#pragma omp parallel
  {
    std::vector<std::int64_t> cols;
#pragma omp for schedule(dynamic, 16)
    for (std::int64_t g = 0; g < groups; ++g) {
      const std::int64_t r0 = g * rpg, r1 = std::min<std::int64_t>(m.rows, r0 + rpg);
      const std::int64_t first = m.row_ptr[r0];
      cols.resize(static_cast<std::size_t>(m.row_ptr[r1] - first));
      bro_csr_decode(m, g, cols.data());
      for (std::int64_t r = r0; r < r1; ++r) {
        Value sum = 0;
        for (std::int64_t e = m.row_ptr[r]; e < m.row_ptr[r + 1]; ++e)
          sum += m.values[e] * x[cols[e - first]];
        axpby_store(y[r], alpha, sum, beta);
      }
    }
  }
}

// y (cols) = alpha*Aᵀx + beta*y through the same decode; deterministic (scatter_reduce: fixed
// static partition of the groups, per-thread buffers summed in thread order).
template <class Value, class Index>
void spmv_t(const BroCsr<Value, Index>& m, const Value* x, Value* y, Value alpha, Value beta) {
  const std::int64_t rpg = m.rows_per_group();
  scatter_reduce<Value>(m.cols, m.groups(), y, alpha, beta, [&](std::int64_t g, Value* acc) {
    const std::int64_t r0 = g * rpg, r1 = std::min<std::int64_t>(m.rows, r0 + rpg);
    const std::int64_t first = m.row_ptr[r0];
    std::vector<std::int64_t> cols(static_cast<std::size_t>(m.row_ptr[r1] - first));
    bro_csr_decode(m, g, cols.data());
    for (std::int64_t r = r0; r < r1; ++r)
      for (std::int64_t e = m.row_ptr[r]; e < m.row_ptr[r + 1]; ++e)
        acc[cols[e - first]] += m.values[e] * x[r];
  });
}

SPMAT_INSTANTIATE_CPU_KERNELS(BroCsr)

}  // namespace spmat
