// spmat/formats/csr/compressed_cpu.hpp — the OpenMP products of a compressed sparse layout
// (offsets into major lines, minor indices, values): CSR with rows as the major lines, CSC
// with columns. One body serves both so that their summation orders stay the same.
// SPDX-License-Identifier: MIT
#pragma once
#include <cstdint>
#include <vector>

#include "spmat/core/parallel.hpp"

namespace spmat {

/// y[i] = alpha·(Σ values[k]·x[idx[k]] over line i) + beta·y[i] for each of the n_major lines.
/// Each line is summed in storage order by one thread (deterministic); lines are split
/// dynamically in chunks of 256 so that long lines do not stall one thread.
template <class Value, class Index>
void compressed_gather(Index n_major, const std::vector<Index>& ptr, const std::vector<Index>& idx,
                       const std::vector<Value>& values, const Value* x, Value* y, Value alpha,
                       Value beta) {
#pragma omp parallel for schedule(dynamic, 256)
  for (Index i = 0; i < n_major; ++i) {
    Value sum = 0;
    for (Index k = ptr[i]; k < ptr[i + 1]; ++k) sum += values[k] * x[idx[k]];
    axpby_store(y[i], alpha, sum, beta);
  }
}

/// y = alpha·(Σ over line i of values[k]·x[i] into y[idx[k]]) + beta·y, y of n_minor entries:
/// lines scatter into per-thread buffers summed in thread order (scatter_reduce).
template <class Value, class Index>
void compressed_scatter(Index n_minor, Index n_major, const std::vector<Index>& ptr,
                        const std::vector<Index>& idx, const std::vector<Value>& values,
                        const Value* x, Value* y, Value alpha, Value beta) {
  scatter_reduce<Value>(n_minor, n_major, y, alpha, beta, [&](std::int64_t i, Value* acc) {
    const Value xi = x[i];
    for (Index k = ptr[i]; k < ptr[i + 1]; ++k) acc[idx[k]] += values[k] * xi;
  });
}

/// The product along the major lines (Across = false: a gather per line) or across them
/// (Across = true: the lines scatter into the minor positions): CSR's spmv and spmv_t, CSC's
/// spmv_t and spmv.
template <bool Across, class Value, class Index>
void compressed_product(Index n_major, Index n_minor, const std::vector<Index>& ptr,
                        const std::vector<Index>& idx, const std::vector<Value>& values,
                        const Value* x, Value* y, Value alpha, Value beta) {
  if constexpr (Across)
    compressed_scatter(n_minor, n_major, ptr, idx, values, x, y, alpha, beta);
  else
    compressed_gather(n_major, ptr, idx, values, x, y, alpha, beta);
}

}  // namespace spmat
