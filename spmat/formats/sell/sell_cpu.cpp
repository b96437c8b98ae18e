// spmat/formats/sell/sell_cpu.cpp — OpenMP kernels of SELL-C-σ: spmv and spmv_t.
// SPDX-License-Identifier: MIT
#include <algorithm>
#include <vector>

#include "spmat/core/parallel.hpp"
#include "spmat/formats/sell/sell.hpp"

namespace spmat {

// Contract: x has cols entries, y rows entries (spmv_t swaps them), caller-allocated, in the
// ORIGINAL row order. Padding slots are skipped; explicit zeros multiplied; empty rows give
// alpha*0 + beta*y. One chunk at a time, slot j of its C lanes together (unit stride), each
// row summed in slot order: deterministic. spmv_t: scatter_reduce over chunks.
// Work 2·nnz flops plus the padded slots; bytes as traffic_bytes.

namespace {
/// body(lane, col, value) for every stored slot of chunk c (lanes of positions < rows).
template <class Value, class Index, class Body>
void for_chunk_slots(const Sell<Value, Index>& s, std::int64_t c, Body&& body) {
  const std::int64_t C = s.chunk;
  const std::int64_t n = std::min<std::int64_t>(C, s.rows - c * C);
  for (std::int64_t j = 0; j < s.chunk_len[c]; ++j) {
    const Index* col = s.col_idx.data() + s.chunk_ptr[c] + j * C;
    const Value* val = s.values.data() + s.chunk_ptr[c] + j * C;
    for (std::int64_t i = 0; i < n; ++i)
      if (col[i] != kEllPadding) body(i, col[i], val[i]);
  }
}
}  // namespace

template <class Value, class Index>
void spmv(const Sell<Value, Index>& s, const Value* x, Value* y, Value alpha, Value beta) {
  const std::int64_t C = s.chunk, n_chunks = s.chunks();
#pragma omp parallel
  {
    std::vector<Value> sum(static_cast<std::size_t>(C));
#pragma omp for schedule(dynamic, 4)
    for (std::int64_t c = 0; c < n_chunks; ++c) {
      std::fill(sum.begin(), sum.end(), Value(0));
      for_chunk_slots(s, c, [&](std::int64_t i, Index col, Value v) { sum[i] += v * x[col]; });
      const std::int64_t p1 = std::min<std::int64_t>(s.rows, (c + 1) * C);
      for (std::int64_t p = c * C; p < p1; ++p) axpby_store(y[s.perm[p]], alpha, sum[p - c * C], beta);
    }
  }
}

template <class Value, class Index>
void spmv_t(const Sell<Value, Index>& s, const Value* x, Value* y, Value alpha, Value beta) {
  const std::int64_t C = s.chunk;
  scatter_reduce<Value>(s.cols, s.chunks(), y, alpha, beta, [&](std::int64_t c, Value* acc) {
    const Index* perm = s.perm.data() + c * C;
    for_chunk_slots(s, c, [&](std::int64_t i, Index col, Value v) { acc[col] += v * x[perm[i]]; });
  });
}

SPMAT_INSTANTIATE_CPU_KERNELS(Sell)

}  // namespace spmat
