// spmat/formats/hisparse/hisparse_test.cpp — HiSparse layout (every level's bytes on a hand
// example), CPU spmv/spmv_t vs the fp64 reference, round trips, the transposed state.
// SPDX-License-Identifier: MIT
#include <gtest/gtest.h>

#include <cstring>
#include <random>

#include "spmat/core/reference.hpp"
#include "spmat/formats/hisparse/hisparse.hpp"
#include "tests/support/hisparse_cases.hpp"
#include "tests/support/test_support.hpp"

namespace spmat {
namespace {

using namespace hisparse;

template <class T>
T at(const HiSparse<float, std::int32_t>& a, std::uint64_t off) {
  return load<T>(a.bytes() + off);
}

TEST(HiSparse, WorkedExampleHasTheDocumentedBytesAtEveryLevel) {
  // [1 . . .; . 2 . .; . . 3 4; . . 5 6], d = 2: root dense (16 B < 32 B COO2) with
  // children A (COO2) and B (dense, full).
  Csr<float, std::int32_t> m{4, 4, {0, 1, 2, 4, 6}, {0, 1, 2, 3, 2, 3}, {1, 2, 3, 4, 5, 6}};
  const auto a = HiSparse<float, std::int32_t>::build(m, FormatOptions().set("d", "2"));
  ASSERT_EQ(a.storage_bytes(), 80u);
  EXPECT_EQ(a.depth, 2);
  EXPECT_EQ(a.log2d, 1);
  // Header: root pointer, depth, log2 d, value size, nnz.
  EXPECT_EQ(a.root, encode(16, dense));
  EXPECT_EQ(a.root, 1u << 2);
  EXPECT_EQ(at<std::uint32_t>(a, 0), a.root);
  EXPECT_EQ(at<std::uint8_t>(a, 4), 2);
  EXPECT_EQ(at<std::uint8_t>(a, 5), 1);
  EXPECT_EQ(at<std::uint8_t>(a, 6), 4);
  EXPECT_EQ(at<std::uint64_t>(a, 8), 6u);
  // Level 0 (root, dense inner at 16): slots A, null, null, B.
  EXPECT_EQ(at<std::uint32_t>(a, 16), encode(32, coo2));
  EXPECT_EQ(at<std::uint32_t>(a, 16), (2u << 2) | 2u);
  EXPECT_EQ(at<std::uint32_t>(a, 20), kNull);
  EXPECT_EQ(at<std::uint32_t>(a, 24), kNull);
  EXPECT_EQ(at<std::uint32_t>(a, 28), encode(64, dense));
  EXPECT_EQ(at<std::uint32_t>(a, 28), 4u << 2);
  // Level 1, leaf A (COO2 at 32): n = 2, coords (0,0) (1,1), values 1 2 at 48.
  EXPECT_EQ(at<std::uint32_t>(a, 32), 2u);
  EXPECT_EQ(at<std::uint32_t>(a, 36), 0u);
  const std::uint8_t coords[4] = {0, 0, 1, 1};
  for (int i = 0; i < 4; ++i) EXPECT_EQ(at<std::uint8_t>(a, 40 + i), coords[i]);
  EXPECT_EQ(at<float>(a, 48), 1.0f);
  EXPECT_EQ(at<float>(a, 52), 2.0f);
  // Leaf B (dense at 64): 3 4 5 6 row-major, no header.
  for (int i = 0; i < 4; ++i) EXPECT_EQ(at<float>(a, 64 + 4 * i), 3.0f + i);
  // Statistics.
  EXPECT_EQ(a.levels[0].nodes_by_type[dense], 1);
  EXPECT_EQ(a.levels[1].nodes_by_type[coo2], 1);
  EXPECT_EQ(a.levels[1].nodes_by_type[dense], 1);
  EXPECT_EQ(a.to_csr(), m);
  // The transposed state swaps coordinates without touching the pool.
  const auto t = hisparse_transposed(a);
  EXPECT_EQ(t.pool.size(), a.pool.size());
  EXPECT_EQ(t.to_csr(), transpose(m));
  // dense=never: root COO2 (32 B), A COO2 (32 B), B COO4 (32 B) after the 16-B header.
  const auto n = HiSparse<float, std::int32_t>::build(
      m, FormatOptions().set("d", "2").set("dense", "never"));
  EXPECT_EQ(n.storage_bytes(), 112u);
  EXPECT_EQ(n.to_csr(), m);
}

TEST(HiSparse, CooPaddingFollowsTheEntryCount) {
  EXPECT_EQ(coo_bytes(1, 4), 32u);   // 8 + 2 -> 16, 4 -> 16
  EXPECT_EQ(coo_bytes(3, 4), 32u);   // padded 4: 8 + 8 -> 16, 16
  EXPECT_EQ(coo_bytes(5, 8), 96u);   // padded 8: 8 + 16 -> 32, 64
  EXPECT_EQ(coo_type(1), coo1);
  EXPECT_EQ(coo_type(2), coo2);
  EXPECT_EQ(coo_type(3), coo4);
  EXPECT_EQ(dense_bytes(7, 4), 65536u);
}

TEST(HiSparse, RejectsBadOptions) {
  Csr<double, std::int32_t> m{2, 2, {0, 1, 1}, {0}, {1.0}};
  EXPECT_THROW((HiSparse<double, std::int32_t>::build(m, FormatOptions().set("d", "3"))), ParseError);
  EXPECT_THROW((HiSparse<double, std::int32_t>::build(m, FormatOptions().set("d", "512"))), ParseError);
  EXPECT_THROW((HiSparse<double, std::int32_t>::build(m, FormatOptions().set("dense", "x"))), ParseError);
}

/// Random m×n matrix: ~density entries, every third row and fifth column empty, one long row,
/// and one full 20×20 block (dense leaves for small d).
Csr<double, std::int64_t> random_matrix(std::int64_t m, std::int64_t n, double density,
                                        std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> v(-2, 2);
  auto c = testing::random_coo(m, n, density, rng,
                               [](std::int64_t r, std::int64_t k) { return r % 3 != 1 && k % 5 != 2; });
  auto add = [&](std::int64_t r, std::int64_t k) { testing::add_entry(c, r, k, v(rng)); };
  if (m > 4)
    for (std::int64_t k = 0; k < n; k += 2) add(4, k);
  for (std::int64_t r = 0; r < std::min<std::int64_t>(m, 20); ++r)
    for (std::int64_t k = 0; k < std::min<std::int64_t>(n, 20); ++k) add(m > 40 ? m - 20 + r : r, k);
  return to_csr(c);
}

template <class Value, class Index>
void check_against_reference(const Csr<double, std::int64_t>& src, int d, std::uint64_t seed) {
  SCOPED_TRACE("d = " + std::to_string(d) + ", " + std::to_string(src.rows) + "x" +
               std::to_string(src.cols) + ", seed " + std::to_string(seed));
  const auto a = convert<Value, Index>(src);
  const auto h = HiSparse<Value, Index>::build(a, FormatOptions().set("d", std::to_string(d)));
  ASSERT_EQ(h.to_csr(), a) << "round trip";
  const double tol = testing::tolerance<Value>();
  for (bool transposed_state : {false, true}) {
    SCOPED_TRACE(transposed_state ? "transposed state" : "plain state");
    const auto hh = transposed_state ? hisparse_transposed(h) : h;
    const auto aa = transposed_state ? transpose(a) : a;
    for (bool t : {false, true}) {
      const std::int64_t n_in = t ? aa.rows : aa.cols, n_out = t ? aa.cols : aa.rows;
      const auto x = testing::random_vector<Value>(n_in, seed + 1);
      const auto y0 = testing::random_vector<Value>(n_out, seed + 2);
      auto y = testing::poisoned<Value>(n_out);
      (t ? spmv_t<Value, Index> : spmv<Value, Index>)(hh, x.data(), y.data(), Value(1), Value(0));
      const auto want = t ? reference::spmv_t<Value, Index, Value, Value>(aa, x)
                          : reference::spmv<Value, Index, Value, Value>(aa, x);
      EXPECT_LE(reference::relative_norm2_error<Value>(y, want), tol) << (t ? "spmv_t" : "spmv");
      auto again = testing::poisoned<Value>(n_out);
      (t ? spmv_t<Value, Index> : spmv<Value, Index>)(hh, x.data(), again.data(), Value(1), Value(0));
      EXPECT_TRUE(y.empty() || std::memcmp(y.data(), again.data(), y.size() * sizeof(Value)) == 0)
          << "deterministic";
      auto y2 = y0;
      (t ? spmv_t<Value, Index> : spmv<Value, Index>)(hh, x.data(), y2.data(), Value(0.5), Value(-2));
      const auto want2 = t ? reference::spmv_t<Value, Index, Value, Value>(aa, x, 0.5, -2, y0)
                           : reference::spmv<Value, Index, Value, Value>(aa, x, 0.5, -2, y0);
      EXPECT_LE(reference::relative_norm2_error<Value>(y2, want2), tol)
          << (t ? "spmv_t" : "spmv") << " alpha 0.5 beta -2";
    }
  }
}

template <class Value, class Index>
void run_random_battery() {
  const std::uint64_t seed = testing::fresh_seed();
  for (int d : {2, 4, 16, 128}) {
    check_against_reference<Value, Index>(random_matrix(131, 97, 0.05, seed), d, seed);
    check_against_reference<Value, Index>(random_matrix(7, 300, 0.3, seed + 7), d, seed);
  }
  check_against_reference<Value, Index>(random_matrix(1000, 1029, 0.004, seed + 11), 16, seed);
  check_against_reference<Value, Index>(random_matrix(1000, 1029, 0.004, seed + 11), 128, seed);
  // Empty shapes.
  for (auto [m, n] : {std::pair<int, int>{0, 0}, {0, 5}, {5, 0}, {37, 53}})
    check_against_reference<Value, Index>(
        Csr<double, std::int64_t>{m, n, std::vector<std::int64_t>(m + 1, 0), {}, {}}, 128, seed);
}

TEST(HiSparse, CpuProductsMatchTheReferenceFp32Int32) { run_random_battery<float, std::int32_t>(); }
TEST(HiSparse, CpuProductsMatchTheReferenceFp32Int64) { run_random_battery<float, std::int64_t>(); }
TEST(HiSparse, CpuProductsMatchTheReferenceFp64Int32) { run_random_battery<double, std::int32_t>(); }
TEST(HiSparse, CpuProductsMatchTheReferenceFp64Int64) { run_random_battery<double, std::int64_t>(); }

TEST(HiSparse, FullBlocksBecomeDenseNodesAndTreesAreDeeperForSmallD) {
  Coo<double, std::int64_t> c;
  c.rows = c.cols = 40;
  for (int r = 0; r < 40; ++r)
    for (int k = 0; k < 40; ++k) {
      c.row_idx.push_back(r);
      c.col_idx.push_back(k);
      c.values.push_back(r == k ? 0.0 : r - k);  // explicit zeros on the diagonal
    }
  const auto a = to_csr(c);
  const auto h = HiSparse<double, std::int64_t>::build(a, FormatOptions().set("d", "16"));
  EXPECT_EQ(h.depth, 2);
  // 40 = 2·16 + 8: 4 full interior leaves are dense (2048 B < COO), the 5 edge leaves
  // (16×8, 8×16, 8×8 entries) are COO4 (e.g. 128 entries: 272 + 1024 B < 2048 B).
  EXPECT_EQ(h.levels[1].nodes_by_type[dense], 4);
  EXPECT_EQ(h.levels[1].nodes_by_type[coo4], 5);
  EXPECT_EQ(h.to_csr(), a);
  const auto h2 = HiSparse<double, std::int64_t>::build(a, FormatOptions().set("d", "2"));
  EXPECT_EQ(h2.depth, 6);
  EXPECT_EQ(h2.to_csr(), a);
}

}  // namespace
}  // namespace spmat
