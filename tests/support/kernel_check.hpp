// tests/support/kernel_check.hpp — shared checks of a format's SpMV/SpMVᵀ kernels: a worked 4×4
// example, ragged random matrices (empty rows/columns, one dense row), a rounding-aware comparison
// with the fp64 reference, and the same battery on the GPU. Used by the per-format tests.
// SPDX-License-Identifier: MIT
#pragma once
#include <gtest/gtest.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "spmat/config.hpp"
#include "spmat/core/reference.hpp"
#include "spmat/matrix.hpp"
#include "spmat/registry.hpp"
#include "tests/support/device_ops.hpp"
#include "tests/support/test_support.hpp"
#if SPMAT_WITH_CUDA
#include "spmat/cuda/buffer.hpp"
#endif

namespace spmat::testing {


/// Shape of a random test matrix: rows `empty_every`-th row empty (plus `lead` leading and
/// `trail` trailing empty rows), every 7th column empty, one row `dense_len` long.
struct Spec {
  std::int64_t rows, cols;
  int max_row_len = 9;
  std::int64_t dense_len = 0;
  std::int64_t lead = 0, trail = 0;
};

template <class Value, class Index>
Csr<Value, Index> random_matrix(const Spec& s, std::uint64_t seed, bool small_integers) {
  std::mt19937_64 rng(seed);
  Coo<Value, Index> c;
  c.rows = static_cast<Index>(s.rows);
  c.cols = static_cast<Index>(s.cols);
  std::vector<std::int64_t> usable;  // columns that may hold entries
  for (std::int64_t j = 0; j < s.cols; ++j)
    if (j % 7 != 3 || s.cols < 7) usable.push_back(j);
  if (s.rows == 0 || usable.empty()) return to_csr(c);
  std::uniform_int_distribution<int> len(0, s.max_row_len);
  std::uniform_int_distribution<std::size_t> col(0, usable.size() - 1);
  std::uniform_int_distribution<int> small(-4, 4);
  std::uniform_real_distribution<double> real(-1, 1);
  auto value = [&] { return static_cast<Value>(small_integers ? small(rng) : real(rng)); };
  const std::int64_t dense_row = s.rows / 3;
  for (std::int64_t r = s.lead; r < s.rows - s.trail; ++r) {
    if (r % 5 == 2) continue;  // empty rows
    const std::int64_t n = r == dense_row ? s.dense_len : len(rng);
    for (std::int64_t e = 0; e < n; ++e) {
      c.row_idx.push_back(static_cast<Index>(r));
      c.col_idx.push_back(static_cast<Index>(
          r == dense_row ? usable[static_cast<std::size_t>(e) % usable.size()] : usable[col(rng)]));
      c.values.push_back(value());
    }
  }
  return to_csr(c);  // sorts, sums duplicates
}

inline const std::vector<Spec>& cpu_specs() {
  static const std::vector<Spec> v{{0, 0},           {0, 5},   {5, 0},         {1, 1},
                                   {37, 53},         {200, 131, 20, 100, 3, 4},
                                   {1, 1000, 0, 999}, {1000, 1}, {333, 77, 0, 0}};
  return v;
}

struct AlphaBeta {
  double alpha, beta;
};
inline constexpr AlphaBeta kAlphaBeta[] = {{1, 0}, {-1.5, 0}, {0.5, 2}, {2, -1}};

/// Checks `got` = alpha*op(A)*x + beta*y0 entry by entry against the fp64 reference with the
/// worst-case rounding bound of a sum taken in any order (atomics included):
///   |got − want| ≤ 2·(n + 4)·ε·(|alpha|·Σ|a|·|x| + |beta|·|y0|),  n = longest row (column for
/// spmv_t), ε = machine epsilon of Value. Unlike a plain relative norm this does not fail on
/// outputs that cancel to nearly zero. A NaN where want is finite fails. Returns "" when every
/// entry passes, else a message naming the first failing entry.
template <class Value, class Index>
std::string check_result(const Csr<Value, Index>& a, Op op, const std::vector<Value>& x,
                         AlphaBeta ab, const std::vector<Value>& y0,
                         const std::vector<Value>& got) {
  Csr<double, Index> abs_a;
  abs_a.rows = a.rows;
  abs_a.cols = a.cols;
  abs_a.row_ptr = a.row_ptr;
  abs_a.col_idx = a.col_idx;
  for (const Value v : a.values) abs_a.values.push_back(std::abs(static_cast<double>(v)));
  std::vector<double> abs_x, abs_y0;
  for (const Value v : x) abs_x.push_back(std::abs(static_cast<double>(v)));
  for (const Value v : y0) abs_y0.push_back(std::abs(static_cast<double>(v)));
  const std::span<const Value> xs(x), y0s(y0);
  const std::span<const double> ax(abs_x), ay(abs_y0);
  const double al = std::abs(ab.alpha), be = std::abs(ab.beta);
  std::vector<double> want, scale;
  if (op == Op::spmv) {
    want = reference::spmv(a, xs, ab.alpha, ab.beta, y0s);
    scale = reference::spmv(abs_a, ax, al, be, ay);
  } else {
    want = reference::spmv_t(a, xs, ab.alpha, ab.beta, y0s);
    scale = reference::spmv_t(abs_a, ax, al, be, ay);
  }
  std::int64_t n = 0;  // longest row (spmv) or column (spmv_t)
  if (op == Op::spmv)
    for (Index r = 0; r < a.rows; ++r) n = std::max<std::int64_t>(n, a.row_ptr[r + 1] - a.row_ptr[r]);
  else {
    std::vector<std::int64_t> len(static_cast<std::size_t>(a.cols), 0);
    for (const Index c : a.col_idx) n = std::max(n, ++len[static_cast<std::size_t>(c)]);
  }
  if (got.size() != want.size()) return "result has the wrong length";
  const double eps = std::numeric_limits<Value>::epsilon();
  for (std::size_t i = 0; i < got.size(); ++i) {
    const double g = static_cast<double>(got[i]);
    const double bound = 2.0 * static_cast<double>(n + 4) * eps * scale[i];
    if (!(std::abs(g - want[i]) <= bound))
      return "entry " + std::to_string(i) + ": got " + std::to_string(g) + ", want " +
             std::to_string(want[i]) + " (bound " + std::to_string(bound) + ")";
  }
  return "";
}

/// Runs `op` of `A` on the host (y poisoned when beta == 0); "" when the result is right.
template <class Value, class Index>
std::string host_check(const Matrix<Value>& A, const Csr<Value, Index>& a, Op op, AlphaBeta ab,
                       std::uint64_t seed) {
  const std::int64_t n_in = op == Op::spmv ? a.cols : a.rows;
  const std::int64_t n_out = op == Op::spmv ? a.rows : a.cols;
  const auto x = random_vector<Value>(n_in, seed);
  const auto y0 = ab.beta == 0 ? poisoned<Value>(n_out) : random_vector<Value>(n_out, seed + 1);
  auto y = y0;
  const auto al = static_cast<Value>(ab.alpha), be = static_cast<Value>(ab.beta);
  if (op == Op::spmv) A.spmv(x, y, al, be);
  else A.spmv_t(x, y, al, be);
  return check_result(a, op, x, ab, y0, y);
}

/// Both products, op = spmv and spmv_t, each with (alpha, beta) = (1, 0) into NaN-poisoned y,
/// (−1.5, 0.5) and (2, 1); x and y0 small integers (seeds `seed` and `seed + 1`); each result
/// within tolerance<Value>() of the fp64 reference. `apply(op, x, y0, alpha, beta)` returns
/// alpha·op(A)·x + beta·y0 by the kernel under test.
template <class Value, class Index, class Apply>
void expect_spmv_and_spmv_t_match(const Csr<Value, Index>& a, std::uint64_t seed, Apply&& apply) {
  const struct {
    Value alpha, beta;
  } coeffs[] = {{1, 0}, {-1.5, 0.5}, {2, 1}};
  for (Op op : {Op::spmv, Op::spmv_t}) {
    const std::int64_t nx = op == Op::spmv_t ? a.rows : a.cols;
    const std::int64_t ny = op == Op::spmv_t ? a.cols : a.rows;
    const auto x = random_vector<Value>(nx, seed, true);
    for (const auto& c : coeffs) {
      SCOPED_TRACE(std::string(to_string(op)) + " alpha=" + std::to_string(c.alpha) +
                   " beta=" + std::to_string(c.beta));
      const auto y0 = c.beta == Value(0) ? poisoned<Value>(ny) : random_vector<Value>(ny, seed + 1, true);
      const std::vector<Value> got = apply(op, x, y0, c.alpha, c.beta);
      const std::span<const Value> xs(x), y0s(y0);
      const auto want = op == Op::spmv_t ? reference::spmv_t(a, xs, c.alpha, c.beta, y0s)
                                         : reference::spmv(a, xs, c.alpha, c.beta, y0s);
      EXPECT_LE(reference::relative_norm2_error(std::span<const Value>(got), std::span<const double>(want)),
                tolerance<Value>());
    }
  }
}

/// The same through the Matrix's own backend (device operands where it is built for CUDA).
template <class Value, class Index>
void expect_matrix_spmv_and_spmv_t_match(const Matrix<Value>& m, const Csr<Value, Index>& a,
                                         std::uint64_t seed) {
  expect_spmv_and_spmv_t_match(a, seed, [&](Op op, const std::vector<Value>& x,
                                            const std::vector<Value>& y0, Value alpha, Value beta) {
    return apply_spmv(m, op, x, &y0, alpha, beta);
  });
}

/// The 4×4 example's products, exact on the CPU: y = A·x and y = Aᵀ·x into NaN poison, and
/// y = 2·op(A)·x − y from y = 1.
template <class Value, class Index>
void check_cpu_example(const char* fmt) {
  const auto A = Matrix<Value>::build(example<Value, Index>(), fmt);
  const std::vector<Value> x{1, 2, 3, 4};
  auto y = poisoned<Value>(4);
  A.spmv(x, y);
  EXPECT_EQ(y, (std::vector<Value>{7, 0, 31, 24})) << fmt;
  y = {1, 1, 1, 1};
  A.spmv(x, y, Value(2), Value(-1));
  EXPECT_EQ(y, (std::vector<Value>{13, -1, 61, 47})) << fmt;
  y = poisoned<Value>(4);
  A.spmv_t(x, y);
  EXPECT_EQ(y, (std::vector<Value>{10, 12, 2, 39})) << fmt;
  y = {1, 1, 1, 1};
  A.spmv_t(x, y, Value(2), Value(-1));
  EXPECT_EQ(y, (std::vector<Value>{19, 23, 3, 77})) << fmt;
}

/// Round trip and both CPU kernels against the fp64 reference on the ragged random matrices.
template <class Value, class Index>
void check_cpu_format(const char* fmt) {
  for (const Spec& spec : cpu_specs()) {
    const auto seed = fresh_seed();
    const auto a = random_matrix<Value, Index>(spec, seed, false);
    const auto A = Matrix<Value>::build(a, fmt);
    EXPECT_EQ(A.to_csr(), (convert<Value, std::int64_t>(a))) << fmt << " round trip, seed " << seed;
    for (Op op : {Op::spmv, Op::spmv_t})
      for (AlphaBeta ab : kAlphaBeta)
        EXPECT_EQ(host_check(A, a, op, ab, seed), "")
            << fmt << " " << to_string(op) << " " << spec.rows << "x" << spec.cols << " alpha "
            << ab.alpha << " beta " << ab.beta << " seed " << seed;
  }
}

/// The byte counts of a format's worked example: storage `s`, built from the example `a`, holds
/// `bytes` and gives `a` back; so does the Matrix of format `fmt`, whose `op` moves those bytes
/// plus x and y (8 values of the 4×4 example).
template <class Storage, class Value, class Index>
void expect_example_bytes(const Storage& s, const Csr<Value, Index>& a, const char* fmt,
                          std::size_t bytes, Op op) {
  EXPECT_EQ(s.storage_bytes(), bytes);
  EXPECT_EQ(s.to_csr(), a);
  const auto A = Matrix<Value>::build(a, fmt);
  EXPECT_EQ(A.storage_bytes(), bytes);
  EXPECT_EQ(A.traffic_bytes(op), bytes + 8 * sizeof(Value));
  EXPECT_EQ(A.to_csr(), (convert<Value, std::int64_t>(a)));
}

/// `op` on the CPU gives the same bits with 1, 3 and 8 OpenMP threads.
template <class Value, class Index>
void check_cpu_thread_independence(const char* fmt, Op op) {
  const auto seed = fresh_seed();
  const auto a = random_matrix<Value, Index>({501, 300, 30, 400, 10, 20}, seed, false);
  const auto A = Matrix<Value>::build(a, fmt);
  const auto x = random_vector<Value>(op == Op::spmv ? a.cols : a.rows, seed);
  const int saved = omp_get_max_threads();
  std::vector<Value> first;
  for (int threads : {1, 3, 8}) {
    omp_set_num_threads(threads);
    auto y = poisoned<Value>(op == Op::spmv ? a.rows : a.cols);
    if (op == Op::spmv) A.spmv(x, y);
    else A.spmv_t(x, y);
    if (first.empty()) first = y;
    EXPECT_EQ(std::memcmp(first.data(), y.data(), y.size() * sizeof(Value)), 0)
        << fmt << " " << to_string(op) << ", " << threads << " threads, seed " << seed;
  }
  omp_set_num_threads(saved);
}

inline const std::vector<Spec>& gpu_specs() {
  // Sizes around the segmented kernel's interval (256 nonzeros) and warp (32): rows longer
  // than several intervals, single-row and single-column matrices, leading/trailing empty rows.
  static const std::vector<Spec> v{{0, 0},
                                   {7, 0},
                                   {0, 7},
                                   {50, 40, 0, 0},
                                   {1, 1},
                                   {3, 5, 2},
                                   {1, 10007, 0, 10000},
                                   {10007, 1, 1},
                                   {3001, 2999, 9, 2000, 13, 29},
                                   {4097, 513, 40, 5000, 0, 1},
                                   {20011, 1031, 3, 777, 100, 0}};
  return v;
}

#if SPMAT_WITH_CUDA
/// Runs `op` of format `fmt` on the GPU; returns the result (y poisoned with NaN when beta == 0).
template <class Value, class Index>
std::vector<Value> gpu_run(const Csr<Value, Index>& a, const char* fmt, Op op, AlphaBeta ab,
                           const std::vector<Value>& x, const std::vector<Value>& y0) {
  const auto A = Matrix<Value>::build(a, fmt, Backend::cuda);
  cuda::DeviceBuffer<Value> dx(x, "test x"), dy(y0.size(), "test y");
  if (ab.beta == 0) dy.fill_bytes(0xFF);
  else dy.upload(y0);
  const auto al = static_cast<Value>(ab.alpha), be = static_cast<Value>(ab.beta);
  if (op == Op::spmv) A.spmv(dx.span(), dy.span(), al, be);
  else A.spmv_t(dx.span(), dy.span(), al, be);
  return dy.download();
}
#endif

/// The 4×4 example's products on the GPU, exact: the four products of check_cpu_example.
template <class Value, class Index>
void check_gpu_example(const char* fmt) {
#if SPMAT_WITH_CUDA
  const auto a = example<Value, Index>();
  const std::vector<Value> x{1, 2, 3, 4}, zeros(4), ones(4, Value(1));
  EXPECT_EQ(gpu_run(a, fmt, Op::spmv, {1, 0}, x, zeros), (std::vector<Value>{7, 0, 31, 24}))
      << fmt;
  EXPECT_EQ(gpu_run(a, fmt, Op::spmv, {2, -1}, x, ones), (std::vector<Value>{13, -1, 61, 47}))
      << fmt;
  EXPECT_EQ(gpu_run(a, fmt, Op::spmv_t, {1, 0}, x, zeros), (std::vector<Value>{10, 12, 2, 39}))
      << fmt;
  EXPECT_EQ(gpu_run(a, fmt, Op::spmv_t, {2, -1}, x, ones), (std::vector<Value>{19, 23, 3, 77}))
      << fmt;
#else
  (void)fmt;
#endif
}

template <class Value, class Index>
void check_gpu_format(const char* fmt) {
#if SPMAT_WITH_CUDA
  for (const Spec& spec : gpu_specs())
    for (bool ints : {false, true}) {
      const auto seed = fresh_seed();
      const auto a = random_matrix<Value, Index>(spec, seed, ints);
      for (Op op : {Op::spmv, Op::spmv_t})
        for (AlphaBeta ab : kAlphaBeta) {
          const std::int64_t n_in = op == Op::spmv ? a.cols : a.rows;
          const std::int64_t n_out = op == Op::spmv ? a.rows : a.cols;
          const auto x = random_vector<Value>(n_in, seed, ints);
          const auto y0 = random_vector<Value>(n_out, seed + 1, ints);
          const auto got = gpu_run(a, fmt, op, ab, x, y0);
          // Small integers: every partial sum is exact, so the result must be too.
          const auto want = op == Op::spmv
                                ? reference::spmv(a, std::span<const Value>(x), ab.alpha,
                                                  ab.beta, std::span<const Value>(y0))
                                : reference::spmv_t(a, std::span<const Value>(x), ab.alpha,
                                                    ab.beta, std::span<const Value>(y0));
          const std::string where = std::string(fmt) + " " + std::string(to_string(op)) + " " +
                                    std::to_string(spec.rows) + "x" + std::to_string(spec.cols) +
                                    (ints ? " integers" : " reals") + " alpha " +
                                    std::to_string(ab.alpha) + " beta " +
                                    std::to_string(ab.beta) + " seed " + std::to_string(seed);
          if (ints)
            EXPECT_EQ(reference::relative_norm2_error(std::span<const Value>(got),
                                                      std::span<const double>(want)),
                      0.0)
                << where;
          else
            EXPECT_EQ(check_result(a, op, x, ab, y0, got), "") << where;
          const auto& caps = find_format(fmt).caps.cuda;
          if (!ints && (op == Op::spmv ? caps.deterministic_spmv : caps.deterministic_spmv_t)) {
            const auto again = gpu_run(a, fmt, op, ab, x, y0);
            EXPECT_EQ(std::memcmp(got.data(), again.data(), got.size() * sizeof(Value)), 0)
                << fmt << " " << to_string(op)
                << " is declared deterministic but two runs differ, seed " << seed;
          }
        }
    }
#else
  (void)fmt;
#endif
}

}  // namespace spmat::testing

/// The CPU tests of typed suite `Suite` (over testing::Pairs) of format `fmt`: the worked example
/// exactly (MultipliesTheExampleExactlyOnTheCpu), both kernels against the reference on the
/// ragged random matrices (CpuKernelsMatchTheReferenceOnRaggedRandomMatrices), and test
/// `ThreadTest`: `op` gives the same bits whatever the OpenMP thread count.
#define SPMAT_CPU_KERNEL_TESTS(Suite, fmt, ThreadTest, op)                                         \
  TYPED_TEST(Suite, MultipliesTheExampleExactlyOnTheCpu) {                                         \
    ::spmat::testing::check_cpu_example<typename TypeParam::Value, typename TypeParam::Index>(fmt); \
  }                                                                                                \
  TYPED_TEST(Suite, CpuKernelsMatchTheReferenceOnRaggedRandomMatrices) {                           \
    ::spmat::testing::check_cpu_format<typename TypeParam::Value, typename TypeParam::Index>(fmt);  \
  }                                                                                                \
  TYPED_TEST(Suite, ThreadTest) {                                                                  \
    ::spmat::testing::check_cpu_thread_independence<typename TypeParam::Value,                     \
                                                    typename TypeParam::Index>(fmt, op);           \
  }
