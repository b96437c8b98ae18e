// spmat/formats/hyb/hyb_test.cpp — HYB: CUSP's K rule, exact ELL/COO split, CPU and GPU kernels.
// SPDX-License-Identifier: MIT
#include "spmat/formats/hyb/hyb.hpp"

#include "spmat/formats/ell/ell_family_testing.inc"

namespace spmat {
namespace {

using namespace ell_family_testing;
using HybD = Hyb<double, std::int32_t>;

std::vector<int> lengths(std::initializer_list<std::pair<int, int>> count_len) {
  std::vector<int> v;
  for (auto [count, len] : count_len) v.insert(v.end(), static_cast<std::size_t>(count), len);
  return v;
}

TEST(Hyb, WidthRuleIsCuspsOnCraftedRowLengthDistributions) {
  // bro.md §2 example, lengths {2,5,3,2}: every R(i) < 4096, so CUSP picks K = 0 ...
  EXPECT_EQ(hyb_ell_width(std::vector<int>{2, 5, 3, 2}), 0);
  // ... and with the breakeven test off the 1/3 rule gives the paper's K = 3:
  // R(0)=4, R(1)=4, R(2)=2 (3·2 = 6 >= 4), R(3)=1 (3 < 4).
  EXPECT_EQ(hyb_ell_width(std::vector<int>{2, 5, 3, 2}, 0), 3);
  // 9000 rows: 6000 of length 1, 3000 of length 5. R(0)=9000, R(1)=3000: 3·3000 = 9000 is not
  // < 9000, but 3000 < 4096 → K = 1. Without breakeven, R(1..4) = 3000 never passes → maxlen 5.
  EXPECT_EQ(hyb_ell_width(lengths({{6000, 1}, {3000, 5}})), 1);
  EXPECT_EQ(hyb_ell_width(lengths({{6000, 1}, {3000, 5}}), 0), 5);
  // 30000 rows: 20000 of length 2, 9999 of length 6, 1 of length 50.
  // R(0)=R(1)=30000, R(2)=10000 (3·10000 = 30000, not < 30000; not < 4096), R(3)=10000, ...,
  // R(6)=1 → K = 6 (3 < 30000).
  EXPECT_EQ(hyb_ell_width(lengths({{20000, 2}, {9999, 6}, {1, 50}})), 6);
  // Same with 9998 rows of length 6 (R(2) = 9999: 29997 < 30000) → K = 2.
  EXPECT_EQ(hyb_ell_width(lengths({{20001, 2}, {9998, 6}, {1, 50}})), 2);
  // Uniform lengths: R(i) = m until i = len, where R = 0 → K = len.
  EXPECT_EQ(hyb_ell_width(lengths({{10000, 7}})), 7);
  // Empty matrix and all-empty rows: maxlen 0 → K = 0.
  EXPECT_EQ(hyb_ell_width(std::vector<int>{}), 0);
  EXPECT_EQ(hyb_ell_width(std::vector<int>(100, 0)), 0);
}

TEST(Hyb, BroExampleSplitsLikeThePaperWhenKIsThree) {
  const auto a = bro_example<double, std::int32_t>();
  const auto s = Hyb<double, std::int32_t>::build(a, FormatOptions().set("breakeven", "0"));
  ASSERT_EQ(s.ell.width, 3);
  ASSERT_EQ(s.ell.pitch, 32);
  // ELL part: [[1,3,*],[1,2,3],[2,3,5],[4,5,*]] (1-based) column-major.
  std::vector<std::int32_t> want_c(96, -1);
  std::vector<double> want_v(96, 0);
  const std::vector<std::vector<int>> c = {{0, 2}, {0, 1, 2}, {1, 2, 4}, {3, 4}};
  const std::vector<std::vector<double>> v = {{3, 2}, {2, 6, 5}, {1, 9, 7}, {8, 3}};
  for (std::size_t i = 0; i < 4; ++i)
    for (std::size_t j = 0; j < c[i].size(); ++j) want_c[j * 32 + i] = c[i][j], want_v[j * 32 + i] = v[i][j];
  EXPECT_EQ(s.ell.col_idx, want_c);
  EXPECT_EQ(s.ell.values, want_v);
  // COO part: rowIdx=[2,2], colIdx=[4,5], vals=[4,1] (1-based) in bro.md §2.
  EXPECT_EQ(s.coo_row, (std::vector<std::int32_t>{1, 1}));
  EXPECT_EQ(s.coo_col, (std::vector<std::int32_t>{3, 4}));
  EXPECT_EQ(s.coo_val, (std::vector<double>{4, 1}));
  EXPECT_EQ(s.storage_bytes(), 96u * 12u + 2u * (4 + 4 + 8));
  EXPECT_EQ(s.shape().nnz, 12);
  EXPECT_EQ(s.to_csr(), a);
}

TEST(Hyb, DefaultBreakevenPutsASmallMatrixEntirelyInCoo) {
  const auto a = bro_example<float, std::int64_t>();
  const auto s = Hyb<float, std::int64_t>::build(a, {});
  EXPECT_EQ(s.ell.width, 0);
  EXPECT_TRUE(s.ell.col_idx.empty());
  EXPECT_EQ(s.coo_row, (std::vector<std::int64_t>{0, 0, 1, 1, 1, 1, 1, 2, 2, 2, 3, 3}));
  EXPECT_EQ(s.to_csr(), a);
}

TEST(Hyb, ForcedKIsHonouredAndChecked) {
  const auto a = bro_example<double, std::int32_t>();
  const auto s = Hyb<double, std::int32_t>::build(a, FormatOptions().set("K", "2"));
  EXPECT_EQ(s.ell.width, 2);
  EXPECT_EQ(s.coo_row, (std::vector<std::int32_t>{1, 1, 1, 2}));
  EXPECT_EQ(s.coo_col, (std::vector<std::int32_t>{2, 3, 4, 4}));
  EXPECT_EQ(s.to_csr(), a);
  EXPECT_THROW((void)HybD::build(a, FormatOptions().set("K", "-1")), ParseError);
  EXPECT_THROW((void)HybD::build(a, FormatOptions().set("K", "x")), ParseError);
}

TEST(Hyb, OneDenseRowGoesToCoo) {
  Coo<double, std::int32_t> c;
  c.rows = c.cols = 100000;
  add_dense_row(c, 7);
  for (int i = 0; i < 100000; ++i) c.row_idx.push_back(i), c.col_idx.push_back(i), c.values.push_back(2);
  const auto a = to_csr(c);
  const auto s = Hyb<double, std::int32_t>::build(a, {});
  EXPECT_EQ(s.ell.width, 1);  // R(1) = 1 row longer than 1 → K = 1
  EXPECT_EQ(s.coo_val.size(), 99999u);
  const auto m = Matrix<double>::build(a, "hyb");
  std::vector<double> x(100000, 1.0), y(100000, NAN);
  m.spmv(x, y);
  EXPECT_EQ(y[7], 100002);  // 100000 ones, the duplicate (7,7) summed to 1 + 2
  EXPECT_EQ(y[8], 2);
}

TEST(Hyb, NanInXReachesOnlyTheRowsThatUseItsColumn) {
  for_each_type_pair([]<class V, class I>() {
    check_nan_isolation<V, I>("hyb");
    check_nan_isolation<V, I>("hyb", FormatOptions().set("breakeven", "0"));
  });
}

TEST(Hyb, CpuKernelsMatchTheReferenceForAllTypePairs) {
  for_each_type_pair([]<class V, class I>() {
    check_cpu<V, I>("hyb");
    check_cpu<V, I>("hyb", FormatOptions().set("breakeven", "0"));
    check_cpu<V, I>("hyb", FormatOptions().set("K", "1"));
  });
}

TEST(Hyb, CudaKernelsMatchTheReferenceForAllTypePairs) {
  run_gpu_checks("hyb");
  run_gpu_checks("hyb", FormatOptions().set("breakeven", "0"));
  run_gpu_checks("hyb", FormatOptions().set("K", "1"));
}

}  // namespace
}  // namespace spmat
