// spmat/formats/hyb/hyb_cpu.cpp — OpenMP kernels of HYB: spmv and spmv_t.
// SPDX-License-Identifier: MIT
#include <omp.h>

#include <algorithm>

#include "spmat/core/parallel.hpp"
#include "spmat/formats/hyb/hyb.hpp"

namespace spmat {

// Contract: x has cols entries, y rows entries (spmv_t swaps them), caller-allocated.
// spmv: pass 1 writes y = alpha*(ELL row sum) + beta*y for every row (beta == 0 never reads
// y); pass 2 adds alpha*(COO row-segment sum) to the rows that overflow. In pass 2 the COO
// entries are split evenly over the threads and each thread owns the segments whose first
// entry lies in its share (summing past its share's end when needed): each segment is summed
// in storage order by one thread, so the result is deterministic (for any thread count).
// spmv_t: scatter_reduce over the 32-row ELL segments and 1024-entry COO pieces.
// Work 2·nnz flops plus pitch·K slot tests; bytes as traffic_bytes.

namespace {
constexpr std::int64_t kCooPiece = 1024;
}

template <class Value, class Index>
void spmv(const Hyb<Value, Index>& s, const Value* x, Value* y, Value alpha, Value beta) {
  spmv(s.ell, x, y, alpha, beta);  // pass 1: the ELL part's kernel (ell_cpu.cpp)
  const std::int64_t n = static_cast<std::int64_t>(s.coo_val.size());
  if (n == 0) return;
  const Index* row = s.coo_row.data();
  const Index* col = s.coo_col.data();
  const Value* val = s.coo_val.data();
#pragma omp parallel
  {
    const std::int64_t t = omp_get_thread_num(), nt = omp_get_num_threads();
    std::int64_t q = n * t / nt;
    const std::int64_t end = n * (t + 1) / nt;
    while (q > 0 && q < end && row[q] == row[q - 1]) ++q;  // segment owned by an earlier thread
    while (q < end) {
      const Index r = row[q];
      Value sum = 0;
      for (; q < n && row[q] == r; ++q) sum += val[q] * x[col[q]];
      y[r] += alpha * sum;
    }
  }
}

template <class Value, class Index>
void spmv_t(const Hyb<Value, Index>& s, const Value* x, Value* y, Value alpha, Value beta) {
  const auto& e = s.ell;
  const std::int64_t rows = e.rows;
  const std::int64_t segments = (rows + kEllAlign - 1) / kEllAlign;
  const std::int64_t n = static_cast<std::int64_t>(s.coo_val.size());
  const std::int64_t pieces = (n + kCooPiece - 1) / kCooPiece;
  scatter_reduce<Value>(e.cols, segments + pieces, y, alpha, beta, [&](std::int64_t w, Value* acc) {
    if (w < segments) {
      ell_block_scatter(e, w * kEllAlign, std::min(rows, (w + 1) * kEllAlign), x, acc);
      return;
    }
    const std::int64_t q0 = (w - segments) * kCooPiece, q1 = std::min(n, q0 + kCooPiece);
    for (std::int64_t q = q0; q < q1; ++q) acc[s.coo_col[q]] += s.coo_val[q] * x[s.coo_row[q]];
  });
}

SPMAT_INSTANTIATE_CPU_KERNELS(Hyb)

}  // namespace spmat
