// spmat/formats/bar/bar_test.cpp — BAR: permutations, cost reduction, the transparent row map,
// and a ~10^6-nonzero run of the fast variant (the 10^7 timing is a disabled test, run by hand).
// SPDX-License-Identifier: MIT
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <numeric>
#include <span>
#include <vector>

#include "spmat/core/reference.hpp"
#include "spmat/formats/bar/bar.hpp"
#include "spmat/formats/bro_ell/bro_ell.hpp"
#include "spmat/formats/bro_ell/bro_test_support.hpp"
#include "spmat/matrix.hpp"

namespace spmat {
namespace {

bool is_permutation_of_rows(const std::vector<std::int64_t>& p, std::int64_t rows) {
  if (static_cast<std::int64_t>(p.size()) != rows) return false;
  std::vector<std::int64_t> s(p);
  std::sort(s.begin(), s.end());
  for (std::int64_t i = 0; i < rows; ++i)
    if (s[i] != i) return false;
  return true;
}

TEST(Bar, GreedySortsSeedsAndFillsEveryClusterToCapacity) {
  const auto a = bro_testing::shuffled_band(1000, 2, 11);  // 1000 rows, h = 32: 31 full + 1 of 8
  bar::Params p;
  p.h = 32;
  p.algo = bar::Algo::greedy;
  const auto ord = bar::order<std::int64_t>(a.rows, a.row_ptr, a.col_idx, p);
  ASSERT_TRUE(is_permutation_of_rows(ord, a.rows));
  const std::int64_t before = bar::cost<std::int64_t>(a.rows, a.row_ptr, a.col_idx, p, {});
  const std::int64_t after = bar::cost<std::int64_t>(a.rows, a.row_ptr, a.col_idx, p, ord);
  EXPECT_LT(after, before);
  const auto barred = BroEll<double, std::int64_t>::encode(a, 32, 32, ord, -1);
  EXPECT_EQ(barred.to_csr(), a);  // the row map undoes the permutation
}

TEST(Bar, RaisesTheSpaceSavingsOfRaggedRows) {
  // Rows of mixed lengths: grouping similar lengths (and widths) into slices trims padding bits.
  const auto a = testing::random_csr_of_lengths(2000, 3000, [](std::int64_t r) { return (r * 7) % 13; }, 21);
  bar::Params p;
  p.h = 32;
  for (auto algo : {bar::Algo::greedy, bar::Algo::fast}) {
    p.algo = algo;
    const auto ord = bar::order<std::int64_t>(a.rows, a.row_ptr, a.col_idx, p);
    const auto plain = BroEll<double, std::int64_t>::encode(a, 32, 32, {}, -1);
    const auto barred = BroEll<double, std::int64_t>::encode(a, 32, 32, ord, -1);
    EXPECT_GT(barred.index_savings().eta(true), plain.index_savings().eta(true) + 0.05);
    EXPECT_EQ(barred.index_savings().permutation, 2000 * sizeof(std::int64_t));
  }
}

TEST(Bar, FastVariantMatchesGreedyQualityOnABand) {
  const auto a = bro_testing::shuffled_band(3000, 3, 12);
  bar::Params p;
  p.h = 256;
  p.algo = bar::Algo::greedy;
  const auto g = bar::order<std::int64_t>(a.rows, a.row_ptr, a.col_idx, p);
  p.algo = bar::Algo::fast;
  const auto f = bar::order<std::int64_t>(a.rows, a.row_ptr, a.col_idx, p);
  ASSERT_TRUE(is_permutation_of_rows(f, a.rows));
  const std::int64_t none = bar::cost<std::int64_t>(a.rows, a.row_ptr, a.col_idx, p, {});
  const std::int64_t cg = bar::cost<std::int64_t>(a.rows, a.row_ptr, a.col_idx, p, g);
  const std::int64_t cf = bar::cost<std::int64_t>(a.rows, a.row_ptr, a.col_idx, p, f);
  EXPECT_LT(cg, none);
  EXPECT_LT(cf, none);
}

TEST(Bar, HandlesDegenerateShapes) {
  bar::Params p;
  p.h = 32;
  const std::vector<std::int32_t> ptr0{0}, col0;
  EXPECT_TRUE(bar::order<std::int32_t>(0, ptr0, col0, p).empty());
  const std::vector<std::int32_t> ptr{0, 0, 0, 0};  // 3 empty rows
  EXPECT_TRUE(is_permutation_of_rows(bar::order<std::int32_t>(3, ptr, col0, p), 3));
}

TEST(Bar, BroEllBarGivesYInTheOriginalRowOrder) {
  const auto a = bro_testing::shuffled_band(500, 2, 13);
  const auto m = Matrix<double>::build(a, "bro-ell-bar", Backend::cpu, FormatOptions().set("h", "32"));
  std::vector<double> x(500);
  std::iota(x.begin(), x.end(), 1.0);
  std::vector<double> y(500, std::numeric_limits<double>::quiet_NaN());
  m.spmv(x, y);
  const auto want = reference::spmv(a, std::span<const double>(x), 1.0, 0.0, std::span<const double>());
  EXPECT_EQ(y, want);  // integer data: exact
}

/// ~1.1×10^6 nonzeros (160,000 rows of a shuffled 7-band): the fast variant stays quick.
TEST(Bar, FastVariantHandlesAMillionNonzeros) {
  const auto a = bro_testing::shuffled_band(160000, 3, 14);
  bar::Params p;
  p.algo = bar::Algo::fast;
  const auto t0 = std::chrono::steady_clock::now();
  const auto ord = bar::order<std::int64_t>(a.rows, a.row_ptr, a.col_idx, p);
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("[bar] fast BAR on %lld nnz: %.2f s\n", static_cast<long long>(a.nnz()), s);
  ASSERT_TRUE(is_permutation_of_rows(ord, a.rows));
  EXPECT_LT(bar::cost<std::int64_t>(a.rows, a.row_ptr, a.col_idx, p, ord),
            bar::cost<std::int64_t>(a.rows, a.row_ptr, a.col_idx, p, {}));
}

/// Run by hand: ./spmat_tests --gtest_also_run_disabled_tests --gtest_filter='*TenMillion*'
TEST(Bar, DISABLED_FastVariantTimingAtTenMillionNonzeros) {
  const auto a = bro_testing::shuffled_band(1430000, 3, 15);  // ≈ 10^7 nnz
  bar::Params p;
  p.algo = bar::Algo::fast;
  const auto t0 = std::chrono::steady_clock::now();
  const auto ord = bar::order<std::int64_t>(a.rows, a.row_ptr, a.col_idx, p);
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("[bar] fast BAR on %lld nnz, %lld rows: %.2f s (one core)\n",
              static_cast<long long>(a.nnz()), static_cast<long long>(a.rows), s);
  ASSERT_TRUE(is_permutation_of_rows(ord, a.rows));
  const auto plain = BroEll<double, std::int64_t>::encode(a, 256, 32, {}, -1);
  const auto barred = BroEll<double, std::int64_t>::encode(a, 256, 32, ord, -1);
  std::printf("[bar] eta (with metadata): %.4f before, %.4f after\n",
              plain.index_savings().eta(true), barred.index_savings().eta(true));
  EXPECT_LT(s, 60.0);
}

}  // namespace
}  // namespace spmat
