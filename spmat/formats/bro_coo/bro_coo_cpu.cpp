// spmat/formats/bro_coo/bro_coo_cpu.cpp — OpenMP BRO-COO kernels: decode rows, scatter, reduce.
// SPDX-License-Identifier: MIT
#include "spmat/core/parallel.hpp"
#include "spmat/formats/bro_coo/bro_coo.hpp"

namespace spmat {

// Contract: x has cols entries, y rows entries (spmv_t swaps them); caller allocates. Each
// interval is one work item of scatter_reduce: its row streams are decoded with the kernels'
// reader and every entry adds v·x[col] into a per-thread row buffer (rows may span intervals);
// the buffers are summed in thread order (deterministic for a fixed thread count; memory
// threads × rows). Explicit zeros are multiplied; beta == 0 never reads y. Work 2·nnz flops.
template <class Value, class Index>
void bro_coo_scatter(const BroCoo<Value, Index>& c, std::int64_t q, const Value* x, Value* acc) {
  bro_coo_for_interval(c, q, [&](std::int64_t e, std::int64_t row) {
    acc[row] += c.values[e] * x[c.col_idx[e]];
  });
}

template <class Value, class Index>
void bro_coo_scatter_t(const BroCoo<Value, Index>& c, std::int64_t q, const Value* x, Value* acc) {
  bro_coo_for_interval(c, q, [&](std::int64_t e, std::int64_t row) {
    acc[c.col_idx[e]] += c.values[e] * x[row];
  });
}

template <class Value, class Index>
void spmv(const BroCoo<Value, Index>& c, const Value* x, Value* y, Value alpha, Value beta) {
  scatter_reduce<Value>(c.rows, c.intervals(), y, alpha, beta,
                        [&](std::int64_t q, Value* acc) { bro_coo_scatter(c, q, x, acc); });
}

template <class Value, class Index>
void spmv_t(const BroCoo<Value, Index>& c, const Value* x, Value* y, Value alpha, Value beta) {
  scatter_reduce<Value>(c.cols, c.intervals(), y, alpha, beta,
                        [&](std::int64_t q, Value* acc) { bro_coo_scatter_t(c, q, x, acc); });
}

#define SPMAT_INSTANTIATE(V, I)                                                       \
  template void bro_coo_scatter(const BroCoo<V, I>&, std::int64_t, const V*, V*);     \
  template void bro_coo_scatter_t(const BroCoo<V, I>&, std::int64_t, const V*, V*);   \
  template void spmv(const BroCoo<V, I>&, const V*, V*, V, V);                        \
  template void spmv_t(const BroCoo<V, I>&, const V*, V*, V, V);
SPMAT_FOR_EACH_TYPE_PAIR(SPMAT_INSTANTIATE)
#undef SPMAT_INSTANTIATE

}  // namespace spmat
