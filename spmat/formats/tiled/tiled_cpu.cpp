// spmat/formats/tiled/tiled_cpu.cpp — OpenMP kernels of the tiled format: spmm, spmv, spmv_t.
// SPDX-License-Identifier: MIT
//
// The CPU path is the reference path of the format (the GPU kernel is the point of it): it walks
// each output row's work rows through the stored panels/stages/slabs, so it exercises exactly the
// arrays the GPU reads, and returns C in the original row order.
#include <algorithm>
#include <vector>

#include "spmat/core/parallel.hpp"
#include "spmat/formats/tiled/tiled.hpp"

namespace spmat {

namespace {
/// f(col, value) over output row i's entries, in column order (segments in order).
template <class Value, class Index, class F>
void for_each_in_row(const TiledStorage<Value, Index>& s, std::int64_t i, F&& f) {
  if (s.out_row.empty()) return s.for_each_in_work_row(i, f);
  for (std::int64_t q = s.seg_ptr[i]; q < s.seg_ptr[i + 1]; ++q) s.for_each_in_work_row(s.seg_list[q], f);
}
}  // namespace

// Contract: b is cols×k, c rows×k, both in `layout`, caller-allocated. Padding slots are skipped
// (never multiplied: 0·Inf would be NaN); explicit zeros are multiplied like any entry; empty rows
// give alpha·0 + beta·C. beta == 0 never reads C. Deterministic: one thread per output row, its
// segments summed in column order. Work 2·nnz·k flops (+ padding slots visited, not multiplied).
template <class Value, class Index>
void spmm(const TiledStorage<Value, Index>& s, const Value* b, Value* c, std::int64_t k,
          DenseLayout layout, Value alpha, Value beta) {
  const std::int64_t m = s.rows, n = s.cols;
  if (m == 0 || k == 0) return;
#pragma omp parallel
  {
    std::vector<Value> acc(static_cast<std::size_t>(k));
#pragma omp for schedule(dynamic, 64)
    for (std::int64_t i = 0; i < m; ++i) {
      std::fill(acc.begin(), acc.end(), Value(0));
      for_each_in_row(s, i, [&](std::int64_t col, Value v) {
        if (layout == DenseLayout::row_major) {
          const Value* bi = b + col * k;
          for (std::int64_t j = 0; j < k; ++j) acc[j] += v * bi[j];
        } else {
          for (std::int64_t j = 0; j < k; ++j) acc[j] += v * b[j * n + col];
        }
      });
      for (std::int64_t j = 0; j < k; ++j) {
        Value& out = layout == DenseLayout::row_major ? c[i * k + j] : c[j * m + i];
        axpby_store(out, alpha, acc[j], beta);
      }
    }
  }
}

template <class Value, class Index>
void spmv(const TiledStorage<Value, Index>& s, const Value* x, Value* y, Value alpha, Value beta) {
  spmm(s, x, y, 1, DenseLayout::row_major, alpha, beta);
}

// Contract: x has rows entries, y cols; deterministic scatter_reduce (fixed thread partition).
template <class Value, class Index>
void spmv_t(const TiledStorage<Value, Index>& s, const Value* x, Value* y, Value alpha, Value beta) {
  scatter_reduce<Value>(s.cols, s.rows, y, alpha, beta, [&](std::int64_t i, Value* acc) {
    const Value xi = x[i];
    for_each_in_row(s, i, [&](std::int64_t col, Value v) { acc[col] += v * xi; });
  });
}

#define SPMAT_INSTANTIATE(V, I)                                                                   \
  template void spmv(const TiledStorage<V, I>&, const V*, V*, V, V);                              \
  template void spmv_t(const TiledStorage<V, I>&, const V*, V*, V, V);                            \
  template void spmm(const TiledStorage<V, I>&, const V*, V*, std::int64_t, DenseLayout, V, V);
SPMAT_FOR_EACH_TYPE_PAIR(SPMAT_INSTANTIATE)
#undef SPMAT_INSTANTIATE

}  // namespace spmat
