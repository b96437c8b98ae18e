// spmat/formats/csr/compressed_cpu.hpp — the OpenMP products of a compressed sparse layout
// (offsets into major lines, minor indices, values): CSR with rows as the major lines, CSC
// with columns. One body serves both so that their summation orders stay the same.
// SPDX-License-Identifier: MIT
#pragma once
#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "spmat/core/parallel.hpp"

namespace spmat {

/// Lines per dynamically scheduled chunk of compressed_gather: 256, fewer where that would
/// leave threads without a chunk (at least 8 chunks a thread): 300 lines in chunks of 256 kept
/// all but two threads idle.
inline std::int64_t gather_chunk(std::int64_t n_major, int threads) {
  return std::clamp<std::int64_t>(n_major / (8 * static_cast<std::int64_t>(threads)), 1, 256);
}

/// Entries of a segment of a long line in compressed_gather: a line of more than two segments
/// is summed segment by segment, one task each, and the segments' sums are added in order.
constexpr std::int64_t kGatherSegment = 8192;

/// Σ values[k]·x[idx[k]] over [b, e), in storage order, or for more than two segments
/// (kGatherSegment) as the in-order sum of the segments' sums, each an OpenMP task (idle
/// threads of the team take them). The order depends on the line alone, not on the threads.
template <class Value, class Index>
Value gather_line(std::int64_t b, std::int64_t e, const Index* idx, const Value* values, const Value* x) {
  const auto segment_sum = [&](std::int64_t from, std::int64_t to) {
    Value sum = 0;
    for (std::int64_t k = from; k < to; ++k) sum += values[k] * x[idx[k]];
    return sum;
  };
  if (e - b <= 2 * kGatherSegment) return segment_sum(b, e);
  const std::int64_t segments = (e - b + kGatherSegment - 1) / kGatherSegment;
  std::vector<Value> part(static_cast<std::size_t>(segments));
#pragma omp taskloop grainsize(1) shared(part)
  for (std::int64_t s = 0; s < segments; ++s)
    part[static_cast<std::size_t>(s)] = segment_sum(b + s * kGatherSegment, std::min(e, b + (s + 1) * kGatherSegment));
  Value sum = 0;
  for (const Value p : part) sum += p;
  return sum;
}

/// y[i] = alpha·(Σ values[k]·x[idx[k]] over line i) + beta·y[i] for each of the n_major lines.
/// Each line is summed by one thread in storage order (a long one: gather_line's segments, by
/// tasks); lines are split dynamically in chunks (gather_chunk) so that long lines do not stall
/// one thread. The same bits with any thread count.
template <class Value, class Index>
void compressed_gather(Index n_major, const std::vector<Index>& ptr, const std::vector<Index>& idx,
                       const std::vector<Value>& values, const Value* x, Value* y, Value alpha,
                       Value beta) {
  const std::int64_t chunk = gather_chunk(n_major, omp_get_max_threads());
#pragma omp parallel for schedule(dynamic, chunk)
  for (Index i = 0; i < n_major; ++i)
    axpby_store(y[i], alpha, gather_line<Value, Index>(ptr[i], ptr[i + 1], idx.data(), values.data(), x), beta);
}

/// Minor positions per major line from which compressed_scatter gives each thread a range of
/// the minor positions instead of a buffer of all of them: a thread then binary-searches its
/// range in every line (a few cache lines each), where buffers cost every thread a zeroing and
/// a summing pass over all n_minor positions. Few long lines (300 rows × 300,000 columns,
/// 1,000 a row) are the case the buffers made 10× slower than a serial scatter.
constexpr std::int64_t kMinorPerMajorForRanges = 8;

/// Whether compressed_scatter splits the minor positions over the threads (see there).
inline bool scatter_by_minor_ranges(std::int64_t n_major, std::int64_t n_minor) {
  return n_major * kMinorPerMajorForRanges <= n_minor;
}

/// compressed_scatter over ranges of the minor positions: thread t owns positions [lo, hi), sums
/// into its own buffer of hi - lo values the entries of every line that fall there (found by
/// binary search: the minor indices of a line are increasing), in line order, and writes
/// y[lo, hi). Every y[j] adds its entries in line order whatever the thread count.
template <class Value, class Index>
void compressed_scatter_by_ranges(Index n_minor, Index n_major, const std::vector<Index>& ptr,
                                  const std::vector<Index>& idx, const std::vector<Value>& values,
                                  const Value* x, Value* y, Value alpha, Value beta) {
#pragma omp parallel
  {
    const std::int64_t t = omp_get_thread_num(), nt = omp_get_num_threads();
    const Index lo = static_cast<Index>(static_cast<std::int64_t>(n_minor) * t / nt);
    const Index hi = static_cast<Index>(static_cast<std::int64_t>(n_minor) * (t + 1) / nt);
    std::vector<Value> acc(static_cast<std::size_t>(hi - lo), Value(0));
    const Index* first = idx.data();
    for (Index i = 0; i < n_major && lo < hi; ++i) {
      const Index* b = first + ptr[i];
      const Index* e = first + ptr[i + 1];
      if (b == e || e[-1] < lo || *b >= hi) continue;
      const Index* k = *b >= lo ? b : std::lower_bound(b, e, lo);
      const Value xi = x[i];
      for (; k != e && *k < hi; ++k) acc[static_cast<std::size_t>(*k - lo)] += values[k - first] * xi;
    }
    for (Index j = lo; j < hi; ++j) axpby_store(y[j], alpha, acc[static_cast<std::size_t>(j - lo)], beta);
  }
}

/// y = alpha·(Σ over line i of values[k]·x[i] into y[idx[k]]) + beta·y, y of n_minor entries.
/// Few long lines (scatter_by_minor_ranges): ranges of y per thread
/// (compressed_scatter_by_ranges). Otherwise lines scatter into per-thread buffers summed in
/// thread order (scatter_reduce).
template <class Value, class Index>
void compressed_scatter(Index n_minor, Index n_major, const std::vector<Index>& ptr,
                        const std::vector<Index>& idx, const std::vector<Value>& values,
                        const Value* x, Value* y, Value alpha, Value beta) {
  if (scatter_by_minor_ranges(n_major, n_minor))
    return compressed_scatter_by_ranges(n_minor, n_major, ptr, idx, values, x, y, alpha, beta);
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
