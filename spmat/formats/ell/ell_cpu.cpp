// spmat/formats/ell/ell_cpu.cpp — OpenMP kernels of ELLPACK: spmv and spmv_t.
// SPDX-License-Identifier: MIT
#include "spmat/core/parallel.hpp"
#include "spmat/formats/ell/ell.hpp"

namespace spmat {

// Contract: x has cols entries, y rows entries (spmv_t swaps them); caller allocates. Padding
// slots (column kEllPadding) are skipped, never multiplied, so NaN/Inf in x cannot leak into
// rows that do not reference them; explicit zeros are multiplied like any entry; empty rows
// give alpha*0 + beta*y. The column-major arrays are walked one 32-row segment at a time, slot
// j of the 32 rows together (unit stride), each row summed in slot order: deterministic.
// Work 2·nnz flops plus pitch·K slot tests; bytes as traffic_bytes.

template <class Value, class Index>
void ell_block_sums(const Ell<Value, Index>& s, std::int64_t r0, std::int64_t r1, const Value* x,
                    Value* sum) {
  const std::int64_t n = r1 - r0;
  for (std::int64_t i = 0; i < n; ++i) sum[i] = Value(0);
  for (std::int64_t j = 0; j < s.width; ++j) {
    const Index* col = s.col_idx.data() + j * s.pitch + r0;
    const Value* val = s.values.data() + j * s.pitch + r0;
    for (std::int64_t i = 0; i < n; ++i)
      if (col[i] != kEllPadding) sum[i] += val[i] * x[col[i]];
  }
}

template <class Value, class Index>
void ell_block_scatter(const Ell<Value, Index>& s, std::int64_t r0, std::int64_t r1,
                       const Value* x, Value* acc) {
  const std::int64_t n = r1 - r0;
  for (std::int64_t j = 0; j < s.width; ++j) {
    const Index* col = s.col_idx.data() + j * s.pitch + r0;
    const Value* val = s.values.data() + j * s.pitch + r0;
    for (std::int64_t i = 0; i < n; ++i)
      if (col[i] != kEllPadding) acc[col[i]] += val[i] * x[r0 + i];
  }
}

template <class Value, class Index>
void spmv(const Ell<Value, Index>& s, const Value* x, Value* y, Value alpha, Value beta) {
  const std::int64_t rows = s.rows;
  const std::int64_t segments = (rows + kEllAlign - 1) / kEllAlign;
#pragma omp parallel for schedule(dynamic, 8)
  for (std::int64_t b = 0; b < segments; ++b) {
    const std::int64_t r0 = b * kEllAlign, r1 = std::min(rows, r0 + kEllAlign);
    Value sum[kEllAlign];
    ell_block_sums(s, r0, r1, x, sum);
    for (std::int64_t r = r0; r < r1; ++r) axpby_store(y[r], alpha, sum[r - r0], beta);
  }
}

template <class Value, class Index>
void spmv_t(const Ell<Value, Index>& s, const Value* x, Value* y, Value alpha, Value beta) {
  const std::int64_t rows = s.rows;
  const std::int64_t segments = (rows + kEllAlign - 1) / kEllAlign;
  scatter_reduce<Value>(s.cols, segments, y, alpha, beta, [&](std::int64_t b, Value* acc) {
    ell_block_scatter(s, b * kEllAlign, std::min(rows, (b + 1) * kEllAlign), x, acc);
  });
}

#define SPMAT_INSTANTIATE(V, I)                                                             \
  template void ell_block_sums(const Ell<V, I>&, std::int64_t, std::int64_t, const V*, V*); \
  template void ell_block_scatter(const Ell<V, I>&, std::int64_t, std::int64_t, const V*,   \
                                  V*);                                                      \
  template void spmv(const Ell<V, I>&, const V*, V*, V, V);                                 \
  template void spmv_t(const Ell<V, I>&, const V*, V*, V, V);
SPMAT_FOR_EACH_TYPE_PAIR(SPMAT_INSTANTIATE)
#undef SPMAT_INSTANTIATE

}  // namespace spmat
