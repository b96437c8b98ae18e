// spmat/formats/csb/csb_cpu.cpp — OpenMP kernels of CSB-baseline: spmv (block-row owners), spmv_t (block-column owners).
// SPDX-License-Identifier: MIT
#include <algorithm>
#include <vector>

#include "spmat/core/parallel.hpp"
#include "spmat/formats/csb/csb.hpp"

namespace spmat {

// Contract (both): x and y are caller-allocated (spmv: x cols, y rows; spmv_t: x rows, y cols).
// Each output window of β entries is owned by one thread, which sums its blocks in block order and
// each block in storage (Morton) order: deterministic for any thread count. Explicit zeros are
// multiplied like any entry; empty blocks cost one block_offset read. Bytes as traffic_bytes.
template <class Value, class Index>
void spmv(const Csb<Value, Index>& s, const Value* x, Value* y, Value alpha, Value beta) {
  const int d = s.beta_log2;
  const std::int64_t bsz = std::int64_t{1} << d, mask = bsz - 1, nbc = s.n_block_cols;
#pragma omp parallel
  {
    std::vector<Value> acc(static_cast<std::size_t>(bsz));
#pragma omp for schedule(dynamic, 1)
    for (std::int64_t br = 0; br < s.n_block_rows; ++br) {
      std::fill(acc.begin(), acc.end(), Value(0));
      for (std::int64_t bc = 0; bc < nbc; ++bc) {
        const std::int64_t id = br * nbc + bc;
        const Value* xb = x + (bc << d);
        for (Index k = s.block_offset[id]; k < s.block_offset[id + 1]; ++k) {
          const std::int32_t c = s.comb[k];
          acc[(c >> d) & mask] += s.values[k] * xb[c & mask];
        }
      }
      const std::int64_t r0 = br << d, r1 = std::min<std::int64_t>(s.rows, r0 + bsz);
      for (std::int64_t r = r0; r < r1; ++r) axpby_store(y[r], alpha, acc[r - r0], beta);
    }
  }
}

template <class Value, class Index>
void spmv_t(const Csb<Value, Index>& s, const Value* x, Value* y, Value alpha, Value beta) {
  const int d = s.beta_log2;
  const std::int64_t bsz = std::int64_t{1} << d, mask = bsz - 1, nbc = s.n_block_cols;
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

#define SPMAT_INSTANTIATE(V, I)                                    \
  template void spmv(const Csb<V, I>&, const V*, V*, V, V); \
  template void spmv_t(const Csb<V, I>&, const V*, V*, V, V);
SPMAT_FOR_EACH_TYPE_PAIR(SPMAT_INSTANTIATE)
#undef SPMAT_INSTANTIATE

}  // namespace spmat
