// spmat/formats/bcoo/bcoo_test.cpp — BCOO: exact chunking of the worked example and the boundary
// fix-up of rows cut by chunks (kernels vs the reference: bccoo_test.cpp, conformance suite).
// SPDX-License-Identifier: MIT
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "spmat/formats/bcoo/bcoo.hpp"
#include "tests/support/test_support.hpp"

namespace spmat {
namespace {

const Csr<double, std::int32_t> kExample = testing::example<double, std::int32_t>();

TEST(Bcoo, WorkedExampleIsChunkedByNonzerosNotRows) {
  const auto s = Bcoo<double, std::int32_t>::build(kExample, FormatOptions().set("chunk", "4"));
  EXPECT_EQ(s.chunks(), 2);
  EXPECT_EQ(s.a.row_idx, (std::vector<std::int32_t>{0, 0, 2, 2, 2, 3}));
  EXPECT_EQ(s.a.col_idx, (std::vector<std::int32_t>{0, 2, 0, 1, 3, 3}));
  EXPECT_EQ(s.storage_bytes(), 6u * (4 + 4 + 8));
  std::vector<std::int64_t> rows_of_chunk1;
  s.visit(1, [&](std::int64_t r, std::int64_t, double) { rows_of_chunk1.push_back(r); });
  EXPECT_EQ(rows_of_chunk1, (std::vector<std::int64_t>{2, 3}));  // row 2 is cut by the boundary
  EXPECT_EQ(s.to_csr(), kExample);
}

TEST(Bcoo, RowsCutByEveryChunkBoundaryAreSummedOnce) {
  // chunk = 1: every entry is its own chunk, so row 2 spans three chunks and row 1 (empty)
  // lies between two chunks.
  const auto s = Bcoo<double, std::int32_t>::build(kExample, FormatOptions().set("chunk", "1"));
  const std::vector<double> x{1, 10, 100, 1000};
  std::vector<double> y(4, std::numeric_limits<double>::quiet_NaN());
  spmv(s, x.data(), y.data(), 1.0, 0.0);
  EXPECT_EQ(y, (std::vector<double>{201, 0, 5043, 6000}));
  std::vector<double> y2{1, 1, 1, 1};
  spmv(s, x.data(), y2.data(), 2.0, -1.0);
  EXPECT_EQ(y2, (std::vector<double>{401, -1, 10085, 11999}));
  std::vector<double> t(4, std::numeric_limits<double>::quiet_NaN());
  spmv_t(s, x.data(), t.data(), 1.0, 0.0);  // Aᵀx: col 0 = 1 + 300, col 1 = 400, col 2 = 2, col 3 = 500 + 6000
  EXPECT_EQ(t, (std::vector<double>{301, 400, 2, 6500}));
}

}  // namespace
}  // namespace spmat
