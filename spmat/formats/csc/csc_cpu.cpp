// spmat/formats/csc/csc_cpu.cpp — OpenMP kernels of CSC: spmv_t (column gather), spmv (scatter_reduce).
// SPDX-License-Identifier: MIT
#include "spmat/core/parallel.hpp"
#include "spmat/formats/csc/csc.hpp"

namespace spmat {

// Contract: x has rows entries, y cols entries; caller allocates. Column c's entries are
// summed in storage order (increasing row) by one thread: deterministic. Explicit zeros are
// multiplied like any entry; empty columns get alpha*0 + beta*y (beta == 0: y is not read).
// Columns split dynamically in chunks of 256 as CSR's rows are. Work 2·nnz flops.
template <class Value, class Index>
void spmv_t(const CscStorage<Value, Index>& s, const Value* x, Value* y, Value alpha, Value beta) {
  const auto& a = s.a;
#pragma omp parallel for schedule(dynamic, 256)
  for (Index c = 0; c < a.cols; ++c) {
    Value sum = 0;
    for (Index k = a.col_ptr[c]; k < a.col_ptr[c + 1]; ++k) sum += a.values[k] * x[a.row_idx[k]];
    axpby_store(y[c], alpha, sum, beta);
  }
}

// Contract: x has cols entries, y rows entries. Columns are split statically over the threads;
// each scatters values[k]*x[c] into a private buffer of rows values (scatter_reduce), buffers
// are summed in thread order: deterministic for a fixed thread count. Scratch threads×rows.
template <class Value, class Index>
void spmv(const CscStorage<Value, Index>& s, const Value* x, Value* y, Value alpha, Value beta) {
  const auto& a = s.a;
  scatter_reduce<Value>(a.rows, a.cols, y, alpha, beta, [&](std::int64_t c, Value* acc) {
    const Value xc = x[c];
    for (Index k = a.col_ptr[c]; k < a.col_ptr[c + 1]; ++k) acc[a.row_idx[k]] += a.values[k] * xc;
  });
}

#define SPMAT_INSTANTIATE(V, I)                                     \
  template void spmv(const CscStorage<V, I>&, const V*, V*, V, V); \
  template void spmv_t(const CscStorage<V, I>&, const V*, V*, V, V);
SPMAT_FOR_EACH_TYPE_PAIR(SPMAT_INSTANTIATE)
#undef SPMAT_INSTANTIATE

}  // namespace spmat
