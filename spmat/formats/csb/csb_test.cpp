// spmat/formats/csb/csb_test.cpp — CSB-baseline: the spec's worked examples, parameter rules, kernels vs reference.
// SPDX-License-Identifier: MIT
#include "spmat/formats/csb/csb.hpp"

#include <gtest/gtest.h>

#include "spmat/formats/csb/block_test_support.hpp"
#include "spmat/formats/gcsb/gcsb.hpp"

namespace spmat {
namespace {

using block_testing::letters;

std::vector<std::int32_t> bin(std::initializer_list<int> codes) {  // "10" → 2 for β = 2
  std::vector<std::int32_t> v;
  for (int c : codes) v.push_back((c / 10) * 2 + c % 10);
  return v;
}

TEST(Csb, SixBySixExampleMatchesTheSpecArrays) {
  const auto s = Csb<float, std::int32_t>::build(block_testing::example6<float, std::int32_t>(),
                                                 FormatOptions().set("beta", "2"));
  EXPECT_EQ(s.beta(), 2);
  EXPECT_EQ(s.n_block_rows, 3);
  EXPECT_EQ(s.n_block_cols, 3);
  EXPECT_EQ(letters(s.values), "abefcdghijkl");
  EXPECT_EQ(s.comb, bin({0, 1, 10, 10, 0, 1, 10, 1, 11, 11, 11, 11}));
  EXPECT_EQ(s.block_offset, (std::vector<std::int32_t>{0, 3, 4, 7, 9, 10, 10, 11, 11, 12}));
  EXPECT_EQ(s.storage_bytes(), 12u * 4 + 12u * 4 + 10u * 4);  // thesis Eq. 3.1
}

TEST(Csb, EightByEightExampleMatchesTheThesisFigure31) {
  const auto s = Csb<double, std::int64_t>::build(block_testing::example8<double, std::int64_t>(),
                                                  FormatOptions().set("beta", "2"));
  EXPECT_EQ(letters(s.values), "abghijcdkeflmnopqstruvwxyz");
  EXPECT_EQ(s.comb, bin({0, 1, 10, 11, 10, 11, 0, 1, 10, 0, 1, 11, 1, 11, 11, 0, 1, 10, 11, 0, 11,
                         1, 1, 0, 10, 11}));
  EXPECT_EQ(s.block_offset, (std::vector<std::int64_t>{0, 4, 6, 9, 12, 14, 15, 15, 15, 15, 19, 19,
                                                       21, 22, 23, 26, 26}));
  EXPECT_EQ(s.storage_bytes(), 26u * 8 + 26u * 4 + 17u * 8);
}

TEST(Csb, MortonOrderInsideALargerBlock) {
  // One 4×4 block, full: Morton order visits 2×2 quadrants UL, UR, LL, LR, recursively.
  std::vector<double> m(16);
  for (int i = 0; i < 16; ++i) m[i] = i + 1;  // value = 1 + row-major position
  const auto s = Csb<double, std::int32_t>::build(block_testing::from_dense<double, std::int32_t>(4, 4, m),
                                                  FormatOptions().set("beta", "4"));
  EXPECT_EQ(s.values, (std::vector<double>{1, 2, 5, 6, 3, 4, 7, 8, 9, 10, 13, 14, 11, 12, 15, 16}));
  EXPECT_EQ(s.comb[4], (0 << 2) | 2);  // value 3 = (0, 2)
  EXPECT_EQ(s.block_offset, (std::vector<std::int32_t>{0, 16}));
}

// The block parameters of gcsb's options (csb's are the same without group_size).
BlockParams block_params_of(const FormatOptions& o, std::size_t value_size) {
  return block_params(parse_options<GcsbOptions>(o), value_size);
}

TEST(Csb, ParameterRulesFollowTheL1LineAndAcceptOverrides) {
  EXPECT_EQ(block_params_of({}, 4).beta(), 32);
  EXPECT_EQ(block_params_of({}, 4).group_size, 32);
  EXPECT_EQ(block_params_of({}, 8).beta(), 16);
  EXPECT_EQ(block_params_of({}, 8).group_size, 16);
  EXPECT_EQ(block_params(parse_options<CsbOptions>({}), 8).beta(), 16);
  EXPECT_EQ(block_params_of(FormatOptions().set("l1_line_bytes", "16"), 4).beta(), 4);
  EXPECT_EQ(block_params_of(FormatOptions().set("l1_line_bytes", "96"), 4).beta(), 16);
  EXPECT_EQ(block_params_of(FormatOptions().set("beta", "64"), 4).beta(), 64);
  EXPECT_EQ(block_params_of(FormatOptions().set("group_size", "7"), 4).group_size, 7);
  EXPECT_THROW(block_params_of(FormatOptions().set("beta", "24"), 4), ParseError);
  EXPECT_THROW(block_params_of(FormatOptions().set("beta", "0"), 4), ParseError);
  EXPECT_THROW(block_params_of(FormatOptions().set("group_size", "0"), 4), ParseError);
  EXPECT_THROW(block_params_of(FormatOptions().set("l1_line_bytes", "2"), 4), ParseError);
}

TEST(Csb, UnknownOptionIsRefusedByTheRegistry) {
  auto a = block_testing::example6<double, std::int32_t>();
  EXPECT_THROW(Matrix<double>::build(a, "csb", Backend::cpu, FormatOptions().set("group_size", "4")),
               ParseError);
}

TEST(Csb, TooManyBlocksForInt32IsRefusedWithAMessage) {
  // The full grid (empty=keep) cannot hold more blocks than the index type; the default then
  // stores the sparse grid, which never needs more than nnz blocks.
  ScopedInt32Limit limit(1000);
  Csr<float, std::int32_t> a;
  a.rows = 100;
  a.cols = 100;
  a.row_ptr.assign(101, 0);
  using S = Csb<float, std::int32_t>;
  EXPECT_THROW(S::build(a, FormatOptions().set("beta", "2").set("empty", "keep")), IndexOverflowError);
  EXPECT_NO_THROW(S::build(a, FormatOptions().set("beta", "4").set("empty", "keep")));
  const auto s = S::build(a, FormatOptions().set("beta", "2"));
  EXPECT_TRUE(s.sparse_grid);
  EXPECT_EQ(s.block_row_ptr, std::vector<std::int32_t>(51, 0));
  EXPECT_EQ(s.block_offset, (std::vector<std::int32_t>{0}));
}

TEST(Csb, SixBySixExampleOnTheSparseGrid) {
  const auto s = Csb<float, std::int32_t>::build(block_testing::example6<float, std::int32_t>(),
                                                 FormatOptions().set("beta", "2").set("empty", "drop"));
  EXPECT_TRUE(s.sparse_grid);
  EXPECT_EQ(letters(s.values), "abefcdghijkl");
  EXPECT_EQ(s.comb, bin({0, 1, 10, 10, 0, 1, 10, 1, 11, 11, 11, 11}));
  EXPECT_EQ(s.block_row_ptr, (std::vector<std::int32_t>{0, 3, 5, 7}));
  EXPECT_EQ(s.block_col, (std::vector<std::int32_t>{0, 1, 2, 0, 1, 0, 2}));
  EXPECT_EQ(s.block_offset, (std::vector<std::int32_t>{0, 3, 4, 7, 9, 10, 11, 12}));
  EXPECT_EQ(s.storage_bytes(), 12u * 4 + 12u * 4 + (4u + 7u + 8u) * 4);
  EXPECT_EQ(s.to_csr(), (block_testing::example6<float, std::int32_t>()));
  // auto keeps the full grid here: 10 offsets beat 4 + 7 + 8 indices.
  EXPECT_FALSE((Csb<float, std::int32_t>::build(block_testing::example6<float, std::int32_t>(),
                                                FormatOptions().set("beta", "2"))
                    .sparse_grid));
}

TEST(Csb, SparseGridSkipsEmptyBlockRowsAndColumns) {
  // 10×10, β = 2: entries in blocks (0,4), (3,1), (3,4); block rows 1, 2, 4 empty.
  std::vector<double> m(100, 0);
  m[0 * 10 + 9] = 1;  // block (0,4), in-block (0,1)
  m[7 * 10 + 2] = 2;  // block (3,1), in-block (1,0)
  m[6 * 10 + 8] = 3;  // block (3,4), in-block (0,0)
  m[7 * 10 + 9] = 4;  // block (3,4), in-block (1,1)
  const auto a = block_testing::from_dense<double, std::int64_t>(10, 10, m);
  const auto s = Csb<double, std::int64_t>::build(a, FormatOptions().set("beta", "2"));
  ASSERT_TRUE(s.sparse_grid);  // 25 + 1 offsets > 6 + 3·2 + 1 indices
  EXPECT_EQ(s.block_row_ptr, (std::vector<std::int64_t>{0, 1, 1, 1, 3, 3}));
  EXPECT_EQ(s.block_col, (std::vector<std::int64_t>{4, 1, 4}));
  EXPECT_EQ(s.block_offset, (std::vector<std::int64_t>{0, 1, 2, 4}));
  EXPECT_EQ(s.values, (std::vector<double>{1, 2, 3, 4}));
  EXPECT_EQ(s.comb, bin({1, 10, 0, 11}));
  EXPECT_EQ(s.storage_bytes(), 4u * 12 + (6u + 3u + 4u) * 8);
  EXPECT_EQ(s.to_csr(), a);
  for (bool t : {false, true})
    block_testing::check_against_reference<double, std::int64_t>(a, "csb", {}, Backend::cpu, t, 2, 0, 3);
}

TEST(Csb, BillionsOfBlocksBeyondInt32AreStoredSparsely) {
  // 200000² with β = 4 has 2.5·10^9 blocks (more than int32 can count); tridiagonal: 3 blocks a
  // block row are non-empty, and the storage stays within 1.1× CSR's.
  const std::int32_t n = 200000;
  const auto a = block_testing::tridiagonal(
      n, [](std::int32_t r, std::int32_t c) { return static_cast<double>((r + 2 * c) % 7) - 3; });
  const auto s = Csb<double, std::int32_t>::build(a, FormatOptions().set("beta", "4"));
  ASSERT_TRUE(s.sparse_grid);
  EXPECT_EQ(s.n_stored(), 3 * (n / 4) - 2);
  const std::size_t csr_bytes = a.values.size() * 12 + a.row_ptr.size() * 4;
  EXPECT_LE(s.storage_bytes(), csr_bytes * 11 / 10);
  for (bool t : {false, true})
    block_testing::check_against_reference<double, std::int32_t>(a, "csb", FormatOptions().set("beta", "4"),
                                                                  Backend::cpu, t, 1, 0, 5);
}

template <class T>
class CsbTyped : public ::testing::Test {};
TYPED_TEST_SUITE(CsbTyped, spmat::testing::Pairs);

TYPED_TEST(CsbTyped, RoundTripIsExactAndKeepsExplicitZeros) {
  using V = typename TypeParam::Value;
  using I = typename TypeParam::Index;
  for (auto [r, c, beta] : {std::tuple{37, 53, 4}, std::tuple{64, 29, 8}, std::tuple{5, 3, 32},
                            std::tuple{0, 7, 2}, std::tuple{7, 0, 2}}) {
    const auto a = block_testing::random_csr<V, I>(r, c, 0.2, testing::fresh_seed());
    const auto s = Csb<V, I>::build(a, FormatOptions().set("beta", std::to_string(beta)));
    EXPECT_EQ(s.to_csr(), a);
    EXPECT_EQ(s.storage_bytes(), a.values.size() * (sizeof(V) + 4) +
                                     static_cast<std::size_t>(s.n_blocks() + 1) * sizeof(I));
  }
}

TYPED_TEST(CsbTyped, CpuKernelsMatchTheReference) {
  using V = typename TypeParam::Value;
  using I = typename TypeParam::Index;
  for (auto [r, c, beta] : {std::tuple{45, 70, 8}, std::tuple{100, 33, 16}, std::tuple{70, 70, 0},
                            std::tuple{1, 50, 4}}) {
    const auto seed = testing::fresh_seed();
    const auto a = block_testing::random_csr<V, I>(r, c, 0.15, seed);
    FormatOptions o;
    if (beta) o.set("beta", std::to_string(beta));
    for (bool t : {false, true})
      for (auto [al, be] : {std::pair<V, V>{1, 0}, std::pair<V, V>{V(-1.5), V(0.5)}})
        block_testing::check_against_reference(a, "csb", o, Backend::cpu, t, al, be, seed);
  }
}

TYPED_TEST(CsbTyped, SparseGridRoundTripAndKernelsMatchTheReference) {
  using V = typename TypeParam::Value;
  using I = typename TypeParam::Index;
  for (auto [r, c, beta, p] : {std::tuple{37, 53, 4, 0.2}, std::tuple{300, 200, 2, 0.004},
                               std::tuple{5, 3, 32, 0.2}, std::tuple{0, 7, 2, 0.2},
                               std::tuple{7, 0, 2, 0.2}}) {
    const auto seed = testing::fresh_seed();
    const auto a = block_testing::random_csr<V, I>(r, c, p, seed);
    for (const char* e : {"drop", "auto"}) {
      const auto o = FormatOptions().set("beta", std::to_string(beta)).set("empty", e);
      const auto s = Csb<V, I>::build(a, o);
      EXPECT_EQ(s.to_csr(), a);
      if (s.sparse_grid) {
        EXPECT_EQ(s.block_row_ptr.size(), static_cast<std::size_t>(s.n_block_rows) + 1);
        EXPECT_EQ(s.block_col.size() + 1, s.block_offset.size());
        for (std::size_t j = 0; j + 1 < s.block_offset.size(); ++j)
          EXPECT_LT(s.block_offset[j], s.block_offset[j + 1]) << "stored block " << j << " is empty";
      }
      for (bool t : {false, true})
        for (auto [al, be] : {std::pair<V, V>{1, 0}, std::pair<V, V>{V(-1.5), V(0.5)}})
          block_testing::check_against_reference(a, "csb", o, Backend::cpu, t, al, be, seed);
    }
  }
}

TYPED_TEST(CsbTyped, GpuKernelsMatchTheReference) {
  using V = typename TypeParam::Value;
  using I = typename TypeParam::Index;
  SPMAT_SKIP_WITHOUT_GPU();
  for (auto [r, c, beta] : {std::tuple{45, 70, 8}, std::tuple{300, 257, 0}, std::tuple{1, 50, 4},
                            std::tuple{0, 5, 2}})
    for (const char* e : {"keep", "drop"}) {
      const auto seed = testing::fresh_seed();
      const auto a = block_testing::random_csr<V, I>(r, c, 0.1, seed);
      FormatOptions o;
      o.set("empty", e);
      if (beta) o.set("beta", std::to_string(beta));
      for (bool t : {false, true})
        for (auto [al, be] : {std::pair<V, V>{1, 0}, std::pair<V, V>{V(-1.5), V(0.5)}})
          block_testing::check_against_reference(a, "csb", o, Backend::cuda, t, al, be, seed);
    }
  // Sparse grid with empty block rows and a long binary search (1500 block rows).
  const auto seed = testing::fresh_seed();
  const auto a = block_testing::random_csr<V, I>(3000, 2000, 0.0005, seed);
  for (bool t : {false, true})
    block_testing::check_against_reference(a, "csb", FormatOptions().set("beta", "2"), Backend::cuda,
                                           t, V(1), V(0), seed);
}

}  // namespace
}  // namespace spmat
