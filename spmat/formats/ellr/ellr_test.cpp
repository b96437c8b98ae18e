// spmat/formats/ellr/ellr_test.cpp — ELLPACK-R: exact layout and row lengths, CPU and GPU kernels.
// SPDX-License-Identifier: MIT
#include "spmat/formats/ellr/ellr.hpp"

#include "spmat/formats/ell/ell_family_testing.inc"

namespace spmat {
namespace {

using namespace ell_family_testing;

TEST(Ellr, BroExampleStoresTheEllArraysPlusRowLengths) {
  const auto a = bro_example<float, std::int64_t>();
  const auto s = Ellr<float, std::int64_t>::build(a, {});
  EXPECT_EQ(s.row_len, (std::vector<std::int64_t>{2, 5, 3, 2}));  // bro.md §2 rowLength
  const auto e = Ell<float, std::int64_t>::build(a, {});
  EXPECT_EQ(s.ell.col_idx, e.col_idx);
  EXPECT_EQ(s.ell.values, e.values);
  EXPECT_EQ(s.ell.pitch, 32);
  EXPECT_EQ(s.ell.width, 5);
  EXPECT_EQ(s.ell.col_idx[1 * 32 + 2], 2);  // row 2, slot 1: column 3 (1-based)
  EXPECT_EQ(s.ell.col_idx[3 * 32 + 0], -1);  // row 0, slot 3: padding
  EXPECT_EQ(s.storage_bytes(), 32u * 5u * (8u + 4u) + 4u * 8u);
  EXPECT_EQ(s.to_csr(), a);
}

TEST(Ellr, OneDenseRowOverManyRowsIsRefusedNamingThePaddingRatio) {
  Coo<double, std::int32_t> c;
  c.rows = c.cols = 100000;
  add_dense_row(c, 3);
  expect_build_refused(to_csr(c), "ellr", "ellr: padding ratio 50000.0 exceeds max_fill=8");
}

SPMAT_ELL_FAMILY_KERNEL_TESTS(Ellr, "ellr")

}  // namespace
}  // namespace spmat
