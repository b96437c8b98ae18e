// spmat/formats/bro_ell/bro_test_support.hpp — random matrices and the BRO family's scenario
// list, shared by the BRO CPU and GPU tests (test-only header).
// SPDX-License-Identifier: MIT
#pragma once
#include <algorithm>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "spmat/core/csr.hpp"
#include "spmat/core/options.hpp"
#include "spmat/matrix.hpp"
#include "tests/support/kernel_check.hpp"
#include "tests/support/test_support.hpp"

namespace spmat::bro_testing {

using Csr64 = Csr<double, std::int64_t>;

/// The BRO paper's 4×5 example matrix, 0-based: the hand-checked layouts of every BRO format.
inline Csr<double, std::int32_t> paper_example() {
  Csr<double, std::int32_t> a;
  a.rows = 4;
  a.cols = 5;
  a.row_ptr = {0, 2, 7, 10, 12};
  a.col_idx = {0, 2, 0, 1, 2, 3, 4, 1, 2, 4, 3, 4};
  a.values = {3, 2, 2, 6, 5, 4, 1, 1, 9, 7, 8, 3};
  return a;
}

/// The CPU spmv of `m`, a BRO storage of paper_example(), with x = (1, 2, 3, 4, 5) into a y
/// poisoned with NaN: y = (9, 50, 64, 47), the product worked out in the paper.
template <class Storage>
void expect_paper_example_product(const Storage& m) {
  const std::vector<double> x{1, 2, 3, 4, 5};
  std::vector<double> y(4, std::numeric_limits<double>::quiet_NaN());
  spmv(m, x.data(), y.data(), 1.0, 0.0);
  EXPECT_EQ(y, (std::vector<double>{9, 50, 64, 47}));
}

/// A banded matrix (row i: columns i-w..i+w) with its rows shuffled: BAR's favourite input.
inline Csr64 shuffled_band(std::int64_t rows, std::int64_t w, std::uint64_t seed) {
  std::vector<std::int64_t> perm(static_cast<std::size_t>(rows));
  for (std::int64_t i = 0; i < rows; ++i) perm[i] = i;
  std::mt19937_64 rng(seed);
  std::shuffle(perm.begin(), perm.end(), rng);
  Csr64 a;
  a.rows = rows;
  a.cols = rows;
  a.row_ptr.assign(1, 0);
  a.col_idx.reserve(static_cast<std::size_t>(rows * (2 * w + 1)));
  a.values.reserve(a.col_idx.capacity());
  for (std::int64_t r = 0; r < rows; ++r) {
    const std::int64_t i = perm[r];
    for (std::int64_t j = std::max<std::int64_t>(0, i - w); j <= std::min(rows - 1, i + w); ++j) {
      a.col_idx.push_back(j);
      a.values.push_back(static_cast<double>((i + j) % 7 - 3));
    }
    a.row_ptr.push_back(static_cast<std::int64_t>(a.col_idx.size()));
  }
  return a;
}

/// 5-point Laplacian of an n×m grid (rows n·m; 3..5 entries per row; values −1 and 4): the
/// exact-fit case of the fit kernel (≤ 30 bits per interior row with h = 32, first=slice; slices
/// that span a grid-row boundary take two 32-bit symbols).
inline Csr64 lap2d(std::int64_t n, std::int64_t m) {
  Csr64 a;
  a.rows = a.cols = n * m;
  a.row_ptr.assign(1, 0);
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t j = 0; j < m; ++j) {
      const std::int64_t r = i * m + j;
      const std::int64_t cs[] = {i > 0 ? r - m : -1, j > 0 ? r - 1 : -1, r, j + 1 < m ? r + 1 : -1,
                                 i + 1 < n ? r + m : -1};
      for (std::int64_t c : cs)
        if (c >= 0) {
          a.col_idx.push_back(c);
          a.values.push_back(c == r ? 4.0 : -1.0);
        }
      a.row_ptr.push_back(static_cast<std::int64_t>(a.col_idx.size()));
    }
  return a;
}

/// 7-point Laplacian of an a×b×c grid (row (i·b + j)·c + k; 4..7 entries per row). With b·c
/// large enough, slices next to a grid boundary need 3 symbols of 32 bits (first=slice, h = 32):
/// the 128-bit fit kernel's case (bro_ell_fit_words = 2), as gen:lap3d:60 and gen:lap3d:215.
inline Csr64 lap3d(std::int64_t a_, std::int64_t b, std::int64_t c) {
  Csr64 a;
  a.rows = a.cols = a_ * b * c;
  a.row_ptr.assign(1, 0);
  for (std::int64_t i = 0; i < a_; ++i)
    for (std::int64_t j = 0; j < b; ++j)
      for (std::int64_t k = 0; k < c; ++k) {
        const std::int64_t r = (i * b + j) * c + k;
        const std::int64_t cs[] = {i > 0 ? r - b * c : -1, j > 0 ? r - c : -1, k > 0 ? r - 1 : -1, r,
                                   k + 1 < c ? r + 1 : -1, j + 1 < b ? r + c : -1,
                                   i + 1 < a_ ? r + b * c : -1};
        for (std::int64_t col : cs)
          if (col >= 0) {
            a.col_idx.push_back(col);
            a.values.push_back(col == r ? 6.0 : -1.0);
          }
        a.row_ptr.push_back(static_cast<std::int64_t>(a.col_idx.size()));
      }
  return a;
}

struct Scenario {
  std::string name;
  Csr64 a;
};

/// Sizes not multiples of 32 or 256, empty rows and columns, a long row, dense rows, and the
/// degenerate shapes.
inline const std::vector<Scenario>& scenarios() {
  static const std::vector<Scenario> all = [] {
    std::vector<Scenario> v;
    v.push_back({"ragged_empty_rows_and_cols_1000x777",
                 testing::random_csr_of_lengths(1000, 777, [](std::int64_t r) { return r % 5 == 0 ? 0 : (r * 7) % 13; }, 1, 20)});
    v.push_back({"one_long_row_300x5001",
                 testing::random_csr_of_lengths(300, 5001, [](std::int64_t r) { return r == 7 ? 3000 : r % 4; }, 2)});
    v.push_back({"power_law_rows_613x4099",
                 testing::random_csr_of_lengths(613, 4099, [](std::int64_t r) { return r % 97 == 0 ? 900 : (r % 31 == 0 ? 200 : r % 6); }, 3)});
    v.push_back({"dense_rows_65x70", testing::random_csr_of_lengths(65, 70, [](std::int64_t) { return 70; }, 4)});
    v.push_back({"banded_shuffled_777", shuffled_band(777, 3, 5)});
    v.push_back({"one_by_one", testing::random_csr_of_lengths(1, 1, [](std::int64_t) { return 1; }, 6)});
    v.push_back({"zero_by_zero", testing::random_csr_of_lengths(0, 0, [](std::int64_t) { return 0; }, 7)});
    v.push_back({"zero_rows_0x5", testing::random_csr_of_lengths(0, 5, [](std::int64_t) { return 0; }, 8)});
    v.push_back({"zero_cols_6x0", testing::random_csr_of_lengths(6, 0, [](std::int64_t) { return 0; }, 9)});
    v.push_back({"all_empty_40x41", testing::random_csr_of_lengths(40, 41, [](std::int64_t) { return 0; }, 10)});
    // Exact-fit kernel inputs (bro_ell_fit_eligible with the defaults, sym_len 32 and 64):
    v.push_back({"lap2d_5pt_61x67", lap2d(61, 67)});
    v.push_back({"short_rows_2011x9000",
                 testing::random_csr_of_lengths(2011, 9000, [](std::int64_t r) { return r % 13 == 0 ? 0 : 1 + r % 3; }, 11)});
    // 128-bit fit kernel inputs (bro_ell_fit_words = 2 with the defaults: 3-4 symbols per row in
    // some slices; sym_len 64: 2 symbols):
    v.push_back({"lap3d_7pt_3x20x150", lap3d(3, 20, 150)});
    v.push_back({"wide_short_rows_1999x262144",
                 testing::random_csr_of_lengths(1999, 1 << 18, [](std::int64_t r) { return r % 13 == 0 ? 0 : 1 + r % 5; }, 12)});
    return v;
  }();
  return all;
}

struct Variant {
  std::string format;
  FormatOptions options;
  std::string label;
};

/// Every BRO registry name with the option sets worth covering (h = 32, 64, 256, 512; first =
/// slice and abs; CUDA kernel = fit, batched (unroll 8 and 4) and classic; sym_len 32 and 64; small
/// COO intervals; forced HYB widths so that both parts are populated (K = 40 puts rows longer
/// than 32 positions in the ELL part: the batched kernel's width chunks); BRO-CSR with 1, auto,
/// 8 and 32 lanes per row).
inline std::vector<Variant> variants() {
  std::vector<Variant> v;
  // bro-ell defaults: h = 32, first = slice, CUDA kernel = fit (batched, unroll 8, where the
  // matrix does not fit: most scenarios here; lap2d_5pt and short_rows fit in one 64-bit word,
  // lap3d_7pt and wide_short_rows in two: the 128-bit fit kernel; fit_bits=64 sends those two
  // to the batched kernel).
  v.push_back({"bro-ell", {}, "defaults"});
  v.push_back({"bro-ell", FormatOptions().set("h", "256").set("first", "abs"), "paper:h=256,first=abs"});
  v.push_back({"bro-ell", FormatOptions().set("h", "256").set("first", "abs").set("kernel", "classic"),
               "paper,classic"});
  v.push_back({"bro-ell", FormatOptions().set("kernel", "classic"), "classic"});
  v.push_back({"bro-ell", FormatOptions().set("kernel", "batched"), "batched"});
  v.push_back({"bro-ell", FormatOptions().set("fit_bits", "64"), "fit_bits=64"});
  v.push_back({"bro-ell", FormatOptions().set("kernel", "fit").set("h", "64").set("sym_len", "64"),
               "fit,h=64,sym_len=64"});
  v.push_back({"bro-ell-bar", FormatOptions().set("kernel", "batched").set("unroll", "4"),
               "batched,unroll=4"});
  v.push_back({"bro-ell", FormatOptions().set("h", "32").set("sym_len", "64"), "h=32,sym_len=64"});
  v.push_back({"bro-ell", FormatOptions().set("h", "64").set("unroll", "4").set("sym_len", "64"),
               "h=64,unroll=4,sym_len=64"});
  v.push_back({"bro-ell", FormatOptions().set("h", "512").set("first", "abs").set("max_fill", "1000"),
               "h=512,first=abs"});
  v.push_back({"bro-ell-bar", FormatOptions().set("h", "32"), "h=32"});
  v.push_back({"bro-ell-bar", FormatOptions().set("bar_algo", "fast").set("sym_len", "64"), "fast,sym_len=64"});
  v.push_back({"bro-coo", {}, "defaults"});
  v.push_back({"bro-coo", FormatOptions().set("interval", "64").set("sym_len", "64"), "interval=64,sym_len=64"});
  v.push_back({"bro-hyb", {}, "defaults"});
  v.push_back({"bro-hyb", FormatOptions().set("split", "cusp"), "split=cusp"});
  v.push_back({"bro-hyb", FormatOptions().set("kernel", "batched").set("split", "cusp"), "batched,split=cusp"});
  v.push_back({"bro-hyb", FormatOptions().set("ell_width", "3").set("h", "32").set("interval", "96"), "K=3,h=32"});
  v.push_back({"bro-hyb", FormatOptions().set("ell_width", "3").set("h", "256").set("first", "abs")
                              .set("kernel", "classic"), "K=3,paper,classic"});
  v.push_back({"bro-hyb", FormatOptions().set("ell_width", "40").set("unroll", "4"), "K=40,unroll=4"});
  v.push_back({"bro-hyb-bar", FormatOptions().set("ell_width", "2").set("sym_len", "64"), "K=2,sym_len=64"});
  v.push_back({"bro-csr", {}, "defaults"});
  v.push_back({"bro-csr", FormatOptions().set("tpr", "1"), "tpr=1"});
  v.push_back({"bro-csr", FormatOptions().set("tpr", "8").set("sym_len", "64"), "tpr=8,sym_len=64"});
  v.push_back({"bro-csr", FormatOptions().set("tpr", "32"), "tpr=32"});
  return v;
}

/// Scenario `sc` built as `var` on `backend` in type pair (V, I) against the reference: its
/// to_csr, spmv and spmv_t; on the CPU also its storage and traffic bytes. The scenarios
/// include long rows on purpose: the build limits are lifted for them.
template <class V, class I>
void check_variant(const Variant& var, const Scenario& sc, Backend backend) {
  SCOPED_TRACE(var.format + " [" + var.label + "] " + std::string(precision_name<V>()) + "/" +
               std::string(index_name<I>()) + " on " + sc.name);
  const auto a = convert<V, I>(sc.a);
  const auto m = Matrix<V>::build(a, var.format, backend,
                                  testing::without_row_limits(var.format, var.options));
  EXPECT_EQ(m.to_csr(), (convert<V, std::int64_t>(a))) << "round trip";
  if (backend == Backend::cpu) {
    EXPECT_GT(m.storage_bytes(), 0u);
    EXPECT_EQ(m.traffic_bytes(Op::spmv), m.storage_bytes() + (a.rows + a.cols) * sizeof(V));
  }
  const std::uint64_t seed = testing::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  testing::expect_matrix_spmv_and_spmv_t_match(m, a, seed);
}

}  // namespace spmat::bro_testing
