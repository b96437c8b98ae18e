// spmat/formats/bro_hyb/bro_hyb_test.cpp — BRO-HYB: the split rule and the split itself.
// (The reference battery of the whole BRO family runs in bro_ell_test.cpp.)
// SPDX-License-Identifier: MIT
#include <gtest/gtest.h>

#include <vector>

#include "spmat/core/error.hpp"
#include "spmat/formats/bro_ell/bro_test_support.hpp"
#include "spmat/formats/bro_hyb/bro_hyb.hpp"

namespace spmat {
namespace {

TEST(BroHybSplit, FollowsCuspsRule) {
  const std::vector<std::int32_t> ptr{0, 2, 7, 10, 12};  // lengths {2,5,3,2}
  EXPECT_EQ(bro_hyb_ell_width<std::int32_t>(ptr), 0);     // R(0) = 4 < 4096
  EXPECT_EQ(bro_hyb_ell_width<std::int32_t>(ptr, 3.0, 0), 3);  // 3·R(3) = 3 < 4
  const std::vector<std::int32_t> empty{0};
  EXPECT_EQ(bro_hyb_ell_width<std::int32_t>(empty), 0);
  // 9000 rows of 4 and 1000 rows of 50: R(3) = 10000 -> R(4) = 1000 < 4096 → K = 4.
  std::vector<std::int64_t> big{0};
  for (int r = 0; r < 10000; ++r) big.push_back(big.back() + (r % 10 == 0 ? 50 : 4));
  EXPECT_EQ(bro_hyb_ell_width<std::int64_t>(big), 4);
}

TEST(BroHybSplit, ByteRulePricesTheSlicedPadding) {
  // The header's example: lengths {2,5,5,5}, h = 2, fp64/int32 → K = 5, no COO part.
  const std::vector<std::int32_t> ptr{0, 2, 7, 12, 17};
  EXPECT_EQ(bro_hyb_ell_width_bytes<std::int32_t>(ptr, 2, 8, 4), 5);
  const std::vector<std::int32_t> empty{0};
  EXPECT_EQ(bro_hyb_ell_width_bytes<std::int32_t>(empty, 32, 8, 4), 0);
  // Near-uniform lengths 3..6 (a G3_circuit-like profile): all in ELL, where CUSP's rule cuts.
  std::vector<std::int64_t> g{0};
  for (std::int64_t r = 0; r < 100000; ++r) g.push_back(g.back() + 3 + (r * 7919) % 4);
  EXPECT_EQ(bro_hyb_ell_width_bytes<std::int64_t>(g, 32, 8, 4), 6);
  EXPECT_LT(bro_hyb_ell_width<std::int64_t>(g), 6);
  // One row of 1000 in 64 slices of 4-entry rows: the long row goes to COO.
  std::vector<std::int64_t> l{0};
  for (std::int64_t r = 0; r < 2048; ++r) l.push_back(l.back() + (r == 100 ? 1000 : 4));
  EXPECT_EQ(bro_hyb_ell_width_bytes<std::int64_t>(l, 32, 8, 4), 4);
  // Option parsing.
  const Csr<double, std::int64_t> a = bro_testing::lap2d(40, 40);
  using H = BroHyb<double, std::int64_t>;
  EXPECT_EQ(H::build(a, FormatOptions()).ell_width, 5);
  EXPECT_EQ(H::build(a, FormatOptions().set("split", "cusp")).ell_width, 0);
  EXPECT_THROW((void)H::build(a, FormatOptions().set("split", "x")), ParseError);
}

TEST(BroHyb, PutsTheFirstKEntriesInEllAndTheRestInCoo) {
  const auto a = bro_testing::paper_example();
  const auto m = BroHyb<double, std::int32_t>::build(a, FormatOptions().set("ell_width", "3").set("h", "32"));
  EXPECT_EQ(m.ell_width, 3);
  EXPECT_EQ(m.ell.nnz, 10);
  EXPECT_EQ(m.coo.nnz, 2);  // row 1, columns 3 and 4 (the paper's HYB example)
  EXPECT_EQ(m.coo.col_idx, (std::vector<std::int32_t>{3, 4}));
  EXPECT_EQ(m.coo.values, (std::vector<double>{4, 1}));
  EXPECT_EQ(m.to_csr(), a);
  bro_testing::expect_paper_example_product(m);
  const auto s = m.index_savings();
  EXPECT_EQ(s.original, 4 * 3 * 4u + 2 * 2 * 4u);
}

}  // namespace
}  // namespace spmat
