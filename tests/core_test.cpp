// tests/core_test.cpp — canonical types: validation, conversions, index-range checks.
// SPDX-License-Identifier: MIT
#include <gtest/gtest.h>
#include <omp.h>

#include <random>
#include <string>
#include <utility>

#include "spmat/core/csr.hpp"

namespace spmat {
namespace {

Coo<double, int> example_coo() {
  Coo<double, int> c;
  c.rows = 3;
  c.cols = 4;
  c.row_idx = {2, 0, 0, 2, 2, 1};
  c.col_idx = {3, 2, 0, 3, 0, 1};
  c.values = {1, 2, 3, 4, 0, 6};
  return c;
}

TEST(Core, CooToCsrSortsSumsDuplicatesAndKeepsExplicitZeros) {
  auto a = to_csr(example_coo());
  EXPECT_EQ(a.row_ptr, (std::vector<int>{0, 2, 3, 5}));
  EXPECT_EQ(a.col_idx, (std::vector<int>{0, 2, 1, 0, 3}));
  EXPECT_EQ(a.values, (std::vector<double>{3, 2, 6, 0, 5}));
  EXPECT_NO_THROW(a.validate());
}

TEST(Core, TransposeTwiceIsIdentityAndCscRoundTrips) {
  auto a = to_csr(example_coo());
  EXPECT_EQ(transpose(transpose(a)), a);
  EXPECT_EQ(to_csr(to_csc(a)), a);
  EXPECT_EQ(to_csr(to_coo(a)), a);
  auto t = transpose(a);
  EXPECT_EQ(t.rows, 4);
  EXPECT_EQ(t.cols, 3);
  EXPECT_NO_THROW(t.validate());
}

/// A random canonical CSR with skewed rows (some empty, some long), small-integer values.
Csr<double, int> random_csr(int rows, int cols, unsigned seed) {
  std::mt19937 rng(seed);
  Coo<double, int> c;
  c.rows = rows;
  c.cols = cols;
  for (int r = 0; r < rows; ++r) {
    const int len = r % 7 == 0 ? 0 : static_cast<int>(rng() % (r % 13 == 0 ? cols : 9));
    for (int k = 0; k < len; ++k) {
      c.row_idx.push_back(r);
      c.col_idx.push_back(static_cast<int>(rng() % static_cast<unsigned>(cols)));
      c.values.push_back(static_cast<double>(rng() % 5) - 2);
    }
  }
  return to_csr(c);
}

TEST(Core, ConversionsAreTheSameWithAnyThreadCount) {
  // to_csc splits the rows over threads and validate walks them in parallel: the result (and
  // the first violation named) must not depend on how many threads there are.
  const int saved = omp_get_max_threads();
  for (const auto& [rows, cols] : {std::pair{500, 300}, std::pair{40, 2000}, std::pair{1, 1}}) {
    const auto a = random_csr(rows, cols, static_cast<unsigned>(rows * 7 + cols));
    omp_set_num_threads(1);
    const auto csc1 = to_csc(a);
    const auto coo1 = to_coo(a);
    auto bad = a;
    if (!bad.col_idx.empty()) bad.col_idx.back() = cols;  // out of range in the last row
    std::string msg1;
    try {
      bad.validate();
    } catch (const InvalidMatrixError& e) {
      msg1 = e.what();
    }
    for (int threads : {2, 3, 7, 16}) {
      omp_set_num_threads(threads);
      EXPECT_EQ(to_csc(a), csc1) << rows << "x" << cols << ", " << threads << " threads";
      EXPECT_EQ(to_coo(a), coo1) << threads << " threads";
      EXPECT_EQ(transpose(transpose(a)), a) << threads << " threads";
      EXPECT_NO_THROW(a.validate());
      std::string msg;
      try {
        bad.validate();
      } catch (const InvalidMatrixError& e) {
        msg = e.what();
      }
      EXPECT_EQ(msg, msg1) << threads << " threads";
    }
  }
  omp_set_num_threads(saved);
}

TEST(Core, ValidateNamesTheProblem) {
  auto a = to_csr(example_coo());
  a.col_idx[1] = 7;
  try {
    a.validate("A");
    FAIL() << "expected InvalidMatrixError";
  } catch (const InvalidMatrixError& e) {
    EXPECT_NE(std::string(e.what()).find("column index 7 in row 0 is out of range"),
              std::string::npos)
        << e.what();
  }
  a = to_csr(example_coo());
  std::swap(a.col_idx[0], a.col_idx[1]);
  EXPECT_THROW(a.validate(), InvalidMatrixError);
}

TEST(Core, IndexOverflowIsRefusedWithAMessage) {
  auto a = to_csr(example_coo());
  ScopedInt32Limit limit(4);
  try {
    (void)convert<double, std::int32_t>(a, "A");
    FAIL() << "expected IndexOverflowError";
  } catch (const IndexOverflowError& e) {
    EXPECT_NE(std::string(e.what()).find("nnz = 5 does not fit the int32"), std::string::npos)
        << e.what();
  }
  EXPECT_NO_THROW((convert<double, std::int64_t>(a)));
}

}  // namespace
}  // namespace spmat

namespace spmat {
namespace {
TEST(Core, ValidateRejectsARowPtrThatOvershootsWithoutReadingOutOfBounds) {
  Csr<double, int> a;
  a.rows = 2;
  a.cols = 3;
  a.row_ptr = {0, 100, 5};
  a.col_idx = {0, 1, 2, 0, 1};
  a.values = {1, 2, 3, 4, 5};
  EXPECT_THROW(a.validate(), InvalidMatrixError);
}

TEST(Core, CooToCsrSortsLongAndShortRowsStably) {
  Coo<double, int> c;
  c.rows = 2;
  c.cols = 100;
  for (int k = 99; k >= 0; --k) {  // a long reversed row with a duplicate pair at column 50
    c.row_idx.push_back(0);
    c.col_idx.push_back(k);
    c.values.push_back(k);
  }
  c.row_idx.push_back(0);
  c.col_idx.push_back(50);
  c.values.push_back(1000);
  for (int k : {7, 3, 7, 1}) {
    c.row_idx.push_back(1);
    c.col_idx.push_back(k);
    c.values.push_back(1);
  }
  auto a = to_csr(c);
  EXPECT_NO_THROW(a.validate());
  EXPECT_EQ(a.row_ptr, (std::vector<int>{0, 100, 103}));
  EXPECT_EQ(a.values[50], 1050);
  EXPECT_EQ(a.values[102], 2);  // row 1, column 7: duplicate summed
}
}  // namespace
}  // namespace spmat
