// spmat/vendor/cusparse/cusparse_test.cpp — the cuSPARSE-backed formats against the fp64
// reference: spmv, spmv_t, spmm (every spmm_alg, both layouts), add, and their refusals.
// SPDX-License-Identifier: MIT
//
// GPU tests skip (with the reason) when no GPU is present; the whole file is a skip in builds
// without CUDA (sources under spmat/vendor/ only exist with CUDA).
#include <gtest/gtest.h>

#include "spmat/config.hpp"
#include "spmat/core/reference.hpp"
#include "spmat/formats/csr/csr.hpp"
#include "spmat/matrix.hpp"
#include "tests/support/test_support.hpp"
#if SPMAT_WITH_CUDA
#include <algorithm>
#include <cstdint>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "spmat/cuda/buffer.hpp"
#endif

namespace spmat {
namespace {

#if SPMAT_WITH_CUDA

const char* const kFormats[] = {"cusparse-csr", "cusparse-csr-alg2", "cusparse-coo"};

/// Random canonical CSR (row r gets about `mean` entries, every 7th row empty, row `long_row`
/// gets `long_len`), small-integer values so sums are exact in fp32 and fp64.
Csr<double, std::int64_t> random_csr(std::int64_t rows, std::int64_t cols, int mean,
                                     std::int64_t long_row, std::int64_t long_len,
                                     std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int> val(-4, 4), len(0, 2 * mean);
  Csr<double, std::int64_t> a;
  a.rows = rows;
  a.cols = cols;
  for (std::int64_t r = 0; r < rows; ++r) {
    std::int64_t n = r % 7 == 0 ? 0 : std::min<std::int64_t>(len(rng), cols);
    if (r == long_row) n = std::min(long_len, cols);
    std::set<std::int64_t> s;
    if (n * 2 >= cols) {
      for (std::int64_t j = 0; j < n; ++j) s.insert(j);
    } else {
      std::uniform_int_distribution<std::int64_t> col(0, cols - 1);
      while (static_cast<std::int64_t>(s.size()) < n) s.insert(col(rng));
    }
    for (auto j : s) {
      a.col_idx.push_back(j);
      a.values.push_back(val(rng));
    }
    a.row_ptr.push_back(static_cast<std::int64_t>(a.col_idx.size()));
  }
  return a;
}

struct Case {
  std::string name;
  Csr<double, std::int64_t> a;
};

const std::vector<Case>& cases() {
  static const std::vector<Case> all = {
      {"ragged_1000x777", random_csr(1000, 777, 6, -1, 0, 1)},
      {"long_row_201x100003", random_csr(201, 100003, 2, 5, 100000, 2)},
      {"tall_4001x19", random_csr(4001, 19, 3, -1, 0, 3)},
      {"wide_17x3001", random_csr(17, 3001, 100, -1, 0, 4)},
      {"zero_by_zero", random_csr(0, 0, 1, -1, 0, 5)},
      {"zero_rows_0x9", random_csr(0, 9, 1, -1, 0, 6)},
      {"zero_cols_9x0", random_csr(9, 0, 1, -1, 0, 7)},
      {"all_zero_31x33", random_csr(31, 33, 0, -1, 0, 8)},
  };
  return all;
}

template <class V>
double rel_error(const std::vector<V>& got, const std::vector<double>& want) {
  return reference::relative_norm2_error(std::span<const V>(got), std::span<const double>(want));
}

template <class V, class I>
void check_spmv(const char* format, const Case& c) {
  SCOPED_TRACE(std::string(format) + " " + std::string(precision_name<V>()) + "/" +
               std::string(index_name<I>()) + " on " + c.name);
  const auto a = convert<V, I>(c.a);
  const auto m = Matrix<V>::build(a, format, Backend::cuda);
  m.prepare(Op::spmv);  // the explicit path; spmv_t below prepares lazily
  for (bool transpose : {false, true}) {
    const std::int64_t nx = transpose ? a.rows : a.cols, ny = transpose ? a.cols : a.rows;
    const auto x = testing::random_vector<V>(nx, 11, true);
    for (auto [alpha, beta] : {std::pair<V, V>{1, 0}, std::pair<V, V>{-1.5, 0.5}}) {
      SCOPED_TRACE(std::string(transpose ? "spmv_t" : "spmv") + " beta=" + std::to_string(beta));
      const auto y0 = beta == V(0) ? testing::poisoned<V>(ny) : testing::random_vector<V>(ny, 12, true);
      cuda::DeviceBuffer<V> dx(x, "test x"), dy(y0, "test y");
      if (transpose)
        m.spmv_t(std::span<const V>(dx.data(), dx.size()), dy.span(), alpha, beta);
      else
        m.spmv(std::span<const V>(dx.data(), dx.size()), dy.span(), alpha, beta);
      cuda::synchronize();
      const auto want =
          transpose ? reference::spmv_t(a, std::span<const V>(x), alpha, beta, std::span<const V>(y0))
                    : reference::spmv(a, std::span<const V>(x), alpha, beta, std::span<const V>(y0));
      EXPECT_LE(rel_error(dy.download(), want), testing::tolerance<V>());
    }
  }
}

template <class V, class I>
void check_spmm(const char* format, const Case& c, const char* alg) {
  SCOPED_TRACE(std::string(format) + " spmm_alg=" + alg + " " + std::string(precision_name<V>()) +
               "/" + std::string(index_name<I>()) + " on " + c.name);
  const auto a = convert<V, I>(c.a);
  const auto m = Matrix<V>::build(a, format, Backend::cuda, FormatOptions().set("spmm_alg", alg));
  for (DenseLayout layout : {DenseLayout::row_major, DenseLayout::col_major}) {
    const std::int64_t k = 7;
    SCOPED_TRACE(std::string(to_string(layout)));
    const auto b = testing::random_vector<V>(a.cols * k, 21, true);
    const auto c0 = testing::poisoned<V>(a.rows * k);
    cuda::DeviceBuffer<V> db(b, "test B"), dc(c0, "test C");
    try {
      m.prepare(Op::spmm, k, layout);
      m.spmm(std::span<const V>(db.data(), db.size()), dc.span(), k, layout, V(2), V(0));
    } catch (const UnsupportedError& e) {
      // An algorithm/layout/index combination cuSPARSE refuses must say which one.
      EXPECT_NE(std::string(e.what()).find("spmm_alg"), std::string::npos) << e.what();
      continue;
    }
    cuda::synchronize();
    const auto want = reference::spmm(a, std::span<const V>(b), k, layout, 2.0, 0.0, std::span<const V>());
    EXPECT_LE(rel_error(dc.download(), want), testing::tolerance<V>());
  }
}

template <class V, class I>
void check_add(const Case& c) {
  SCOPED_TRACE(std::string("cusparse-csr add ") + std::string(precision_name<V>()) + "/" +
               std::string(index_name<I>()) + " on " + c.name);
  const auto a = convert<V, I>(c.a);
  const auto b = convert<V, I>(random_csr(c.a.rows, c.a.cols, 4, -1, 0, 99));
  const auto ma = Matrix<V>::build(a, "cusparse-csr", Backend::cuda);
  const auto mb = Matrix<V>::build(b, "cusparse-csr", Backend::cuda);
  const auto sum = ma.add(mb, V(2), V(-0.5));
  const auto want = convert<V, std::int64_t>(csr_add(a, b, V(2), V(-0.5)));
  EXPECT_EQ(sum.to_csr(), want);
  EXPECT_EQ(sum.format_name(), "cusparse-csr");
}

TEST(Cusparse, SpmvAndSpmvTMatchTheReferenceForEveryFormatAndType) {
  std::string why;
  if (!testing::gpu_available(&why)) GTEST_SKIP() << why;
  for (const char* f : kFormats)
    for (const auto& c : cases()) {
      check_spmv<float, std::int32_t>(f, c);
      check_spmv<float, std::int64_t>(f, c);
      check_spmv<double, std::int32_t>(f, c);
      check_spmv<double, std::int64_t>(f, c);
    }
}

TEST(Cusparse, SpmmMatchesTheReferenceOrRefusesWithAClearMessage) {
  std::string why;
  if (!testing::gpu_available(&why)) GTEST_SKIP() << why;
  for (const auto& c : cases()) {
    for (const char* alg : {"default", "1", "2", "3"}) {
      check_spmm<double, std::int32_t>("cusparse-csr", c, alg);
      check_spmm<float, std::int64_t>("cusparse-csr", c, alg);
    }
    check_spmm<double, std::int64_t>("cusparse-csr-alg2", c, "default");
    for (const char* alg : {"default", "4"}) check_spmm<float, std::int32_t>("cusparse-coo", c, alg);
  }
}

TEST(Cusparse, AddMatchesTheCpuUnionPatternSum) {
  std::string why;
  if (!testing::gpu_available(&why)) GTEST_SKIP() << why;
  for (const auto& c : cases()) {
    check_add<float, std::int32_t>(c);
    check_add<double, std::int32_t>(c);
    check_add<double, std::int64_t>(c);
  }
}

TEST(Cusparse, ToCsrRoundTripsExactly) {
  std::string why;
  if (!testing::gpu_available(&why)) GTEST_SKIP() << why;
  for (const char* f : kFormats)
    for (const auto& c : cases()) {
      SCOPED_TRACE(std::string(f) + " on " + c.name);
      const auto m = Matrix<double>::build(c.a, f, Backend::cuda);
      EXPECT_EQ(m.to_csr(), c.a);
      EXPECT_EQ(m.nnz(), static_cast<std::int64_t>(c.a.values.size()));
    }
}

TEST(Cusparse, UnsupportedRequestsFailWithAReadableError) {
  // Runs without a GPU too: these are refused before any device work.
  const auto a = random_csr(5, 5, 2, -1, 0, 1);
  for (const char* f : kFormats) {
    EXPECT_FALSE(find_format(f).caps.cpu.available) << f;
    EXPECT_THROW((void)Matrix<double>::build(a, f, Backend::cpu), UnsupportedError) << f;
  }
  EXPECT_FALSE(find_format("cusparse-coo").caps.cuda.add);
  EXPECT_FALSE(find_format("cusparse-csr").caps.cuda.deterministic_spmv);
  EXPECT_TRUE(find_format("cusparse-csr-alg2").caps.cuda.deterministic_spmv);
  std::string why;
  if (!testing::gpu_available(&why)) return;
  EXPECT_THROW((void)Matrix<double>::build(a, "cusparse-csr", Backend::cuda,
                                           FormatOptions().set("spmm_alg", "9")),
               UnsupportedError);
  const auto m = Matrix<double>::build(a, "cusparse-coo", Backend::cuda);
  EXPECT_THROW((void)m.add(m), UnsupportedError);
}

#else
TEST(Cusparse, NeedsACudaBuild) { GTEST_SKIP() << "spmat was built without CUDA (no cuSPARSE)"; }
#endif  // SPMAT_WITH_CUDA

}  // namespace
}  // namespace spmat
