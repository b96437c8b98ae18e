// spmat/formats/bro_csr/bro_csr_test.cpp — BRO-CSR: hand-checked packed words (the paper's 4×5
// example with 1 and 2 lanes per row), zero-bit runs, every lane count and symbol length against
// the fp64 reference (CPU), round trips, option errors. The registry-wide batteries (CPU in
// bro_ell_test.cpp, GPU in bro_cuda_test.cpp, and tests/conformance_test.cpp) also run bro-csr.
// SPDX-License-Identifier: MIT
#include <gtest/gtest.h>

#include <span>
#include <string>
#include <vector>

#include "spmat/core/reference.hpp"
#include "spmat/formats/bro_csr/bro_csr.hpp"
#include "spmat/formats/bro_ell/bro_test_support.hpp"
#include "spmat/matrix.hpp"
#include "tests/support/kernel_check.hpp"
#include "tests/support/test_support.hpp"

namespace spmat {
namespace {

using bro_testing::Csr64;
using bro_testing::paper_example;

std::vector<std::uint32_t> padded(std::vector<std::uint32_t> head) {
  head.resize(32, 0u);
  return head;
}

TEST(BroCsr, PacksThePapersExampleWithTwoLanesPerRow) {
  const auto a = paper_example();
  const auto m = BroCsr<double, std::int32_t>::encode(a, 2, 32);
  // Lane fields (t: row t/2, lane t%2): t0 {0} t1 {1} t2 {0,0,0} t3 {0,0} t4 {1,1} t5 {1}
  // t6 {3} t7 {3}; widths {2,1,0}; 3 bits per lane → one 32-bit symbol per lane.
  EXPECT_EQ(m.base, (std::vector<std::int32_t>{0}));
  EXPECT_EQ(m.width_off, (std::vector<std::int64_t>{0, 3}));
  EXPECT_EQ(m.widths, (std::vector<std::uint8_t>{2, 1, 0}));
  EXPECT_EQ(m.sym_off, (std::vector<std::int64_t>{0, 32}));
  EXPECT_EQ(m.sym32, padded({0, 0x40000000u, 0, 0, 0x60000000u, 0x40000000u, 0xC0000000u,
                             0xC0000000u}));
  EXPECT_TRUE(m.sym64.empty());
  EXPECT_EQ(m.row_ptr, a.row_ptr);
  EXPECT_EQ(m.values, a.values);
  EXPECT_EQ(m.to_csr(), a);
  bro_testing::expect_paper_example_product(m);
}

TEST(BroCsr, PacksThePapersExampleWithOneLanePerRow) {
  const auto a = paper_example();
  const auto m = BroCsr<double, std::int32_t>::encode(a, 1, 32);
  // Row fields: r0 {0,1} r1 {0,0,0,0,0} r2 {1,0,1} r3 {3,0}; widths {2,1,1,0,0}.
  EXPECT_EQ(m.widths, (std::vector<std::uint8_t>{2, 1, 1, 0, 0}));
  EXPECT_EQ(m.sym32, padded({0x20000000u, 0, 0x50000000u, 0xC0000000u}));
  EXPECT_EQ(m.to_csr(), a);
  // sym_len = 64: the same bits at the top of 64-bit words.
  const auto m64 = BroCsr<double, std::int32_t>::encode(a, 1, 64);
  EXPECT_EQ(m64.sym64[2], 0x5000000000000000ull);
  EXPECT_EQ(m64.to_csr(), a);
}

TEST(BroCsr, StoresContiguousRunsInZeroBitsAfterTheFirstStep) {
  // Band of width 7 (every row a run of 15 columns, except near the ends), 4 lanes per row:
  // f_j = c(e_j) − c(e_{j−1}) − 4 = 0 for j ≥ 1 in the interior groups.
  Csr<double, std::int64_t> a;
  a.rows = a.cols = 100;
  for (std::int64_t r = 0; r < 100; ++r) {
    for (std::int64_t c = std::max<std::int64_t>(0, r - 7); c <= std::min<std::int64_t>(99, r + 7); ++c) {
      a.col_idx.push_back(c);
      a.values.push_back(1.0);
    }
    a.row_ptr.push_back(static_cast<std::int64_t>(a.col_idx.size()));
  }
  const auto m = BroCsr<double, std::int64_t>::encode(a, 4, 32);
  ASSERT_EQ(m.groups(), 13);  // 8 rows per group, 100 rows
  for (std::int64_t g = 1; g + 1 < m.groups(); ++g) {
    EXPECT_EQ(m.width_off[g + 1] - m.width_off[g], 4) << g;  // ⌈15/4⌉ steps
    for (std::int64_t j = m.width_off[g] + 1; j < m.width_off[g + 1]; ++j) EXPECT_EQ(m.widths[j], 0) << g;
    EXPECT_EQ(m.widths[m.width_off[g]], 3) << g;  // first column − base − lane: 0..7
    EXPECT_EQ(m.sym_off[g + 1] - m.sym_off[g], 32) << g;  // 3 bits → one symbol per lane
  }
  EXPECT_EQ(m.to_csr(), a);
  const auto s = m.index_savings();
  EXPECT_GT(s.eta(false), 0.7);  // 32 words per 120 column indices in the interior
}

template <class V, class I>
void check_against_reference(const Csr64& a64, int tpr, int sym_len, std::uint64_t seed) {
  SCOPED_TRACE(std::string(precision_name<V>()) + "/" + std::string(index_name<I>()) + " tpr=" +
               std::to_string(tpr) + " sym_len=" + std::to_string(sym_len) + " seed " +
               std::to_string(seed));
  const auto a = convert<V, I>(a64);
  const auto m = BroCsr<V, I>::encode(a, tpr, sym_len);
  ASSERT_EQ(m.to_csr(), a);
  testing::expect_spmv_and_spmv_t_match(a, seed, [&](Op op, const std::vector<V>& x,
                                                     std::vector<V> y, V alpha, V beta) {
    if (op == Op::spmv_t)
      spmv_t(m, x.data(), y.data(), alpha, beta);
    else
      spmv(m, x.data(), y.data(), alpha, beta);
    return y;
  });
}

TEST(BroCsr, MatchesTheReferenceForEveryLaneCountAndSymbolLength) {
  const std::uint64_t seed = testing::fresh_seed();
  const Csr64 mats[] = {
      // ragged, empty rows and columns, 1001 rows (not a multiple of any group size)
      testing::random_csr_of_lengths(1001, 777, [](std::int64_t r) { return r % 7 == 0 ? 0 : (r * 5) % 23; }, seed, 9),
      // a long row among short ones, and a dense tail row
      testing::random_csr_of_lengths(97, 5003, [](std::int64_t r) { return r == 40 ? 4000 : (r == 96 ? 5003 : r % 3); }, seed + 7),
      // wide columns: first fields of ~20 bits
      testing::random_csr_of_lengths(70, 1 << 20, [](std::int64_t r) { return 1 + r % 9; }, seed + 11),
  };
  for (const auto& a : mats)
    for (int tpr : {1, 2, 4, 8, 16, 32})
      for (int sym_len : {32, 64}) {
        check_against_reference<double, std::int32_t>(a, tpr, sym_len, seed);
        check_against_reference<float, std::int64_t>(a, tpr, sym_len, seed);
      }
}

TEST(BroCsr, PicksLanesPerRowFromTheMeanRowLength) {
  const Csr64 a = testing::random_csr_of_lengths(300, 400, [](std::int64_t) { return 11; }, 5);
  using M = BroCsr<double, std::int64_t>;
  EXPECT_EQ(M::build(a, {}).tpr, 8);
  const Csr64 b = testing::random_csr_of_lengths(300, 400, [](std::int64_t r) { return r % 2; }, 5);
  EXPECT_EQ(M::build(b, {}).tpr, 1);
  EXPECT_EQ(M::build(a, FormatOptions().set("tpr", "2")).tpr, 2);
}

TEST(BroCsr, RejectsBadOptionsWithParseError) {
  const auto a = paper_example();
  for (const char* t : {"3", "64", "-1"})
    EXPECT_THROW((void)Matrix<double>::build(a, "bro-csr", Backend::cpu, FormatOptions().set("tpr", t)), ParseError) << t;
  EXPECT_THROW((void)Matrix<double>::build(a, "bro-csr", Backend::cpu, FormatOptions().set("sym_len", "16")), ParseError);
}

}  // namespace
}  // namespace spmat
