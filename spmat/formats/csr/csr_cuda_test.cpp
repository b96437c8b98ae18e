// spmat/formats/csr/csr_cuda_test.cpp — the CUDA CSR kernels (auto, scalar, vector, merge)
// against the fp64 reference: spmv, spmv_t, spmm on ragged, skewed and degenerate matrices.
// SPDX-License-Identifier: MIT
//
// GPU tests skip (with the reason) when spmat was built without CUDA or no GPU is present.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "spmat/config.hpp"
#include "spmat/core/reference.hpp"
#include "spmat/formats/csr/csr.hpp"
#include "spmat/matrix.hpp"
#include "tests/support/test_support.hpp"
#if SPMAT_WITH_CUDA
#include "spmat/cuda/buffer.hpp"
#endif

namespace spmat {
namespace {

TEST(CsrCudaOptions, RejectsAnUnknownThreadsPerRow) {
  Csr<double, std::int32_t> a;
  a.rows = 1;
  a.cols = 1;
  a.row_ptr = {0, 1};
  a.col_idx = {0};
  a.values = {2};
  EXPECT_THROW((void)Matrix<double>::build(a, "csr", Backend::cpu, FormatOptions().set("tpr", "3")),
               ParseError);
  EXPECT_NO_THROW((void)Matrix<double>::build(a, "csr", Backend::cpu, FormatOptions().set("tpr", "8")));
}

#if SPMAT_WITH_CUDA

using Csr64 = Csr<double, std::int64_t>;

/// Random canonical CSR with the given row lengths (clamped to cols), small-integer values in
/// [-4, 4] (zeros kept as explicit zeros), so that fp32 and fp64 sums are exact.
Csr64 random_csr(std::int64_t rows, std::int64_t cols, const std::vector<std::int64_t>& lengths,
                 std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int> val(-4, 4);
  Csr64 a;
  a.rows = rows;
  a.cols = cols;
  a.row_ptr.assign(1, 0);
  for (std::int64_t r = 0; r < rows; ++r) {
    const std::int64_t len = std::min(lengths[r], cols);
    std::vector<std::int64_t> c;
    if (len * 2 >= cols) {  // dense-ish: take the first `len` columns of a shuffled range
      c.resize(cols);
      for (std::int64_t j = 0; j < cols; ++j) c[j] = j;
      std::shuffle(c.begin(), c.end(), rng);
      c.resize(len);
    } else {
      std::set<std::int64_t> s;
      std::uniform_int_distribution<std::int64_t> col(0, cols - 1);
      while (static_cast<std::int64_t>(s.size()) < len) s.insert(col(rng));
      c.assign(s.begin(), s.end());
    }
    std::sort(c.begin(), c.end());
    for (auto j : c) {
      a.col_idx.push_back(j);
      a.values.push_back(val(rng));
    }
    a.row_ptr.push_back(static_cast<std::int64_t>(a.col_idx.size()));
  }
  return a;
}

struct Scenario {
  std::string name;
  Csr64 a;
};

/// Shapes chosen to hit every path: empty rows, one 100,000-entry row (long-row chunks, wide
/// merge fix-ups), power-law rows, tall/wide, 5-point-like rows, sizes not multiples of 32,
/// and the degenerate 0×0, 0×n, n×0 and all-zero matrices.
const std::vector<Scenario>& scenarios() {
  static const std::vector<Scenario> all = [] {
    std::vector<Scenario> v;
    std::mt19937_64 rng(12345);
    auto lengths = [&](std::int64_t rows, auto&& f) {
      std::vector<std::int64_t> l(rows);
      for (std::int64_t r = 0; r < rows; ++r) l[r] = f(r);
      return l;
    };
    std::uniform_int_distribution<int> small(0, 12);
    v.push_back({"ragged_with_empty_rows_1000x777",
                 random_csr(1000, 777, lengths(1000, [&](auto r) {
                              return r % 5 == 0 ? 0 : small(rng);
                            }), 1)});
    v.push_back({"one_row_of_100000_entries_301x100003",
                 random_csr(301, 100003, lengths(301, [&](auto r) {
                              return r == 7 ? 100000 : r % 3;
                            }), 2)});
    v.push_back({"power_law_rows_3001x4099",
                 random_csr(3001, 4099, lengths(3001, [&](auto r) {
                              return r % 997 == 0 ? 3000 : (r % 61 == 0 ? 300 : r % 4);
                            }), 3)});
    v.push_back({"tall_5003x37", random_csr(5003, 37, lengths(5003, [&](auto) {
                                              return small(rng) % 6;
                                            }), 4)});
    v.push_back({"wide_33x5001", random_csr(33, 5001, lengths(33, [&](auto r) {
                                              return 40 * r + 1;
                                            }), 5)});
    v.push_back({"five_per_row_2025x2025", random_csr(2025, 2025, lengths(2025, [&](auto r) {
                                                        return r % 45 == 0 ? 4 : 5;
                                                      }), 6)});
    v.push_back({"dense_rows_65x70", random_csr(65, 70, lengths(65, [&](auto) { return 70; }), 7)});
    v.push_back({"zero_by_zero", random_csr(0, 0, {}, 8)});
    v.push_back({"zero_rows_0x5", random_csr(0, 5, {}, 9)});
    v.push_back({"zero_cols_6x0", random_csr(6, 0, lengths(6, [](auto) { return 0; }), 10)});
    v.push_back({"all_zero_pattern_40x41", random_csr(40, 41, lengths(40, [](auto) { return 0; }), 11)});
    return v;
  }();
  return all;
}

const char* const kKernels[] = {"csr", "csr-scalar", "csr-vector", "csr-merge"};


/// Runs y = alpha*op(A)*x + beta*y0 on the device (y0 poisoned with NaN when beta == 0).
template <class V>
std::vector<V> device_spmv(const Matrix<V>& m, bool transpose, const std::vector<V>& x,
                           std::vector<V> y0, V alpha, V beta) {
  cuda::DeviceBuffer<V> dx(x, "test x"), dy(y0, "test y");
  const std::span<const V> xs(dx.data(), dx.size());
  if (transpose)
    m.spmv_t(xs, dy.span(), alpha, beta);
  else
    m.spmv(xs, dy.span(), alpha, beta);
  cuda::synchronize();
  return dy.download();
}

template <class V, class I>
void check_spmv_all(const char* format, const Scenario& sc, const FormatOptions& opts = {}) {
  SCOPED_TRACE(std::string(format) + " " + std::string(precision_name<V>()) + "/" +
               std::string(index_name<I>()) + " on " + sc.name);
  const auto a = convert<V, I>(sc.a);
  const auto m = Matrix<V>::build(a, format, Backend::cuda, opts);
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
      const auto y0 = c.beta == V(0) ? testing::poisoned<V>(ny)
                                     : testing::random_vector<V>(ny, seed + 1, true);
      const auto got = device_spmv(m, transpose, x, y0, c.alpha, c.beta);
      const auto want =
          transpose ? reference::spmv_t(a, std::span<const V>(x), c.alpha, c.beta, std::span<const V>(y0))
                    : reference::spmv(a, std::span<const V>(x), c.alpha, c.beta, std::span<const V>(y0));
      EXPECT_LE(reference::relative_norm2_error(std::span<const V>(got), std::span<const double>(want)),
                testing::tolerance<V>());
    }
  }
}

template <class V, class I>
void check_spmm_all(const char* format, const Scenario& sc) {
  SCOPED_TRACE(std::string(format) + " spmm " + std::string(precision_name<V>()) + "/" +
               std::string(index_name<I>()) + " on " + sc.name);
  const auto a = convert<V, I>(sc.a);
  const auto m = Matrix<V>::build(a, format, Backend::cuda);
  for (DenseLayout layout : {DenseLayout::row_major, DenseLayout::col_major}) {
    for (std::int64_t k : {1, 5, 33}) {
      SCOPED_TRACE(std::string(to_string(layout)) + " k=" + std::to_string(k));
      const auto b = testing::random_vector<V>(a.cols * k, 77 + k, true);
      const auto c0 = testing::random_vector<V>(a.rows * k, 99 + k, true);
      for (V beta : {V(0), V(0.5)}) {
        const auto c_init = beta == V(0) ? testing::poisoned<V>(a.rows * k) : c0;
        cuda::DeviceBuffer<V> db(b, "test B"), dc(c_init, "test C");
        m.spmm(std::span<const V>(db.data(), db.size()), dc.span(), k, layout, V(-2), beta);
        cuda::synchronize();
        const auto got = dc.download();
        const auto want = reference::spmm(a, std::span<const V>(b), k, layout, -2.0, beta,
                                          std::span<const V>(c_init));
        EXPECT_LE(reference::relative_norm2_error(std::span<const V>(got), std::span<const double>(want)),
                  testing::tolerance<V>());
      }
    }
  }
}

template <class V, class I>
void check_all_types(const char* format) {
  for (const auto& sc : scenarios()) check_spmv_all<V, I>(format, sc);
}

TEST(CsrCuda, EveryKernelMatchesTheReferenceForSpmvAndSpmvT) {
  std::string why;
  if (!testing::gpu_available(&why)) GTEST_SKIP() << why;
  for (const char* k : kKernels) {
    check_all_types<float, std::int32_t>(k);
    check_all_types<float, std::int64_t>(k);
    check_all_types<double, std::int32_t>(k);
    check_all_types<double, std::int64_t>(k);
  }
}

TEST(CsrCuda, AutoKernelMatchesTheReferenceForEveryForcedThreadsPerRow) {
  std::string why;
  if (!testing::gpu_available(&why)) GTEST_SKIP() << why;
  for (const char* tpr : {"2", "4", "8", "16", "32"})
    for (const auto& sc : scenarios())
      check_spmv_all<double, std::int32_t>("csr", sc, FormatOptions().set("tpr", tpr));
}

TEST(CsrCuda, SpmmMatchesTheReferenceInBothLayouts) {
  std::string why;
  if (!testing::gpu_available(&why)) GTEST_SKIP() << why;
  for (const auto& sc : scenarios()) {
    check_spmm_all<float, std::int32_t>("csr", sc);
    check_spmm_all<double, std::int64_t>("csr", sc);
    check_spmm_all<double, std::int32_t>("csr-merge", sc);
  }
}

TEST(CsrCuda, SpmvIsBitwiseReproducibleForEveryKernel) {
  std::string why;
  if (!testing::gpu_available(&why)) GTEST_SKIP() << why;
  for (const char* k : kKernels) {
    for (const auto& sc : scenarios()) {
      SCOPED_TRACE(std::string(k) + " on " + sc.name);
      auto a = convert<float, std::int32_t>(sc.a);
      const auto vals = testing::random_vector<float>(a.nnz(), 5);  // real-valued: order matters
      a.values = vals;
      const auto m = Matrix<float>::build(a, k, Backend::cuda);
      const auto x = testing::random_vector<float>(a.cols, 6);
      const auto y1 = device_spmv<float>(m, false, x, testing::poisoned<float>(a.rows), 1, 0);
      for (int run = 0; run < 3; ++run) {
        const auto y2 = device_spmv<float>(m, false, x, testing::poisoned<float>(a.rows), 1, 0);
        ASSERT_EQ(0, std::memcmp(y1.data(), y2.data(), y1.size() * sizeof(float)));
      }
    }
  }
}

TEST(CsrCuda, NanAndInfInTheMatrixPropagateLikeTheReference) {
  std::string why;
  if (!testing::gpu_available(&why)) GTEST_SKIP() << why;
  auto a = convert<double, std::int32_t>(scenarios()[0].a);
  a.values[3] = std::numeric_limits<double>::quiet_NaN();
  a.values[10] = std::numeric_limits<double>::infinity();
  for (const char* k : kKernels) {
    SCOPED_TRACE(k);
    const auto m = Matrix<double>::build(a, k, Backend::cuda);
    const auto x = testing::random_vector<double>(a.cols, 3, true);
    const auto got = device_spmv<double>(m, false, x, testing::poisoned<double>(a.rows), 1, 0);
    const auto want = reference::spmv(a, std::span<const double>(x), 1.0, 0.0, std::span<const double>());
    EXPECT_LE(reference::relative_norm2_error(std::span<const double>(got), std::span<const double>(want)),
              1e-12);
  }
}

#else
TEST(CsrCuda, KernelTestsNeedACudaBuild) { GTEST_SKIP() << "spmat was built without CUDA"; }
#endif  // SPMAT_WITH_CUDA

}  // namespace
}  // namespace spmat
