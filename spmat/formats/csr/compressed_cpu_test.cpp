// spmat/formats/csr/compressed_cpu_test.cpp — the OpenMP scatter of CSR's spmv_t and CSC's spmv:
// ranges of y per thread for few long lines, per-thread buffers otherwise.
// SPDX-License-Identifier: MIT
#include <gtest/gtest.h>
#include <omp.h>

#include <cstring>

#include "spmat/formats/csr/compressed_cpu.hpp"
#include "spmat/matrix.hpp"
#include "tests/support/kernel_check.hpp"

namespace spmat {
namespace {

using testing::AlphaBeta;

TEST(CompressedScatter, FewLongLinesTakeRangesOfTheMinorPositions) {
  EXPECT_TRUE(scatter_by_minor_ranges(1, 1000000));
  EXPECT_TRUE(scatter_by_minor_ranges(300, 300000));
  EXPECT_TRUE(scatter_by_minor_ranges(0, 5));
  EXPECT_FALSE(scatter_by_minor_ranges(4000000, 1000));
  EXPECT_FALSE(scatter_by_minor_ranges(1000000, 1000000));
}

TEST(CompressedGather, ChunksLeaveNoThreadIdle) {
  EXPECT_EQ(gather_chunk(1000000, 16), 256);
  EXPECT_EQ(gather_chunk(300, 16), 2);
  EXPECT_EQ(gather_chunk(300, 2), 18);
  EXPECT_EQ(gather_chunk(1, 16), 1);
  EXPECT_EQ(gather_chunk(0, 16), 1);
}

TEST(CompressedGather, ALongLineIsSummedBySegmentsWithTheSameBitsOnAnyThreadCount) {
  // Row 7 holds 50,000 entries (seven segments), the others 0-4: csr's spmv gathers along it,
  // and csc's spmv_t along column 7 of the transpose.
  const auto rows = testing::random_csr_of_lengths(
      2000, 60000, [](std::int64_t r) -> std::int64_t { return r == 7 ? 50000 : r % 5; }, 44);
  ASSERT_GT(rows.row_ptr[8] - rows.row_ptr[7], 2 * kGatherSegment);
  const auto columns = transpose(rows);
  const int saved = omp_get_max_threads();
  for (const char* fmt : {"csr", "csc"}) {
    const auto& a = std::string(fmt) == "csr" ? rows : columns;
    const auto A = Matrix<double>::build(a, fmt);
    const Op op = std::string(fmt) == "csr" ? Op::spmv : Op::spmv_t;  // the gather
    for (AlphaBeta ab : testing::kAlphaBeta)
      EXPECT_EQ(testing::host_check(A, a, op, ab, 11), "") << fmt << " alpha " << ab.alpha << " beta " << ab.beta;
    const auto x = testing::random_vector<double>(op == Op::spmv ? a.cols : a.rows, 12);
    std::vector<double> first;
    for (int threads : {1, 2, 3, 8}) {
      omp_set_num_threads(threads);
      auto y = testing::poisoned<double>(op == Op::spmv ? a.rows : a.cols);
      if (op == Op::spmv) A.spmv(x, y);
      else A.spmv_t(x, y);
      if (first.empty()) first = y;
      EXPECT_EQ(std::memcmp(first.data(), y.data(), y.size() * sizeof(double)), 0) << fmt << ", " << threads << " threads";
    }
  }
  omp_set_num_threads(saved);
}

/// Wide matrices (ranges) and a tall one (buffers): rows of 0-2,500 entries, empty rows, a row
/// that holds columns from the first to the last.
std::vector<Csr<double, std::int64_t>> scatter_matrices() {
  std::vector<Csr<double, std::int64_t>> v;
  v.push_back(testing::random_csr_of_lengths(
      37, 20000, [](std::int64_t r) -> std::int64_t { return r % 6 == 1 ? 0 : (r * 397) % 2500; }, 41));
  v.push_back(testing::random_csr_of_lengths(1, 9000, [](std::int64_t) -> std::int64_t { return 9000; }, 42));
  v.push_back(testing::random_csr_of_lengths(
      3000, 40, [](std::int64_t r) -> std::int64_t { return r % 3; }, 43));
  return v;
}

TEST(CompressedScatter, CsrSpmvTAndCscSpmvMatchTheReference) {
  for (const auto& a : scatter_matrices()) {
    SCOPED_TRACE(std::to_string(a.rows) + "x" + std::to_string(a.cols));
    for (const char* fmt : {"csr", "csc"}) {
      const auto A = Matrix<double>::build(a, fmt);
      const Op op = std::string(fmt) == "csr" ? Op::spmv_t : Op::spmv;
      for (AlphaBeta ab : testing::kAlphaBeta)
        EXPECT_EQ(testing::host_check(A, a, op, ab, 7), "") << fmt << " alpha " << ab.alpha << " beta " << ab.beta;
    }
  }
}

TEST(CompressedScatter, RangesGiveTheSameBitsWithAnyThreadCount) {
  const int saved = omp_get_max_threads();
  for (const auto& a : scatter_matrices()) {
    if (!scatter_by_minor_ranges(a.rows, a.cols)) continue;
    SCOPED_TRACE(std::to_string(a.rows) + "x" + std::to_string(a.cols));
    const auto A = Matrix<double>::build(a, "csr");
    const auto x = testing::random_vector<double>(a.rows, 9);
    std::vector<double> first;
    for (int threads : {1, 2, 3, 8}) {
      omp_set_num_threads(threads);
      auto y = testing::poisoned<double>(a.cols);
      A.spmv_t(x, y);
      if (first.empty()) first = y;
      EXPECT_EQ(std::memcmp(first.data(), y.data(), y.size() * sizeof(double)), 0) << threads << " threads";
    }
  }
  omp_set_num_threads(saved);
}

}  // namespace
}  // namespace spmat
