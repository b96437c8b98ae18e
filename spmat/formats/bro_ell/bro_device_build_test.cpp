// spmat/formats/bro_ell/bro_device_build_test.cpp — the BRO device builders (bro-ell, bro-coo,
// bro-hyb) against the host builders over the option sets of the family's tests.
// SPDX-License-Identifier: MIT
//
// CPU (run everywhere): the BRO-HYB split rules on histograms equal the rules on row_ptr.
// GPU (skip, with the reason, without CUDA or a GPU): for every BRO variant but bro-csr (h,
// sym_len, first, kernel, unroll, fit_bits, interval, split, forced ell_width, and the -bar
// entries, which fall back to the host builder) and every BRO scenario (long rows, empty rows
// and columns, degenerate shapes, exact-fit stencils), in the four type pairs: the matrix built
// from a device CSR has the stored arrays of the one built from the host CSR byte for byte, the
// same storage_bytes, the same to_csr, and its spmv matches the reference. With the row limits
// on, both builds refuse the same matrices.
#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "spmat/config.hpp"
#include "spmat/core/reference.hpp"
#include "spmat/formats/bro_ell/bro_test_support.hpp"
#include "spmat/formats/bro_hyb/bro_hyb.hpp"
#include "spmat/matrix.hpp"
#include "tests/support/device_ops.hpp"
#include "tests/support/test_support.hpp"
#if SPMAT_WITH_CUDA
#include "spmat/cuda/device_csr.hpp"
#endif

namespace spmat {
namespace {

/// Row lengths of `a` as a histogram (i = 0..longest) and the longest row of each slice of h.
std::vector<std::int64_t> length_histogram(const bro_testing::Csr64& a, int h, bool slices) {
  std::int64_t longest = 0;
  for (std::int64_t r = 0; r < a.rows; ++r)
    longest = std::max(longest, a.row_ptr[r + 1] - a.row_ptr[r]);
  std::vector<std::int64_t> hist(static_cast<std::size_t>(longest) + 1, 0);
  for (std::int64_t s0 = 0; s0 < a.rows; s0 += slices ? h : 1) {
    std::int64_t l = 0;
    for (std::int64_t r = s0; r < std::min(a.rows, s0 + (slices ? h : 1)); ++r)
      l = std::max(l, a.row_ptr[r + 1] - a.row_ptr[r]);
    ++hist[static_cast<std::size_t>(l)];
  }
  return hist;
}

TEST(BroHybSplit, HistogramRulesEqualTheRowPtrRules) {
  for (const auto& sc : bro_testing::scenarios()) {
    SCOPED_TRACE(sc.name);
    const std::span<const std::int64_t> rp(sc.a.row_ptr);
    const auto rows = length_histogram(sc.a, 1, false);
    EXPECT_EQ(bro_hyb_ell_width_hist(rows), bro_hyb_ell_width<std::int64_t>(rp));
    EXPECT_EQ(bro_hyb_ell_width_hist(rows, 3.0, 0), bro_hyb_ell_width<std::int64_t>(rp, 3.0, 0));
    for (int h : {32, 256}) {
      const auto slices = length_histogram(sc.a, h, true);
      EXPECT_EQ(bro_hyb_ell_width_bytes_hist(rows, slices, h, 8, 4),
                bro_hyb_ell_width_bytes<std::int64_t>(rp, h, 8, 4))
          << "h " << h;
      EXPECT_EQ(bro_hyb_ell_width_bytes_hist(rows, slices, h, 4, 8, 1.0),
                bro_hyb_ell_width_bytes<std::int64_t>(rp, h, 4, 8, 1.0))
          << "h " << h;
    }
  }
}

#if SPMAT_WITH_CUDA

/// y = A x of `m` (output poisoned with NaN) against the fp64 reference, within rounding.
template <class V, class I>
void expect_spmv_close(const Matrix<V>& m, const Csr<V, I>& a, const std::string& what) {
  const auto x = testing::operand_vector<V>(a.cols, 5, true);
  const auto y = testing::apply_spmv(m, Op::spmv, x);
  const auto want = reference::spmv<V, I, V, V>(a, std::span<const V>(x));
  ASSERT_EQ(y.size(), want.size()) << what;
  const double tol = sizeof(V) == 4 ? 1e-3 : 1e-10;
  for (std::size_t i = 0; i < y.size(); ++i)
    ASSERT_NEAR(static_cast<double>(y[i]), want[i], tol * (1.0 + std::abs(want[i])))
        << what << ": row " << i;
}

template <class V, class I>
void check_device_build(const bro_testing::Variant& var, const bro_testing::Scenario& sc,
                        bool row_limits) {
  const std::string what = var.format + " [" + var.label + "] " + sc.name + " " +
                           std::string(precision_name<V>()) + "/" + std::string(index_name<I>()) +
                           (row_limits ? " (row limits on)" : "");
  const auto a = convert<V, I>(sc.a);
  const FormatOptions o = row_limits ? var.options : testing::without_row_limits(var.format, var.options);
  std::optional<Matrix<V>> host;
  try {
    host = Matrix<V>::build(a, var.format, Backend::cuda, o);
  } catch (const UnsupportedError&) {
    EXPECT_THROW((void)Matrix<V>::build(cuda::upload_csr(a), var.format, o), UnsupportedError) << what;
    return;
  }
  const Matrix<V> dev = Matrix<V>::build(cuda::upload_csr(a), var.format, o);
  const auto hs = detail::impl_of(*host).stored_arrays();
  const auto ds = detail::impl_of(dev).stored_arrays();
  ASSERT_EQ(hs.size(), ds.size()) << what;
  for (std::size_t i = 0; i < hs.size(); ++i) {
    EXPECT_EQ(hs[i].name, ds[i].name) << what;
    EXPECT_TRUE(hs[i].bytes == ds[i].bytes) << what << ": array " << hs[i].name << " differs ("
                                            << hs[i].bytes.size() << " vs " << ds[i].bytes.size()
                                            << " bytes)";
  }
  EXPECT_EQ(host->storage_bytes(), dev.storage_bytes()) << what;
  EXPECT_EQ(dev.to_csr(), (convert<V, std::int64_t>(a))) << what;
  expect_spmv_close(dev, a, what + " (device-built)");
}

TEST(BroDeviceBuild, SameArraysAsTheHostBuilderForEveryVariant) {
  SPMAT_SKIP_WITHOUT_GPU();
  for (const auto& var : bro_testing::variants()) {
    if (var.format == "bro-csr") continue;  // no device builder
    EXPECT_TRUE(find_format(var.format).builds_on_device()) << var.format;
    for (const auto& sc : bro_testing::scenarios())
      testing::for_each_type_pair([&]<class V, class I>() {
        check_device_build<V, I>(var, sc, false);
        check_device_build<V, I>(var, sc, true);
      });
  }
}

TEST(BroDeviceBuild, ValueUpdatesStayRefused) {
  SPMAT_SKIP_WITHOUT_GPU();
  const auto a = bro_testing::lap2d(9, 11);
  for (const char* f : {"bro-ell", "bro-coo", "bro-hyb"}) {
    auto m = Matrix<double>::build(cuda::upload_csr(a), f);
    const std::vector<double> v(a.values.size(), 1.0);
    try {
      m.update_values(v, Memory::host);
      ADD_FAILURE() << f << ": update_values accepted";
    } catch (const UnsupportedError& e) {
      EXPECT_NE(std::string(e.what()).find(std::string("'") + f + "'"), std::string::npos) << e.what();
    }
  }
}

#endif  // SPMAT_WITH_CUDA

}  // namespace
}  // namespace spmat
