// spmat/formats/csb/block_test_support.hpp — test helpers shared by the csb and gcsb tests.
// SPDX-License-Identifier: MIT
#pragma once
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "spmat/config.hpp"
#include "spmat/core/reference.hpp"
#include "spmat/matrix.hpp"
#include "tests/support/test_support.hpp"
#if SPMAT_WITH_CUDA
#include "spmat/cuda/buffer.hpp"
#endif

namespace spmat::block_testing {

/// Builds canonical CSR from a dense row-major picture where 0 means "absent" (letters = values).
template <class Value, class Index>
Csr<Value, Index> from_dense(Index rows, Index cols, const std::vector<double>& dense) {
  Coo<Value, Index> c;
  c.rows = rows;
  c.cols = cols;
  for (Index r = 0; r < rows; ++r)
    for (Index k = 0; k < cols; ++k)
      if (dense[static_cast<std::size_t>(r) * cols + k] != 0) {
        c.row_idx.push_back(r);
        c.col_idx.push_back(k);
        c.values.push_back(static_cast<Value>(dense[static_cast<std::size_t>(r) * cols + k]));
      }
  return to_csr(c);
}

/// The spec's 6×6 example, a..l = 1..12.
template <class Value, class Index>
Csr<Value, Index> example6() {
  // a(0,0) b(0,1) c(0,4) d(0,5) e(1,0) f(1,2) g(1,4) h(2,1) i(3,1) j(3,3) k(5,1) l(5,5)
  std::vector<double> m(36, 0);
  const int pos[][2] = {{0, 0}, {0, 1}, {0, 4}, {0, 5}, {1, 0}, {1, 2},
                        {1, 4}, {2, 1}, {3, 1}, {3, 3}, {5, 1}, {5, 5}};
  for (int i = 0; i < 12; ++i) m[pos[i][0] * 6 + pos[i][1]] = i + 1;
  return from_dense<Value, Index>(6, 6, m);
}

/// The spec's 8×8 example (thesis Figs. 3.1/3.4), a..z = 1..26.
template <class Value, class Index>
Csr<Value, Index> example8() {
  const char* rows[8] = {"ab..cdef", "ghijk..l", ".m......", ".n.o....",
                         "..pq..r.", "..st...u", ".v.wx...", "....yz.."};
  std::vector<double> m(64, 0);
  for (int r = 0; r < 8; ++r)
    for (int c = 0; c < 8; ++c)
      if (rows[r][c] != '.') m[r * 8 + c] = rows[r][c] - 'a' + 1;
  return from_dense<Value, Index>(8, 8, m);
}

/// Letters of a values array ('*' for 0).
template <class Value>
std::string letters(const std::vector<Value>& v) {
  std::string s;
  for (Value x : v) s += x == Value(0) ? '*' : static_cast<char>('a' + static_cast<int>(x) - 1);
  return s;
}

/// Random canonical CSR: density p, some empty rows/columns (rows ≡ 3 mod 7 and columns ≡ 5
/// mod 11 are left empty), explicit zeros (about 5 % of the stored entries), one dense row.
template <class Value, class Index>
Csr<Value, Index> random_csr(Index rows, Index cols, double p, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0, 1), val(-1, 1);
  Coo<Value, Index> c;
  c.rows = rows;
  c.cols = cols;
  for (Index r = 0; r < rows; ++r)
    for (Index k = 0; k < cols; ++k) {
      const bool dense_row = rows > 10 && r == rows / 2;
      if (r % 7 == 3 || k % 11 == 5) continue;
      if (dense_row || u(rng) < p) {
        c.row_idx.push_back(r);
        c.col_idx.push_back(k);
        c.values.push_back(u(rng) < 0.05 ? Value(0) : static_cast<Value>(val(rng)));
      }
    }
  return to_csr(c);
}

/// n×n tridiagonal fp64 CSR with entry (r, c) = value(r, c): with a small β the block grid of a
/// large n has more blocks than int32 can count while only the diagonal band is non-empty.
template <class ValueOf>
Csr<double, std::int32_t> tridiagonal(std::int32_t n, ValueOf value) {
  Csr<double, std::int32_t> a;
  a.rows = a.cols = n;
  a.row_ptr.assign(1, 0);
  for (std::int32_t r = 0; r < n; ++r) {
    for (std::int32_t c = std::max(0, r - 1); c <= std::min(n - 1, r + 1); ++c) {
      a.col_idx.push_back(c);
      a.values.push_back(value(r, c));
    }
    a.row_ptr.push_back(static_cast<std::int32_t>(a.col_idx.size()));
  }
  return a;
}

/// Checks y = alpha·op(A)·x + beta·y0 on `backend` against the fp64 reference. For beta == 0 the
/// output starts as NaN (it must not leak).
template <class Value, class Index>
void check_against_reference(const Csr<Value, Index>& a, const std::string& format,
                             const FormatOptions& opts, Backend backend, bool transposed,
                             Value alpha, Value beta, std::uint64_t seed) {
  SCOPED_TRACE(format + " " + opts.to_string() + (transposed ? " spmv_t" : " spmv") +
               " alpha=" + std::to_string(alpha) + " beta=" + std::to_string(beta) +
               " seed=" + std::to_string(seed) + " " + std::to_string(a.rows) + "x" +
               std::to_string(a.cols));
  auto m = Matrix<Value>::build(a, format, backend, opts);
  const std::int64_t nx = transposed ? a.rows : a.cols, ny = transposed ? a.cols : a.rows;
  const auto x = testing::random_vector<Value>(nx, seed);
  auto y = beta == Value(0) ? testing::poisoned<Value>(ny) : testing::random_vector<Value>(ny, seed + 1);
  const std::vector<Value> y0 = y;
  const auto want = transposed ? reference::spmv_t(a, std::span<const Value>(x), alpha, beta,
                                                   std::span<const Value>(y0))
                               : reference::spmv(a, std::span<const Value>(x), alpha, beta,
                                                 std::span<const Value>(y0));
  if (backend == Backend::cpu) {
    if (transposed) m.spmv_t(x, y, alpha, beta);
    else m.spmv(x, y, alpha, beta);
  } else {
#if SPMAT_WITH_CUDA
    cuda::DeviceBuffer<Value> dx(x), dy(y);
    if (transposed) m.spmv_t(dx.span(), dy.span(), alpha, beta);
    else m.spmv(dx.span(), dy.span(), alpha, beta);
    y = dy.download();
#endif
  }
  // Error relative to |alpha|·|op(A)|·|x| + |beta|·|y0| (the scale of the summed terms), so that
  // cancellation in a long fp32 sum does not fail a correct kernel.
  Csr<Value, Index> abs_a = a;
  for (auto& v : abs_a.values) v = std::abs(v);
  std::vector<Value> abs_x(x.size()), abs_y0(y0.size());
  for (std::size_t i = 0; i < x.size(); ++i) abs_x[i] = std::abs(x[i]);
  for (std::size_t i = 0; i < y0.size(); ++i) abs_y0[i] = std::abs(y0[i]);
  const double aa = std::abs(double(alpha)), ab = std::abs(double(beta));
  const auto scale =
      transposed ? reference::spmv_t(abs_a, std::span<const Value>(abs_x), aa, ab, std::span<const Value>(abs_y0))
                 : reference::spmv(abs_a, std::span<const Value>(abs_x), aa, ab, std::span<const Value>(abs_y0));
  ASSERT_EQ(y.size(), want.size());
  double num = 0, den = 0;
  for (std::size_t i = 0; i < y.size(); ++i) {
    ASSERT_TRUE(std::isfinite(static_cast<double>(y[i]))) << "y[" << i << "] = " << y[i];
    num += (double(y[i]) - want[i]) * (double(y[i]) - want[i]);
    den += scale[i] * scale[i];
  }
  EXPECT_LE(den > 0 ? std::sqrt(num / den) : std::sqrt(num), testing::tolerance<Value>());
}

}  // namespace spmat::block_testing
