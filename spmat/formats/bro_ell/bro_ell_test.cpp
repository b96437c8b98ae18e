// spmat/formats/bro_ell/bro_ell_test.cpp — BRO-ELL hand-checked layout, and the CPU battery of
// the whole BRO family (bro-ell, bro-ell-bar, bro-coo, bro-hyb, bro-hyb-bar, bro-csr) against the
// fp64 reference: 4 type pairs, alpha/beta, NaN-poisoned y, exact round trips.
// SPDX-License-Identifier: MIT
#include <gtest/gtest.h>

#include <span>
#include <string>
#include <vector>

#include "spmat/core/reference.hpp"
#include "spmat/formats/bro_ell/bro_ell.hpp"
#include "spmat/formats/bro_ell/bro_test_support.hpp"
#include "spmat/matrix.hpp"
#include "tests/support/test_support.hpp"

namespace spmat {
namespace {

using bro_testing::Csr64;

/// The paper's 4×5 example, 0-based.
Csr<double, std::int32_t> paper_example() {
  Csr<double, std::int32_t> a;
  a.rows = 4;
  a.cols = 5;
  a.row_ptr = {0, 2, 7, 10, 12};
  a.col_idx = {0, 2, 0, 1, 2, 3, 4, 1, 2, 4, 3, 4};
  a.values = {3, 2, 2, 6, 5, 4, 1, 1, 9, 7, 8, 3};
  return a;
}

TEST(BroEll, StoresThePapersExampleAsInFigure1) {
  const auto a = paper_example();
  const auto e = BroEll<double, std::int32_t>::encode(a, 2, 4, {}, -1);
  EXPECT_EQ(e.width_off, (std::vector<std::int64_t>{0, 5, 8}));
  EXPECT_EQ(e.widths, (std::vector<std::uint8_t>{1, 2, 1, 1, 1, 3, 1, 2}));
  EXPECT_EQ(e.sym64, (std::vector<std::uint64_t>{0b1100, 0b1011, 0b0000, 0b1100, 0b0101, 0b1001,
                                                 0b1000, 0b0000}));
  EXPECT_EQ(e.values, (std::vector<double>{3, 2, 2, 6, 0, 5, 0, 4, 0, 1, 1, 8, 9, 3, 7, 0}));
  EXPECT_EQ(e.max_row, 5);
  const auto s = e.index_savings();
  EXPECT_EQ(s.original, 80u);  // 4×5 4-byte ELLPACK indices, as the paper counts
  EXPECT_EQ(s.compressed, 64u);  // 8 four-bit symbols (32 payload bits), held in 64-bit words on the host
  EXPECT_EQ(e.to_csr(), a);
}

TEST(BroEll, DecodesThe32BitCodeOfTheExampleInTheKernel) {
  const auto a = paper_example();
  const auto e = BroEll<double, std::int32_t>::encode(a, 2, 32, {}, -1);
  EXPECT_EQ(e.sym32, (std::vector<std::uint32_t>{0xc0000000u, 0xbc000000u, 0x58000000u, 0x90000000u}));
  EXPECT_EQ(e.storage_bytes(), 3 * 8 + 3 * 8 + 8 + 4 * 4 + 16 * 8u);
  const std::vector<double> x{1, 2, 3, 4, 5};
  std::vector<double> y(4, std::numeric_limits<double>::quiet_NaN());
  spmv(e, x.data(), y.data(), 1.0, 0.0);
  EXPECT_EQ(y, (std::vector<double>{9, 50, 64, 47}));
  std::vector<double> yt(5, 1.0);
  const std::vector<double> xt{1, 1, 1, 1};
  spmv_t(e, xt.data(), yt.data(), 2.0, 1.0);  // 2·(column sums) + 1
  EXPECT_EQ(yt, (std::vector<double>{11, 15, 33, 25, 23}));
}

TEST(BroEll, KeepsColumnZeroApartFromThePaddingMarker) {
  Csr<float, std::int64_t> a;  // rows hitting column 0 only, and an explicit zero
  a.rows = 3;
  a.cols = 2;
  a.row_ptr = {0, 1, 1, 3};
  a.col_idx = {0, 0, 1};
  a.values = {5, 0, 7};
  const auto e = BroEll<float, std::int64_t>::build(a, FormatOptions().set("h", "32"));
  EXPECT_EQ(e.to_csr(), a);
  EXPECT_EQ(e.nnz, 3);
}

TEST(BroEll, RefusesADenseRowWithAFillRatioMessage) {
  const Csr64 a = bro_testing::random_csr(301, 100003, [](std::int64_t r) { return r == 7 ? 100000 : r % 3; }, 2);
  try {
    (void)Matrix<double>::build(a, "bro-ell", Backend::cpu);
    FAIL() << "expected UnsupportedError";
  } catch (const UnsupportedError& e) {
    EXPECT_NE(std::string(e.what()).find("fill ratio"), std::string::npos) << e.what();
  }
  // BRO-HYB takes it: the long row goes to the BRO-COO part.
  const auto m = Matrix<double>::build(a, "bro-hyb", Backend::cpu);
  EXPECT_EQ(m.to_csr(), a);
}

TEST(BroEll, RejectsBadOptions) {
  const auto a = paper_example();
  EXPECT_THROW((void)Matrix<double>::build(a, "bro-ell", Backend::cpu, FormatOptions().set("h", "48")), ParseError);
  EXPECT_THROW((void)Matrix<double>::build(a, "bro-ell", Backend::cpu, FormatOptions().set("sym_len", "16")), ParseError);
  EXPECT_THROW((void)Matrix<double>::build(a, "bro-coo", Backend::cpu, FormatOptions().set("interval", "40")), ParseError);
  EXPECT_THROW((void)Matrix<double>::build(a, "bro-ell-bar", Backend::cpu, FormatOptions().set("bar_algo", "x")), ParseError);
}

template <class V, class I>
void check_cpu(const bro_testing::Variant& var, const bro_testing::Scenario& sc) {
  SCOPED_TRACE(var.format + " [" + var.label + "] " + std::string(precision_name<V>()) + "/" +
               std::string(index_name<I>()) + " on " + sc.name);
  const auto a = convert<V, I>(sc.a);
  const auto m = Matrix<V>::build(a, var.format, Backend::cpu, var.options);
  EXPECT_EQ(m.to_csr(), (convert<V, std::int64_t>(a))) << "round trip";
  EXPECT_GT(m.storage_bytes(), 0u);
  EXPECT_EQ(m.traffic_bytes(Op::spmv), m.storage_bytes() + (a.rows + a.cols) * sizeof(V));
  const std::uint64_t seed = testing::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const struct {
    V alpha, beta;
  } coeffs[] = {{1, 0}, {-1.5, 0.5}, {2, 1}};
  for (bool transpose : {false, true}) {
    const std::int64_t nx = transpose ? a.rows : a.cols, ny = transpose ? a.cols : a.rows;
    const auto x = testing::random_vector<V>(nx, seed, true);
    for (const auto& c : coeffs) {
      SCOPED_TRACE(std::string(transpose ? "spmv_t" : "spmv") + " alpha=" +
                   std::to_string(c.alpha) + " beta=" + std::to_string(c.beta));
      auto y = c.beta == V(0) ? testing::poisoned<V>(ny) : testing::random_vector<V>(ny, seed + 1, true);
      const auto y0 = y;
      if (transpose)
        m.spmv_t(x, y, c.alpha, c.beta);
      else
        m.spmv(x, y, c.alpha, c.beta);
      const auto want = transpose
          ? reference::spmv_t(a, std::span<const V>(x), c.alpha, c.beta, std::span<const V>(y0))
          : reference::spmv(a, std::span<const V>(x), c.alpha, c.beta, std::span<const V>(y0));
      EXPECT_LE(reference::relative_norm2_error(std::span<const V>(y), std::span<const double>(want)),
                testing::tolerance<V>());
    }
  }
}

TEST(BroFamilyCpu, MatchesTheReferenceOnEveryScenarioAndTypePair) {
  for (const auto& var : bro_testing::variants())
    for (const auto& sc : bro_testing::scenarios()) {
      check_cpu<float, std::int32_t>(var, sc);
      check_cpu<float, std::int64_t>(var, sc);
      check_cpu<double, std::int32_t>(var, sc);
      check_cpu<double, std::int64_t>(var, sc);
    }
}

TEST(BroFamilyCpu, IsDeterministicRunToRun) {
  const auto& sc = bro_testing::scenarios()[2];
  for (const auto& var : bro_testing::variants()) {
    const auto m = Matrix<double>::build(sc.a, var.format, Backend::cpu, var.options);
    const auto x = testing::random_vector<double>(sc.a.rows, 3);
    std::vector<double> y1(sc.a.cols), y2(sc.a.cols);
    m.spmv_t(x, y1);
    m.spmv_t(x, y2);
    EXPECT_EQ(y1, y2) << var.format;
  }
}

}  // namespace
}  // namespace spmat
