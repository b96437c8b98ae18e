// spmat/formats/sell/sell_test.cpp — SELL-C-σ: exact chunk arrays, options, CPU and GPU kernels.
// SPDX-License-Identifier: MIT
#include "spmat/formats/sell/sell.hpp"

#include "spmat/formats/ell/ell_family_testing.inc"

namespace spmat {
namespace {

using namespace ell_family_testing;
using SellD = Sell<double, std::int32_t>;

FormatOptions c_sigma(int c, int sigma) {
  return FormatOptions().set("C", std::to_string(c)).set("sigma", std::to_string(sigma));
}

TEST(Sell, BroExampleWithC2Sigma4SortsRowsAndPadsEachChunk) {
  const auto a = bro_example<double, std::int32_t>();
  const auto s = Sell<double, std::int32_t>::build(a, c_sigma(2, 4));
  // Lengths {2,5,3,2}: sorted (stable, decreasing) → rows 1, 2, 0, 3.
  EXPECT_EQ(s.perm, (std::vector<std::int32_t>{1, 2, 0, 3}));
  EXPECT_EQ(s.chunk_len, (std::vector<std::int32_t>{5, 2}));
  EXPECT_EQ(s.chunk_ptr, (std::vector<std::int64_t>{0, 10, 14}));
  EXPECT_EQ(s.col_idx, (std::vector<std::int32_t>{0, 1, 1, 2, 2, 4, 3, -1, 4, -1,  // chunk 0
                                                   0, 3, 2, 4}));                   // chunk 1
  EXPECT_EQ(s.values, (std::vector<double>{2, 1, 6, 9, 5, 7, 4, 0, 1, 0,  //
                                           3, 8, 2, 3}));
  EXPECT_EQ(s.storage_bytes(), 4u * 4 + 3u * 8 + 2u * 4 + 14u * (4 + 8));
  EXPECT_EQ(s.to_csr(), a);
}

TEST(Sell, SigmaOneKeepsTheRowOrderAndTheLastChunkIsPaddedToC) {
  auto a = bro_example<float, std::int32_t>();
  // Append a fifth row [0,0,0,0,5] so that the last chunk holds one real row.
  a.rows = 5;
  a.row_ptr.push_back(13);
  a.col_idx.push_back(4);
  a.values.push_back(5);
  const auto s = Sell<float, std::int32_t>::build(a, c_sigma(2, 1));
  EXPECT_EQ(s.perm, (std::vector<std::int32_t>{0, 1, 2, 3, 4}));
  EXPECT_EQ(s.chunk_len, (std::vector<std::int32_t>{5, 3, 1}));
  EXPECT_EQ(s.chunk_ptr, (std::vector<std::int64_t>{0, 10, 16, 18}));
  EXPECT_EQ(s.col_idx, (std::vector<std::int32_t>{0, 0, 2, 1, -1, 2, -1, 3, -1, 4,  // rows 0,1
                                                   1, 3, 2, 4, 4, -1,               // rows 2,3
                                                   4, -1}));                         // row 4
  EXPECT_EQ(s.values, (std::vector<float>{3, 2, 2, 6, 0, 5, 0, 4, 0, 1,  //
                                          1, 8, 9, 3, 7, 0,              //
                                          5, 0}));
  EXPECT_EQ(s.to_csr(), a);
}

TEST(Sell, SortingStaysInsideEachSigmaWindow) {
  // 4 rows, lengths {1,2,3,4}; C=1, sigma=2: windows {0,1} and {2,3} sort separately.
  Csr<double, std::int32_t> a;
  a.rows = 4;
  a.cols = 4;
  a.row_ptr = {0, 1, 3, 6, 10};
  a.col_idx = {0, 0, 1, 0, 1, 2, 0, 1, 2, 3};
  a.values = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
  const auto s = Sell<double, std::int32_t>::build(a, c_sigma(1, 2));
  EXPECT_EQ(s.perm, (std::vector<std::int32_t>{1, 0, 3, 2}));
  EXPECT_EQ(s.chunk_len, (std::vector<std::int32_t>{2, 1, 4, 3}));
  EXPECT_EQ(s.to_csr(), a);
}

TEST(Sell, InvalidChunkOrSigmaIsAParseError) {
  const auto a = bro_example<double, std::int32_t>();
  EXPECT_THROW((void)SellD::build(a, c_sigma(0, 1)), ParseError);
  EXPECT_THROW((void)SellD::build(a, c_sigma(32, 48)), ParseError);
  EXPECT_NO_THROW((void)SellD::build(a, c_sigma(32, 1)));
  EXPECT_EQ(SellD::build(a, FormatOptions().set("C", "48")).sigma, 288);  // 256 rounded up
}

// One thread would walk the whole row while the rest of the GPU waits: refused by default
// (max_skew), naming the skew; its chunk also pads 31 empty rows to it (padding ratio 16, over
// max_fill). With both limits lifted the padding stays one chunk wide.
TEST(Sell, OneDenseRowOfManyEntriesIsRefusedUnlessTheLimitsAreLifted) {
  Coo<double, std::int32_t> c;
  c.rows = c.cols = 100000;
  add_dense_row(c, 7);
  expect_build_refused(to_csr(c), "sell",
                       "sell: the longest row (100000 entries) is 100000.0 times the mean row "
                       "(1.00), over max_skew=8");
  EXPECT_THROW((void)Matrix<double>::build(to_csr(c), "sell", Backend::cpu,
                                           FormatOptions().set("max_skew", "inf")),
               UnsupportedError);
  const auto m = Matrix<double>::build(to_csr(c), "sell", Backend::cpu,
                                       spmat::testing::without_row_limits("sell"));
  EXPECT_LE(m.storage_bytes(), 32u * 100000u * 12u + 100000u * 4u + 3126u * 12u + 8u);
  std::vector<double> x(100000, 1.0), y(100000, NAN);
  m.spmv(x, y);
  EXPECT_EQ(y[7], 100000);
  EXPECT_EQ(y[8], 0);
}

TEST(Sell, NanInXReachesOnlyTheRowsThatUseItsColumn) {
  for_each_type_pair([]<class V, class I>() {
    check_nan_isolation<V, I>("sell");
    check_nan_isolation<V, I>("sell", c_sigma(2, 4));
  });
}

TEST(Sell, CpuKernelsMatchTheReferenceForAllTypePairs) {
  for_each_type_pair([]<class V, class I>() {
    check_cpu<V, I>("sell");
    check_cpu<V, I>("sell", c_sigma(2, 4));
    check_cpu<V, I>("sell", c_sigma(32, 1));
    check_cpu<V, I>("sell", c_sigma(8, 64));
  });
}

TEST(Sell, CudaKernelsMatchTheReferenceForAllTypePairs) {
  run_gpu_checks("sell");
  run_gpu_checks("sell", c_sigma(2, 4));
  run_gpu_checks("sell", c_sigma(8, 64));
}

}  // namespace
}  // namespace spmat
