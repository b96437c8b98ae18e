// tests/support/test_support.hpp — shared test helpers: random inputs, poisoning, device copies.
// SPDX-License-Identifier: MIT
#pragma once
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "spmat/core/csr.hpp"
#include "spmat/core/options.hpp"
#include "spmat/core/types.hpp"

namespace spmat::testing {

/// A (value, index) type pair of the typed tests; Pairs: the four the library instantiates.
template <class V, class I>
struct Pair {
  using Value = V;
  using Index = I;
};
using Pairs = ::testing::Types<Pair<float, std::int32_t>, Pair<float, std::int64_t>,
                               Pair<double, std::int32_t>, Pair<double, std::int64_t>>;

/// fn.template operator()<Value, Index>() for the four pairs of Pairs, in that order: the body of
/// a plain TEST that checks every pair, e.g.
///   for_each_type_pair([&]<class V, class I>() { check<V, I>(seed); });
template <class Fn>
void for_each_type_pair(Fn&& fn) {
  fn.template operator()<float, std::int32_t>();
  fn.template operator()<float, std::int64_t>();
  fn.template operator()<double, std::int32_t>();
  fn.template operator()<double, std::int64_t>();
}

/// The worked 4×4 example of the format tests, row lengths 2, 0, 3, 1:
///   [[1,0,2,0],[0,0,0,0],[3,4,0,5],[0,0,0,6]]
template <class Value, class Index>
Csr<Value, Index> example() {
  Csr<Value, Index> a;
  a.rows = 4;
  a.cols = 4;
  a.row_ptr = {0, 2, 2, 5, 6};
  a.col_idx = {0, 2, 0, 1, 3, 3};
  a.values = {1, 2, 3, 4, 5, 6};
  return a;
}

/// A fresh seed per call (tests print it on failure so a run can be reproduced).
std::uint64_t fresh_seed();

/// Random vector of small integers in [-4, 4] (exact sums) or uniform reals.
template <class Value>
std::vector<Value> random_vector(std::int64_t n, std::uint64_t seed, bool small_integers = false) {
  std::mt19937_64 rng(seed);
  std::vector<Value> v(static_cast<std::size_t>(n));
  if (small_integers) {
    std::uniform_int_distribution<int> d(-4, 4);
    for (auto& e : v) e = static_cast<Value>(d(rng));
  } else {
    std::uniform_real_distribution<double> d(-1.0, 1.0);
    for (auto& e : v) e = static_cast<Value>(d(rng));
  }
  return v;
}

/// Random canonical CSR whose row r has len(r) entries (clamped to the usable columns), columns
/// drawn from [0, cols − spare_cols) so that the last `spare_cols` columns stay empty, values
/// small integers in [-4, 4] (zeros kept as explicit zeros) so that every sum is exact in fp32
/// and fp64.
template <class LenFn>
Csr<double, std::int64_t> random_csr_of_lengths(std::int64_t rows, std::int64_t cols, LenFn len,
                                                std::uint64_t seed, std::int64_t spare_cols = 0) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int> val(-4, 4);
  const std::int64_t usable = std::max<std::int64_t>(0, cols - spare_cols);
  Csr<double, std::int64_t> a;
  a.rows = rows;
  a.cols = cols;
  a.row_ptr.assign(1, 0);
  for (std::int64_t r = 0; r < rows; ++r) {
    const std::int64_t n = std::min<std::int64_t>(len(r), usable);
    std::vector<std::int64_t> c;
    if (n * 2 >= usable) {  // dense-ish: the first n columns of a shuffled range
      for (std::int64_t j = 0; j < usable; ++j) c.push_back(j);
      std::shuffle(c.begin(), c.end(), rng);
      c.resize(static_cast<std::size_t>(n));
    } else {
      std::set<std::int64_t> s;
      std::uniform_int_distribution<std::int64_t> col(0, usable - 1);
      while (static_cast<std::int64_t>(s.size()) < n) s.insert(col(rng));
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

/// m×n with each entry present with probability `density` and every entry of the leading
/// full_block × full_block block present; values small integers in [-4, 4] (sums exact in fp32).
inline Csr<double, std::int64_t> random_int_matrix(std::int64_t m, std::int64_t n, double density,
                                                   std::uint64_t seed, std::int64_t full_block = 0) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0, 1);
  std::uniform_int_distribution<int> v(-4, 4);
  Coo<double, std::int64_t> c;
  c.rows = m;
  c.cols = n;
  for (std::int64_t r = 0; r < m; ++r)
    for (std::int64_t k = 0; k < n; ++k)
      if (u(rng) < density || (r < full_block && k < full_block)) {
        c.row_idx.push_back(r);
        c.col_idx.push_back(k);
        c.values.push_back(v(rng));
      }
  return to_csr(c);
}

template <class Value>
std::vector<Value> poisoned(std::int64_t n) {
  return std::vector<Value>(static_cast<std::size_t>(n), std::numeric_limits<Value>::quiet_NaN());
}

/// Tolerance of the conformance suite for value type Value.
template <class Value>
constexpr double tolerance() {
  return sizeof(Value) == 4 ? 1e-5 : 1e-12;
}

/// Whether GPU tests can run here; the reason when they cannot ("built without CUDA", ...).
bool gpu_available(std::string* why = nullptr);

/// Names of the registered formats whose CUDA backend has `op`, in registry order.
std::vector<std::string> cuda_formats_with(Op op);

/// A registry name as a gtest parameter name (dashes are not allowed there: '-' -> '_').
std::string test_name(std::string format_name);

/// In a test body: skips the test, with the reason, where GPU tests cannot run here.
#define SPMAT_SKIP_WITHOUT_GPU()                                                 \
  do {                                                                          \
    std::string spmat_no_gpu_reason;                                            \
    if (!::spmat::testing::gpu_available(&spmat_no_gpu_reason))                 \
      GTEST_SKIP() << "GPU test skipped: " << spmat_no_gpu_reason;              \
  } while (0)

/// A test parameterised by a registry name that skips, saying "<what> of '<name>' not run: <why>",
/// where GPU tests cannot run here.
class GpuFormatTest : public ::testing::TestWithParam<std::string> {
 protected:
  explicit GpuFormatTest(std::string what) : what_(std::move(what)) {}
  void SetUp() override {
    std::string why;
    if (!gpu_available(&why)) GTEST_SKIP() << what_ << " of '" << GetParam() << "' not run: " << why;
  }

 private:
  std::string what_;
};

/// `o` with max_fill=inf and max_skew=inf added where the registry entry of `format` declares
/// those options and `o` does not set them: kernel tests run the long rows that the build
/// limits refuse by default (spmat/formats/ell/row_limits.hpp; row_limits_test.cpp tests them).
FormatOptions without_row_limits(const std::string& format, FormatOptions o = {});

/// One edge case of the conformance battery (every format runs every edge case).
/// `make(seed)` returns the input as COO (any order, duplicates allowed); the canonical
/// matrix every format is built from is `spmat::to_csr` of it. Scenarios with `random` set use the
/// seed (tests pass a fresh one and print it); the others ignore it. `integer_values`: values are
/// small integers and dense operands should be too, so that every sum is exact in fp32.
struct Scenario {
  std::string name;  ///< identifier-safe ([a-z0-9_]), used in test names
  std::string description;
  bool random = false;
  bool integer_values = false;
  std::function<Coo<double, std::int64_t>(std::uint64_t seed)> make;

  Csr<double, std::int64_t> canonical(std::uint64_t seed) const { return to_csr(make(seed)); }
};

/// The fixed list of conformance scenarios: 0×0, 1×1, 0×n, n×0, all-zero, empty rows and
/// columns, one dense row of 100,000 entries, power-law rows, tall and wide, duplicates,
/// explicit zeros, NaN/Inf, sizes off every block size (33×65, 1023×1025, 4097 rows), random.
const std::vector<Scenario>& scenarios();

/// splitmix64: a fast, well-mixed hash of (seed, i), for large operands (millions of values).
inline std::uint64_t mix64(std::uint64_t z) {
  z += 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

/// Dense operand for a scenario: small integers in [-4, 4] for integer scenarios, otherwise reals
/// with |v| in [0.5, 1.5] and random sign (never 0, so Inf·x is never NaN by accident).
template <class Value>
std::vector<Value> operand_vector(std::int64_t n, std::uint64_t seed, bool integer_values) {
  std::vector<Value> v(static_cast<std::size_t>(n));
  const std::uint64_t base = mix64(seed);
  for (std::size_t i = 0; i < v.size(); ++i) {
    const std::uint64_t h = mix64(base + i);
    if (integer_values) {
      v[i] = static_cast<Value>(static_cast<int>(h % 9) - 4);
    } else {
      const double m = 0.5 + static_cast<double>(h >> 11) * 0x1.0p-53;  // [0.5, 1.5)
      v[i] = static_cast<Value>((h & 1) ? m : -m);
    }
  }
  return v;
}

}  // namespace spmat::testing
