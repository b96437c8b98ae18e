// spmat/formats/bro_ell/bro_ell_cpu.cpp — OpenMP BRO-ELL kernels: decode on the fly, spmv, spmv_t.
// SPDX-License-Identifier: MIT
#include "spmat/core/parallel.hpp"
#include "spmat/formats/bro_ell/bro_ell.hpp"

namespace spmat {

// Contract: x has cols entries, y rows entries (spmv_t swaps them); caller allocates; `extra`
// (rows, original order) may be null. Each stored row is decoded with the kernels' reader
// (bro_common.hpp) and summed in column order; y is written at the row's original index, so a
// BAR permutation is invisible to the caller. Explicit zeros are multiplied; padding is skipped
// (δ = 0); empty rows give beta*y (beta == 0 never reads y). Slices are split dynamically.
// Deterministic. Work 2·nnz flops; bytes as traffic_bytes.
template <class Value, class Index>
void bro_ell_spmv_plus(const BroEll<Value, Index>& e, const Value* x, Value* y, Value alpha,
                       Value beta, const Value* extra) {
  const std::int64_t slices = e.slices(), h = e.h, rows = e.rows;
#pragma omp parallel for schedule(dynamic, 4)
  for (std::int64_t s = 0; s < slices; ++s) {
    for (std::int64_t t = 0; t < h && s * h + t < rows; ++t) {
      Value sum = 0;
      bro_ell_for_row(e, s, t, [&](std::int64_t col, Value v) { sum += v * x[col]; });
      const std::int64_t r = e.original_row(s * h + t);
      if (extra) sum += extra[r];
      axpby_store(y[r], alpha, sum, beta);
    }
  }
}

template <class Value, class Index>
void spmv(const BroEll<Value, Index>& e, const Value* x, Value* y, Value alpha, Value beta) {
  bro_ell_spmv_plus(e, x, y, alpha, beta, static_cast<const Value*>(nullptr));
}

template <class Value, class Index>
void bro_ell_scatter_t(const BroEll<Value, Index>& e, std::int64_t s, const Value* x, Value* acc) {
  for (std::int64_t t = 0; t < e.h && s * e.h + t < e.rows; ++t) {
    const Value xr = x[e.original_row(s * e.h + t)];
    bro_ell_for_row(e, s, t, [&](std::int64_t col, Value v) { acc[col] += v * xr; });
  }
}

// y (cols) = alpha*Aᵀx + beta*y through the same decode; deterministic (scatter_reduce: fixed
// static partition of the slices, per-thread buffers summed in thread order).
template <class Value, class Index>
void spmv_t(const BroEll<Value, Index>& e, const Value* x, Value* y, Value alpha, Value beta) {
  scatter_reduce<Value>(e.cols, e.slices(), y, alpha, beta,
                        [&](std::int64_t s, Value* acc) { bro_ell_scatter_t(e, s, x, acc); });
}

#define SPMAT_INSTANTIATE(V, I)                                                          \
  template void bro_ell_spmv_plus(const BroEll<V, I>&, const V*, V*, V, V, const V*);    \
  template void spmv(const BroEll<V, I>&, const V*, V*, V, V);                           \
  template void spmv_t(const BroEll<V, I>&, const V*, V*, V, V);                         \
  template void bro_ell_scatter_t(const BroEll<V, I>&, std::int64_t, const V*, V*);
SPMAT_FOR_EACH_TYPE_PAIR(SPMAT_INSTANTIATE)
#undef SPMAT_INSTANTIATE

}  // namespace spmat
