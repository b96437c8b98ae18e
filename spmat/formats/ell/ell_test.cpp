// spmat/formats/ell/ell_test.cpp — ELLPACK: exact layout, padding limit, CPU and GPU kernels vs reference.
// SPDX-License-Identifier: MIT
#include "spmat/formats/ell/ell.hpp"

#include "spmat/formats/ell/ell_family_testing.inc"

namespace spmat {
namespace {

using namespace ell_family_testing;

/// Expected column-major arrays for left-packed rows `rows_cols`/`rows_vals`, pitch 32.
template <class Value, class Index>
void expect_ell_arrays(const Ell<Value, Index>& e, std::int64_t width,
                       const std::vector<std::vector<Index>>& cols,
                       const std::vector<std::vector<Value>>& vals) {
  ASSERT_EQ(e.width, width);
  ASSERT_EQ(e.pitch, 32);
  std::vector<Index> want_c(static_cast<std::size_t>(32 * width), Index(-1));
  std::vector<Value> want_v(want_c.size(), Value(0));
  for (std::size_t i = 0; i < cols.size(); ++i)
    for (std::size_t j = 0; j < cols[i].size(); ++j) {
      want_c[j * 32 + i] = cols[i][j];
      want_v[j * 32 + i] = vals[i][j];
    }
  EXPECT_EQ(e.col_idx, want_c);
  EXPECT_EQ(e.values, want_v);
}

TEST(Ell, BroExampleIsStoredColumnMajorWithPitch32AndMinusOnePadding) {
  const auto a = bro_example<double, std::int32_t>();
  const auto e = Ell<double, std::int32_t>::build(a, {});
  // bro.md §2 (1-based) col_idx = [[1,3,*,*,*],[1,2,3,4,5],[2,3,5,*,*],[4,5,*,*,*]].
  expect_ell_arrays(e, 5, {{0, 2}, {0, 1, 2, 3, 4}, {1, 2, 4}, {3, 4}},
                    {{3, 2}, {2, 6, 5, 4, 1}, {1, 9, 7}, {8, 3}});
  EXPECT_EQ(e.nnz, 12);
  EXPECT_EQ(e.storage_bytes(), 32u * 5u * (4u + 8u));
  EXPECT_EQ(e.to_csr(), a);
}

TEST(Ell, HeaderExampleMatchesItsComment) {
  const auto a = testing::example<float, std::int64_t>();
  const auto e = Ell<float, std::int64_t>::build(a, {});
  expect_ell_arrays(e, 3, {{0, 2}, {}, {0, 1, 3}, {3}}, {{1, 2}, {}, {3, 4, 5}, {6}});
  EXPECT_EQ(e.to_csr(), a);
}

TEST(Ell, ExplicitZerosAreStoredEntriesNotPadding) {
  Csr<double, std::int32_t> a;
  a.rows = 2;
  a.cols = 3;
  a.row_ptr = {0, 2, 3};
  a.col_idx = {0, 2, 1};
  a.values = {0, 5, 0};
  const auto e = Ell<double, std::int32_t>::build(a, {});
  EXPECT_EQ(e.col_idx[0], 0);
  EXPECT_EQ(e.col_idx[1], 1);
  EXPECT_EQ(e.col_idx[32], 2);
  EXPECT_EQ(e.col_idx[33], -1);
  EXPECT_EQ(e.to_csr(), a);
}

TEST(Ell, OneDenseRowOverManyRowsIsRefusedNamingThePaddingRatio) {
  // 100000 × 100000 with one dense row: rows × width = 1e10 slots for 100100 entries and
  // 100000 rows: padding ratio 49975.0.
  Coo<double, std::int32_t> c;
  c.rows = c.cols = 100000;
  add_dense_row(c, 7);
  for (int i = 0; i < 100; ++i) c.row_idx.push_back(i * 1000 + 1), c.col_idx.push_back(i), c.values.push_back(2);
  const auto a = to_csr(c);
  expect_build_refused(a, "ell", "ell: padding ratio 49975.0 exceeds max_fill=8");
  expect_build_refused(a, "ell", "use hyb or csr");
}

// Three rows, one of them dense: the row is 3 times the mean (padding ratio 3.0), so the
// limit lets it through; the check is relative to the mean row, not to a row count.
TEST(Ell, OneDenseRowOverFewRowsBuilds) {
  Coo<double, std::int32_t> c;
  c.rows = 3;
  c.cols = 100000;
  add_dense_row(c, 1);
  const auto a = to_csr(c);
  const auto m = Matrix<double>::build(a, "ell");
  std::vector<double> x(100000, 1.0), y(3, NAN);
  m.spmv(x, y);
  EXPECT_EQ(y, (std::vector<double>{0, 100000, 0}));
}

TEST(Ell, MaxFillOptionControlsTheLimit) {
  // 2000 rows, one row of 1001 entries: 2000*1001 slots for 3000 nonzeros and 2000 rows,
  // padding ratio 400.4 > 8 (the example of check_padding in row_limits.hpp).
  Coo<double, std::int32_t> c;
  c.rows = 2000;
  c.cols = 1500;
  for (int j = 0; j < 1000; ++j) c.row_idx.push_back(5), c.col_idx.push_back(j), c.values.push_back(1);
  for (int i = 0; i < 2000; ++i) c.row_idx.push_back(i), c.col_idx.push_back(1200), c.values.push_back(1);
  const auto b = to_csr(c);
  try {
    (void)Matrix<double>::build(b, "ell");
    FAIL() << "expected UnsupportedError";
  } catch (const UnsupportedError& e) {
    EXPECT_STREQ(e.what(),
                 "ell: padding ratio 400.4 exceeds max_fill=8 (2002000 slots for 3000 nonzeros "
                 "and 2000 rows: storage and traffic 400.4 times CSR's); use hyb or csr for "
                 "matrices with a few long rows, or raise max_fill (inf: no limit)");
  }
  EXPECT_THROW((void)Matrix<double>::build(b, "ell", Backend::cpu,
                                           FormatOptions().set("max_fill", "400")),
               UnsupportedError);
  EXPECT_NO_THROW((void)Matrix<double>::build(b, "ell", Backend::cpu,
                                              FormatOptions().set("max_fill", "401")));
  EXPECT_NO_THROW((void)Matrix<double>::build(b, "ell", Backend::cpu,
                                              FormatOptions().set("max_fill", "inf")));
  EXPECT_THROW((void)Matrix<double>::build(b, "ell", Backend::cpu,
                                           FormatOptions().set("max_fill", "-1")),
               ParseError);
}

SPMAT_ELL_FAMILY_KERNEL_TESTS(Ell, "ell")

}  // namespace
}  // namespace spmat
