// spmat/formats/bro_coo/bro_coo_test.cpp — BRO-COO: hand-checked interval layout and decode.
// (The reference battery of the whole BRO family runs in bro_ell_test.cpp.)
// SPDX-License-Identifier: MIT
#include <gtest/gtest.h>

#include <vector>

#include "spmat/formats/bro_coo/bro_coo.hpp"
#include "spmat/formats/bro_ell/bro_test_support.hpp"

namespace spmat {
namespace {

TEST(BroCoo, PacksThePapersRowIndicesInOneInterval) {
  const auto a = bro_testing::paper_example();
  const auto c = BroCoo<double, std::int32_t>::build(a, FormatOptions().set("interval", "32"));
  EXPECT_EQ(c.base_row, (std::vector<std::int32_t>{0}));
  EXPECT_EQ(c.widths, (std::vector<std::uint8_t>{2}));  // deltas up to 3
  EXPECT_EQ(c.sym_off, (std::vector<std::int64_t>{0, 32}));
  std::vector<std::uint32_t> want(32, 0);
  const std::uint32_t rows[12] = {0, 0, 1, 1, 1, 1, 1, 2, 2, 2, 3, 3};
  for (int t = 0; t < 12; ++t) want[t] = rows[t] << 30;  // one 2-bit field, MSB-first
  EXPECT_EQ(c.sym32, want);
  EXPECT_EQ(c.to_csr(), a);
  const auto s = c.index_savings();
  EXPECT_EQ(s.original, 96u);                // 2·12 four-byte indices
  EXPECT_EQ(s.compressed, 32 * 4 + 48u);     // 32 symbols + raw columns
}

TEST(BroCoo, SpansRowsOverStepsAndIntervalsWithZeroWidths) {
  // One row of 100 entries then rows 1..3 with one entry each: interval 64 →
  // interval 0 is all row 0 (b = 0: nothing stored), interval 1 has rows 0,1,2,3.
  Csr<float, std::int64_t> a;
  a.rows = 4;
  a.cols = 100;
  a.row_ptr = {0, 100, 101, 102, 103};
  for (int j = 0; j < 100; ++j) a.col_idx.push_back(j), a.values.push_back(1.0f);
  for (int j = 0; j < 3; ++j) a.col_idx.push_back(j), a.values.push_back(2.0f);
  const auto c = BroCoo<float, std::int64_t>::build(a, FormatOptions().set("interval", "64"));
  EXPECT_EQ(c.widths, (std::vector<std::uint8_t>{0, 2}));
  EXPECT_EQ(c.base_row, (std::vector<std::int64_t>{0, 0}));
  EXPECT_EQ(c.sym_off[1], 0);
  EXPECT_EQ(c.to_csr(), a);
  std::vector<float> x(100, 1.0f), y(4, -1.0f);
  spmv(c, x.data(), y.data(), 1.0f, 0.0f);
  EXPECT_EQ(y, (std::vector<float>{100, 2, 2, 2}));
}

}  // namespace
}  // namespace spmat
