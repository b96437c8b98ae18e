// spmat/formats/csb/csb_cpu.cpp — OpenMP kernels of CSB-baseline: spmv (block-row owners), spmv_t (block-column owners).
// SPDX-License-Identifier: MIT
#include <algorithm>
#include <vector>

#include "spmat/core/parallel.hpp"
#include "spmat/formats/csb/csb.hpp"

namespace spmat {

namespace {
/// acc[in-block row] += products of block row br's stored blocks (storage order), or with
/// Transposed acc[(block column − first)·β + in-block column], i.e. acc covers output columns
/// from `first` on.
template <bool Transposed, class Value, class Index>
void block_row_products(const Csb<Value, Index>& s, std::int64_t br, const Value* x, Value* acc) {
  const int d = s.beta_log2;
  const std::int32_t mask = (1 << d) - 1;
  for (std::int64_t j = s.row_begin(br); j < s.row_end(br); ++j) {
    const std::int64_t bc = s.col_of(j);
    if constexpr (Transposed) {
      const Value* xb = x + (br << d);
      Value* yb = acc + (bc << d);
      for (Index k = s.block_offset[j]; k < s.block_offset[j + 1]; ++k) {
        const std::int32_t c = s.comb[k];
        yb[c & mask] += s.values[k] * xb[(c >> d) & mask];
      }
    } else {
      const Value* xb = x + (bc << d);
      for (Index k = s.block_offset[j]; k < s.block_offset[j + 1]; ++k) {
        const std::int32_t c = s.comb[k];
        acc[(c >> d) & mask] += s.values[k] * xb[c & mask];
      }
    }
  }
}
}  // namespace

// Contract (both): x and y are caller-allocated (spmv: x cols, y rows; spmv_t: x rows, y cols).
// spmv: each output window of β entries is owned by one thread, which sums its blocks in block
// order and each block in storage (Morton) order: deterministic for any thread count. spmv_t on
// the full grid: a thread owns a block column (same guarantee); on the sparse grid the block rows
// scatter into per-thread copies of y (scatter_reduce: deterministic for a fixed thread count).
// Explicit zeros are multiplied like any entry; empty full-grid blocks cost one block_offset read.
// Bytes as traffic_bytes.
template <class Value, class Index>
void spmv(const Csb<Value, Index>& s, const Value* x, Value* y, Value alpha, Value beta) {
  const int d = s.beta_log2;
  const std::int64_t bsz = std::int64_t{1} << d;
#pragma omp parallel
  {
    std::vector<Value> acc(static_cast<std::size_t>(bsz));
#pragma omp for schedule(dynamic, 16)
    for (std::int64_t br = 0; br < s.n_block_rows; ++br) {
      std::fill(acc.begin(), acc.end(), Value(0));
      block_row_products<false>(s, br, x, acc.data());
      const std::int64_t r0 = br << d, r1 = std::min<std::int64_t>(s.rows, r0 + bsz);
      for (std::int64_t r = r0; r < r1; ++r) axpby_store(y[r], alpha, acc[r - r0], beta);
    }
  }
}

template <class Value, class Index>
void spmv_t(const Csb<Value, Index>& s, const Value* x, Value* y, Value alpha, Value beta) {
  const int d = s.beta_log2;
  const std::int64_t bsz = std::int64_t{1} << d, mask = bsz - 1, nbc = s.n_block_cols;
  if (s.sparse_grid) {
    // acc covers n_block_cols·β ≥ cols entries; the tail past cols is never written (in-block
    // columns of the last block column stay < cols).
    scatter_reduce<Value>(s.cols, s.n_block_rows, y, alpha, beta, [&](std::int64_t br, Value* acc) {
      block_row_products<true>(s, br, x, acc);
    });
    return;
  }
#pragma omp parallel
  {
    std::vector<Value> acc(static_cast<std::size_t>(bsz));
#pragma omp for schedule(dynamic, 1)
    for (std::int64_t bc = 0; bc < nbc; ++bc) {
      std::fill(acc.begin(), acc.end(), Value(0));
      for (std::int64_t br = 0; br < s.n_block_rows; ++br) {
        const std::int64_t id = br * nbc + bc;
        const Value* xb = x + (br << d);
        for (Index k = s.block_offset[id]; k < s.block_offset[id + 1]; ++k) {
          const std::int32_t c = s.comb[k];
          acc[c & mask] += s.values[k] * xb[(c >> d) & mask];
        }
      }
      const std::int64_t c0 = bc << d, c1 = std::min<std::int64_t>(s.cols, c0 + bsz);
      for (std::int64_t c = c0; c < c1; ++c) axpby_store(y[c], alpha, acc[c - c0], beta);
    }
  }
}

SPMAT_INSTANTIATE_CPU_KERNELS(Csb)

}  // namespace spmat
