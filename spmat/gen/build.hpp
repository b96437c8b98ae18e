// spmat/gen/build.hpp — the row-parallel CSR assembler shared by the generators, and the
// per-generator entry points (internal; the public API is generators.hpp).
// SPDX-License-Identifier: MIT
#pragma once
#include <omp.h>

#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include "spmat/core/csr.hpp"
#include "spmat/core/error.hpp"
#include "spmat/gen/spec.hpp"
#include "spmat/io/file_io.hpp"

namespace spmat::gen::detail {

/// Throws OutOfMemoryError when a rows-row CSR of `nnz` nonzeros (an expected count before
/// the rows are drawn, the exact one after) needs more host memory than is available now.
/// Checked before the work, not only at the allocation: drawing the rows of an impossible
/// request can take hours, and an allocation the kernel overcommits fails only when touched.
template <class Value, class Index>
void check_host_memory(std::string_view what, std::int64_t rows, double nnz) {
  const std::uint64_t avail = io::available_memory_bytes();  // 0: unknown, no check
  const double need = (static_cast<double>(rows) + 1) * sizeof(Index) +
                      nnz * static_cast<double>(sizeof(Index) + sizeof(Value));
  if (avail == 0 || need <= static_cast<double>(avail)) return;
  char buf[160];
  std::snprintf(buf, sizeof buf, ": about %.3g nonzeros need %.3g GiB of host memory with ", nnz,
                need / double(1 << 30));
  char tail[96];
  std::snprintf(tail, sizeof tail, " values, and %.3g GiB are available", double(avail) / double(1 << 30));
  throw OutOfMemoryError(std::string(what) + buf + std::string(index_name<Index>()) +
                         " indices and " + std::string(precision_name<Value>()) + tail);
}

/// Builds a rows×cols CSR row by row, in parallel, independent of the thread count.
/// `len(i, scratch)` returns the length of row i; `fill(i, len, cols, vals, scratch)` writes
/// row i's `len` columns (strictly increasing) and values. Both must be pure functions of i
/// (each row draws from its own stream), so the result is the same with any schedule.
/// Sizes are checked against Index before anything large is allocated: rows/cols first, then
/// nnz once the row lengths are known (IndexOverflowError naming `what`), and the host memory
/// the nonzeros need (OutOfMemoryError).
/// Work: one len() and one fill() call per row; memory: the result only.
template <class Value, class Index, class Len, class Fill>
Csr<Value, Index> build_rows(std::string_view what, std::int64_t rows, std::int64_t cols,
                             Len&& len, Fill&& fill) {
  check_index_range<Index>(rows, cols, 0, what);
  check_host_memory<Value, Index>(what, rows, 0.0);  // the row offsets, before the lengths
  Csr<Value, Index> a;
  a.rows = static_cast<Index>(rows);
  a.cols = static_cast<Index>(cols);
  a.row_ptr.assign(static_cast<std::size_t>(rows) + 1, 0);
  std::int64_t total = 0;
  // Small matrices stay on one thread: a parallel region costs more than the rows.
  const bool par = rows >= 4096;
#pragma omp parallel reduction(+ : total) if (par)
  {
    std::vector<std::uint64_t> scratch;
#pragma omp for schedule(dynamic, 1024)
    for (std::int64_t i = 0; i < rows; ++i) {
      const std::int64_t l = len(i, scratch);
      a.row_ptr[static_cast<std::size_t>(i) + 1] = static_cast<Index>(l);  // l <= cols fits
      total += l;
    }
  }
  check_index_range<Index>(rows, cols, total, what);
  check_host_memory<Value, Index>(what, rows, static_cast<double>(total));
  for (std::int64_t i = 0; i < rows; ++i) a.row_ptr[i + 1] += a.row_ptr[i];
  a.col_idx.resize(static_cast<std::size_t>(total));
  a.values.resize(static_cast<std::size_t>(total));
#pragma omp parallel if (par)
  {
    std::vector<std::uint64_t> scratch;
#pragma omp for schedule(dynamic, 1024)
    for (std::int64_t i = 0; i < rows; ++i) {
      const Index b = a.row_ptr[i];
      fill(i, static_cast<std::int64_t>(a.row_ptr[i + 1] - b), a.col_idx.data() + b,
           a.values.data() + b, scratch);
    }
  }
  return a;
}

/// Throws IndexOverflowError unless rows, cols and nnz (which may exceed int64: pass __int128)
/// fit Index — before the caller allocates anything.
template <class Index>
void check_sizes(std::string_view what, std::int64_t rows, std::int64_t cols, __int128 nnz) {
  if (nnz > static_cast<__int128>(INT64_MAX))
    throw IndexOverflowError(std::string(what) + ": more than 2^63 nonzeros");
  check_index_range<Index>(rows, cols, static_cast<std::int64_t>(nnz), what);
}

// One entry point per generator (each source instantiates its own for the four type pairs).
template <class Value, class Index> Csr<Value, Index> gen_random_p(const Args& a);
template <class Value, class Index> Csr<Value, Index> gen_random_k(const Args& a);
template <class Value, class Index> Csr<Value, Index> gen_powerlaw(const Args& a);
template <class Value, class Index> Csr<Value, Index> gen_ideal(const Args& a);
template <class Value, class Index> Csr<Value, Index> gen_stencil(const Args& a, int kind);
template <class Value, class Index> Csr<Value, Index> gen_banded(const Args& a);
template <class Value, class Index> Csr<Value, Index> gen_rmat(const Args& a);

/// Kinds for gen_stencil.
enum StencilKind { lap2d = 0, lap3d = 1, lap3d27 = 2 };

/// Largest dimension any argument may take (larger sizes fail the index checks anyway).
inline constexpr std::int64_t kMaxDim = std::int64_t(1) << 62;

}  // namespace spmat::gen::detail
