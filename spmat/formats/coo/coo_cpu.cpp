// spmat/formats/coo/coo_cpu.cpp — OpenMP kernels of COO: spmv (row-partitioned), spmv_t (scatter_reduce).
// SPDX-License-Identifier: MIT
#include <omp.h>

#include <algorithm>

#include "spmat/core/parallel.hpp"
#include "spmat/formats/coo/coo.hpp"

namespace spmat {

namespace {

/// Entries of rows < r: the first position whose row index is >= r (row_idx is sorted).
template <class Index>
std::int64_t entries_before_row(const std::vector<Index>& row_idx, std::int64_t r) {
  return std::lower_bound(row_idx.begin(), row_idx.end(), r,
                          [](Index a, std::int64_t b) { return a < b; }) -
         row_idx.begin();
}

/// Merge-path split of rows + nnz into `parts` pieces at row boundaries: the first row of piece
/// t is the smallest r with r + entries_before_row(r) >= (rows + nnz)·t / parts. Pieces hold
/// whole rows, so each row is owned by exactly one thread.
template <class Index>
std::int64_t split_row(const std::vector<Index>& row_idx, std::int64_t rows, std::int64_t t,
                       std::int64_t parts) {
  const std::int64_t nnz = static_cast<std::int64_t>(row_idx.size());
  const std::int64_t diagonal = (rows + nnz) / parts * t + (rows + nnz) % parts * t / parts;
  std::int64_t lo = 0, hi = rows;  // answer in [lo, hi]
  while (lo < hi) {
    const std::int64_t mid = lo + (hi - lo) / 2;
    if (mid + entries_before_row(row_idx, mid) >= diagonal) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

}  // namespace

// Contract: x has cols entries, y rows entries; caller allocates. Canonical COO has no
// duplicates; explicit zeros are multiplied like any entry; empty rows get alpha*0 + beta*y
// (beta == 0: y is not read). Each thread owns a contiguous block of whole rows (split on
// rows + nnz by binary search, O(threads·log² n)), sums each row in storage order:
// deterministic and independent of the thread count. Work 2·nnz flops; bytes as traffic_bytes.
template <class Value, class Index>
void spmv(const CooStorage<Value, Index>& s, const Value* x, Value* y, Value alpha, Value beta) {
  const auto& a = s.a;
  const std::int64_t rows = a.rows;
  if (rows == 0) return;
#pragma omp parallel
  {
    const std::int64_t t = omp_get_thread_num(), nt = omp_get_num_threads();
    const std::int64_t r_begin = split_row(a.row_idx, rows, t, nt);
    const std::int64_t r_end = split_row(a.row_idx, rows, t + 1, nt);
    std::int64_t k = entries_before_row(a.row_idx, r_begin);
    for (std::int64_t r = r_begin; r < r_end; ++r) {
      Value sum = 0;
      for (; k < static_cast<std::int64_t>(a.row_idx.size()) && a.row_idx[k] == r; ++k)
        sum += a.values[k] * x[a.col_idx[k]];
      axpby_store(y[r], alpha, sum, beta);
    }
  }
}

// Contract: x has rows entries, y cols entries. Every entry scatters values[k]*x[row] into a
// per-thread buffer (scatter_reduce: threads×cols scratch values), buffers summed in thread
// order: deterministic for a fixed thread count. Empty columns get alpha*0 + beta*y.
template <class Value, class Index>
void spmv_t(const CooStorage<Value, Index>& s, const Value* x, Value* y, Value alpha, Value beta) {
  const auto& a = s.a;
  scatter_reduce<Value>(a.cols, a.nnz(), y, alpha, beta, [&](std::int64_t k, Value* acc) {
    acc[a.col_idx[k]] += a.values[k] * x[a.row_idx[k]];
  });
}

SPMAT_INSTANTIATE_CPU_KERNELS(CooStorage)

}  // namespace spmat
