// tests/conformance_test.cpp — the one conformance suite: every registered format × type pair ×
// backend × edge-case scenario, checked against the fp64 reference.
// SPDX-License-Identifier: MIT
//
// The parameter list is generated from spmat::registry() when the tests are registered, so a
// new format joins without editing this file. Test names read
//   Conformance/FormatConformance.<Check>/<format>_<fp32|fp64>_<int32|int64>_<cpu|cuda>_<scenario>
// (dashes in registry names become underscores), so every failure names its scenario.
//
// Per (format, type pair, backend, scenario), where caps.on(backend).available:
//   RoundTripAndSpmv  to_csr() == canonical input (exact, int64 indices); shape; storage and
//                     traffic bytes; spmv and spmv_t with (alpha, beta) = (1, 0) on NaN-poisoned
//                     y and (0.5, -2) on a random y, vs spmat::reference; bitwise repeatability
//                     where the caps promise determinism; UnsupportedError naming the format
//                     where the caps say an operation is missing.
//   Spmm              k = 1, 3, 32, row- and column-major, vs reference::spmm (or the error).
//   Add               αA + βB, A − A (cancellation keeps explicit zeros), A + Aᵀ, vs csr_add
//                     (or the error); shape mismatch is a DimensionMismatchError.
//   Int32Limit        with ScopedInt32Limit below the matrix's largest dimension or nnz, an int32
//                     build throws IndexOverflowError; an int64 build still works.
// A build that throws UnsupportedError (a format refusing a scenario, e.g. too much padding) is
// recorded (test property "refused" and a line on stdout) and passes; any other exception fails.
//
// Tolerances (relative 2-norm, NaN/Inf positions compared by class): fp64 1e-12, fp32 1e-5.
// Where the caps declare an operation non-deterministic (floating-point atomics reorder sums)
// the tolerance is multiplied by max(1, sqrt(L / 1024)), L the longest row (spmv, spmm) or
// column (spmv_t): the rounding error of a sum of L terms in arbitrary order grows like
// sqrt(L)·eps, and up to 1024 terms the plain fp32 bound (≈170 eps) already covers it.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <iostream>
#include <optional>
#include <set>
#include <sstream>
#include <tuple>

#include "spmat/core/reference.hpp"
#include "spmat/formats/csr/csr.hpp"
#include "spmat/matrix.hpp"
#include "spmat/model/traffic.hpp"
#include "tests/support/device_ops.hpp"
#include "tests/support/test_support.hpp"

namespace spmat {
namespace {

using testing::Scenario;

enum class ValueKind { fp32, fp64 };
enum class IndexKind { int32, int64 };

struct Param {
  const FormatEntry* format;
  ValueKind value;
  IndexKind index;
  Backend backend;
  const Scenario* scenario;
};

std::string label(const Param& p) {
  std::string f = p.format->name;
  std::replace(f.begin(), f.end(), '-', '_');
  return f + (p.value == ValueKind::fp32 ? "_fp32" : "_fp64") +
         (p.index == IndexKind::int32 ? "_int32_" : "_int64_") +
         std::string(to_string(p.backend)) + "_" + p.scenario->name;
}

void PrintTo(const Param& p, std::ostream* os) { *os << label(p); }

std::vector<Param> all_params() {
  std::vector<Param> v;
  for (const auto& e : registry())
    for (Backend b : {Backend::cpu, Backend::cuda}) {
      if (!e.caps.on(b).available) continue;
      for (ValueKind vk : {ValueKind::fp32, ValueKind::fp64})
        for (IndexKind ik : {IndexKind::int32, IndexKind::int64})
          for (const auto& s : testing::scenarios()) v.push_back({&e, vk, ik, b, &s});
    }
  return v;
}

/// Calls f.template operator()<Value, Index>() for the runtime type pair of `p`.
template <class F>
void dispatch(const Param& p, F&& f) {
  if (p.value == ValueKind::fp32) {
    if (p.index == IndexKind::int32) f.template operator()<float, std::int32_t>();
    else f.template operator()<float, std::int64_t>();
  } else {
    if (p.index == IndexKind::int32) f.template operator()<double, std::int32_t>();
    else f.template operator()<double, std::int64_t>();
  }
}

// ---- checks shared by the tests ---------------------------------------------------------------

bool same_value(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  return a == b;
}

/// Exact equality of two CSR matrices (values compared with NaN == NaN), naming the first
/// difference.
template <class Value>
::testing::AssertionResult same_csr(const Csr<Value, std::int64_t>& got,
                                    const Csr<Value, std::int64_t>& want) {
  if (got.rows != want.rows || got.cols != want.cols)
    return ::testing::AssertionFailure() << "shape " << got.rows << "x" << got.cols
                                         << ", expected " << want.rows << "x" << want.cols;
  if (got.row_ptr != want.row_ptr) {
    for (std::size_t i = 0; i < std::min(got.row_ptr.size(), want.row_ptr.size()); ++i)
      if (got.row_ptr[i] != want.row_ptr[i])
        return ::testing::AssertionFailure() << "row_ptr[" << i << "] = " << got.row_ptr[i]
                                             << ", expected " << want.row_ptr[i];
    return ::testing::AssertionFailure() << "row_ptr has " << got.row_ptr.size()
                                         << " entries, expected " << want.row_ptr.size();
  }
  for (std::size_t k = 0; k < want.col_idx.size(); ++k) {
    if (got.col_idx[k] != want.col_idx[k])
      return ::testing::AssertionFailure() << "col_idx[" << k << "] = " << got.col_idx[k]
                                           << ", expected " << want.col_idx[k];
    if (!same_value(got.values[k], want.values[k]))
      return ::testing::AssertionFailure() << "values[" << k << "] (column " << want.col_idx[k]
                                           << ") = " << got.values[k] << ", expected "
                                           << want.values[k];
  }
  if (got.values.size() != want.values.size())
    return ::testing::AssertionFailure() << "values has " << got.values.size()
                                         << " entries, expected " << want.values.size();
  return ::testing::AssertionSuccess();
}

template <class Value>
::testing::AssertionResult close_to(const std::vector<Value>& got, const std::vector<double>& want,
                                    double tol) {
  const double err = reference::relative_norm2_error<Value>(got, want);
  if (err <= tol) return ::testing::AssertionSuccess();
  auto f = ::testing::AssertionFailure();
  f << "relative 2-norm error " << err << " > tolerance " << tol;
  for (std::size_t i = 0; i < std::min(got.size(), want.size()); ++i) {
    const double g = got[i], w = want[i];
    const bool bad = std::isfinite(w) ? !std::isfinite(g) || std::abs(g - w) > tol * (1 + std::abs(w))
                                      : !same_value(g, w);
    if (bad) {
      f << "; first bad entry [" << i << "] = " << g << ", reference " << w;
      break;
    }
  }
  if (got.size() != want.size()) f << "; got " << got.size() << " entries, expected " << want.size();
  return f;
}

template <class Value>
bool bitwise_equal(const std::vector<Value>& a, const std::vector<Value>& b) {
  return a.size() == b.size() &&
         (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(Value)) == 0);
}

/// Runs `fn`, which must throw UnsupportedError whose message names the format.
template <class F>
void expect_unsupported(F&& fn, const std::string& format, const std::string& what) {
  try {
    fn();
    ADD_FAILURE() << what << ": the caps of '" << format
                  << "' say it is not supported, but it did not throw UnsupportedError";
  } catch (const UnsupportedError& e) {
    EXPECT_NE(std::string(e.what()).find("'" + format + "'"), std::string::npos)
        << what << ": the UnsupportedError message does not name the format: " << e.what();
  }
}

template <class Index>
std::int64_t max_length(const std::vector<Index>& ptr) {
  std::int64_t m = 0;
  for (std::size_t i = 1; i < ptr.size(); ++i) m = std::max<std::int64_t>(m, ptr[i] - ptr[i - 1]);
  return m;
}

/// The tolerance for an operation: plain, or scaled by sqrt(L / 1024) when non-deterministic.
template <class Value>
double tolerance_for(bool deterministic, std::int64_t longest) {
  const double t = testing::tolerance<Value>();
  if (deterministic) return t;
  return t * std::max(1.0, std::sqrt(static_cast<double>(longest) / 1024.0));
}

/// Fixture: holds the scenario's canonical input (fresh seed for random scenarios, printed on
/// failure) and builds matrices, recording refusals.
class FormatConformance : public ::testing::TestWithParam<Param> {
 protected:
  void SetUp() override {
    const Param& p = GetParam();
    if (p.backend == Backend::cuda) {
      std::string why;
      if (!testing::gpu_available(&why))
        GTEST_SKIP() << "cuda backend of '" << p.format->name << "' not run: " << why;
    }
    seed_ = testing::fresh_seed();
    input_ = p.scenario->canonical(seed_);
  }

  std::string context() const {
    std::ostringstream os;
    os << "format '" << GetParam().format->name << "', scenario " << GetParam().scenario->name
       << " (" << GetParam().scenario->description << ", " << input_.rows << "x" << input_.cols
       << ", nnz " << input_.nnz() << ")";
    if (GetParam().scenario->random) os << ", seed " << seed_;
    return os.str();
  }

  /// Builds `a` in the parameter's format and backend; nullopt when the format refuses it with
  /// UnsupportedError (recorded). Other exceptions propagate and fail the test.
  template <class Value, class Index>
  std::optional<Matrix<Value>> build(const Csr<Value, Index>& a, const char* what = "A") {
    const Param& p = GetParam();
    try {
      return Matrix<Value>::build(a, p.format->name, p.backend);
    } catch (const UnsupportedError& e) {
      const std::string msg = "format '" + p.format->name + "' refused scenario " +
                              p.scenario->name + " (" + what + "): " + e.what();
      RecordProperty("refused", msg);
      std::cout << "[ REFUSED  ] " << msg << "\n";
      return std::nullopt;
    }
  }

  const BackendCaps& caps() const { return GetParam().format->caps.on(GetParam().backend); }

  /// fn.template operator()<Value, Index>(a, m) for `a`, the scenario's matrix in the
  /// parameter's type pair, and `m`, its build; nothing when the format refuses the build.
  template <class Fn>
  void with_built_input(Fn&& fn) {
    dispatch(GetParam(), [&]<class Value, class Index>() {
      SCOPED_TRACE(context());
      const auto a = convert<Value, Index>(input_);
      auto m = build(a);
      if (m) fn.template operator()<Value, Index>(a, *m);
    });
  }

  std::uint64_t seed_ = 0;
  Csr<double, std::int64_t> input_;
};

// ---- spmv / spmv_t ----------------------------------------------------------------------------

template <class Value, class Index>
void check_products(const Matrix<Value>& m, const Csr<Value, Index>& a, const BackendCaps& caps,
                    const Scenario& s, std::uint64_t seed) {
  const std::string& name = m.format().name;
  for (Op op : {Op::spmv, Op::spmv_t}) {
    SCOPED_TRACE(std::string(to_string(op)));
    const std::int64_t n_in = op == Op::spmv ? a.cols : a.rows;
    const std::int64_t n_out = op == Op::spmv ? a.rows : a.cols;
    const auto x = testing::operand_vector<Value>(n_in, seed + 1, s.integer_values);
    if (!caps.supports(op)) {
      expect_unsupported([&] { (void)testing::apply_spmv(m, op, x); }, name,
                         std::string(to_string(op)));
      continue;
    }
    const bool det = op == Op::spmv ? caps.deterministic_spmv : caps.deterministic_spmv_t;
    const std::int64_t longest =
        op == Op::spmv ? max_length(a.row_ptr) : max_length(to_csc(a).col_ptr);
    const double tol = tolerance_for<Value>(det, longest);
    auto ref = [&](double alpha, double beta, const std::vector<Value>& y0) {
      return op == Op::spmv
                 ? reference::spmv<Value, Index, Value, Value>(a, x, alpha, beta, y0)
                 : reference::spmv_t<Value, Index, Value, Value>(a, x, alpha, beta, y0);
    };
    // (1, 0) on NaN-poisoned y: every output must be written, none read.
    const auto y1 = testing::apply_spmv(m, op, x);
    EXPECT_TRUE(close_to(y1, ref(1, 0, {}), tol)) << "alpha = 1, beta = 0, y poisoned with NaN";
    if (det) {
      const auto again = testing::apply_spmv(m, op, x);
      EXPECT_TRUE(bitwise_equal(y1, again))
          << "caps declare " << to_string(op) << " deterministic but two runs differ bitwise";
    }
    // (0.5, -2) on a random y.
    const auto y0 = testing::operand_vector<Value>(n_out, seed + 2, s.integer_values);
    const auto y2 = testing::apply_spmv(m, op, x, &y0, Value(0.5), Value(-2));
    EXPECT_TRUE(close_to(y2, ref(0.5, -2, y0), tol)) << "alpha = 0.5, beta = -2, y random";
  }
}

TEST_P(FormatConformance, RoundTripAndSpmv) {
  with_built_input([&]<class Value, class Index>(const Csr<Value, Index>& a, Matrix<Value>& m) {
    EXPECT_EQ(m.rows(), a.rows);
    EXPECT_EQ(m.cols(), a.cols);
    EXPECT_EQ(m.nnz(), a.nnz());
    EXPECT_EQ(m.backend(), GetParam().backend);
    EXPECT_EQ(m.format_name(), GetParam().format->name);
    EXPECT_TRUE(same_csr(m.to_csr(), convert<Value, std::int64_t>(a))) << "round trip to_csr()";
    const std::size_t storage = m.storage_bytes();
    if (a.nnz() > 0) EXPECT_GT(storage, 0u) << "storage_bytes() of a matrix with entries";
    for (Op op : {Op::spmv, Op::spmv_t, Op::spmm, Op::add}) {
      if ((op == Op::spmm || op == Op::add) && !caps().supports(op)) continue;
      for (std::int64_t k : {1, 32}) {
        if (k > 1 && op != Op::spmm) continue;
        // A format may store metadata one operation never reads (gcsb-det keeps a plan per
        // operation) and may compress values (bccoo's value table), so the only format-free
        // floor is the dense operands: x read and y written.
        const std::size_t floor =
            op == Op::add ? 0 : dense_operand_bytes(op, m.shape(), k, sizeof(Value));
        EXPECT_GE(m.traffic_bytes(op, k), floor)
            << "traffic_bytes(" << to_string(op) << ", k = " << k << ") below values + operands";
      }
    }
    check_products(m, a, caps(), *GetParam().scenario, seed_);
  });
}

// ---- spmm -------------------------------------------------------------------------------------

TEST_P(FormatConformance, Spmm) {
  with_built_input([&]<class Value, class Index>(const Csr<Value, Index>& a, Matrix<Value>& m) {
    const Scenario& s = *GetParam().scenario;
    if (!caps().supports(Op::spmm)) {
      const auto b = testing::operand_vector<Value>(a.cols * 3, seed_, s.integer_values);
      expect_unsupported([&] { (void)testing::apply_spmm(m, b, 3, DenseLayout::row_major); },
                         m.format().name, "spmm");
      return;
    }
    const double tol = tolerance_for<Value>(caps().deterministic_spmv, max_length(a.row_ptr));
    for (std::int64_t k : {1, 3, 32}) {
      for (DenseLayout layout : {DenseLayout::row_major, DenseLayout::col_major}) {
        SCOPED_TRACE("spmm k = " + std::to_string(k) + ", " + std::string(to_string(layout)) +
                     "-major");
        const auto b = testing::operand_vector<Value>(a.cols * k, seed_ + 3 + k, s.integer_values);
        const auto c1 = testing::apply_spmm(m, b, k, layout);
        const auto want1 = reference::spmm<Value, Index, Value, Value>(a, b, k, layout);
        EXPECT_TRUE(close_to(c1, want1, tol)) << "alpha = 1, beta = 0, C poisoned with NaN";
        if (k == 32) continue;  // the (alpha, beta) epilogue is checked on k = 1 and 3
        const auto c0 = testing::operand_vector<Value>(a.rows * k, seed_ + 4, s.integer_values);
        const auto c2 = testing::apply_spmm(m, b, k, layout, &c0, Value(0.5), Value(-2));
        const auto want2 =
            reference::spmm<Value, Index, Value, Value>(a, b, k, layout, 0.5, -2.0, c0);
        EXPECT_TRUE(close_to(c2, want2, tol)) << "alpha = 0.5, beta = -2, C random";
      }
    }
  });
}

// ---- add --------------------------------------------------------------------------------------

/// Same pattern, values rounded to small integers (NaN/Inf kept) so that αA + βB is exact in any
/// evaluation order, fused or not.
Csr<double, std::int64_t> integer_valued(Csr<double, std::int64_t> a) {
  for (auto& v : a.values)
    if (std::isfinite(v)) v = std::round(v * 4);
  return a;
}

/// A second operand of a's shape: every other entry of a (new values) plus as many new
/// random positions.
Csr<double, std::int64_t> second_operand(const Csr<double, std::int64_t>& a, std::uint64_t seed) {
  Coo<double, std::int64_t> b;
  b.rows = a.rows;
  b.cols = a.cols;
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int> val(-4, 4);
  const auto coo = to_coo(a);
  for (std::size_t k = 0; k < coo.values.size(); k += 2) {
    b.row_idx.push_back(coo.row_idx[k]);
    b.col_idx.push_back(coo.col_idx[k]);
    b.values.push_back(val(rng));
  }
  if (a.rows > 0 && a.cols > 0) {
    std::uniform_int_distribution<std::int64_t> r(0, a.rows - 1), c(0, a.cols - 1);
    const std::size_t extra = std::max<std::size_t>(1, std::min<std::size_t>(coo.values.size() / 2, 20000));
    for (std::size_t i = 0; i < extra; ++i) {
      b.row_idx.push_back(r(rng));
      b.col_idx.push_back(c(rng));
      b.values.push_back(val(rng));
    }
  }
  return to_csr(b);
}

TEST_P(FormatConformance, Add) {
  dispatch(GetParam(), [&]<class Value, class Index>() {
    SCOPED_TRACE(context());
    const auto a = convert<Value, Index>(integer_valued(input_));
    auto ma = build(a);
    if (!ma) return;
    const std::string& name = ma->format().name;
    if (!caps().supports(Op::add)) {
      expect_unsupported([&] { (void)ma->add(*ma, Value(1), Value(1)); }, name, "add");
      return;
    }
    auto check = [&](const Csr<Value, Index>& b, Value alpha, Value beta, const char* what) {
      SCOPED_TRACE(what);
      auto mb = build(b, "B");
      if (!mb) return;
      const Matrix<Value> c = ma->add(*mb, alpha, beta);
      EXPECT_EQ(c.format_name(), name);
      EXPECT_EQ(c.backend(), GetParam().backend);
      const auto want = convert<Value, std::int64_t>(csr_add(a, b, alpha, beta));
      EXPECT_TRUE(same_csr(c.to_csr(), want)) << "add result vs csr_add";
      EXPECT_EQ(c.nnz(), want.nnz());
      if (caps().supports(Op::spmv)) {  // the result is a usable matrix of this format
        const auto x = testing::operand_vector<Value>(c.cols(), seed_ + 5, true);
        const auto ww = convert<Value, Index>(want);
        EXPECT_TRUE(close_to(testing::apply_spmv(c, Op::spmv, x),
                             reference::spmv<Value, Index, Value, Value>(ww, x),
                             testing::tolerance<Value>()))
            << "spmv of the sum";
      }
    };
    check(convert<Value, Index>(second_operand(integer_valued(input_), seed_ + 6)), Value(2),
          Value(-3), "C = 2A - 3B, overlapping patterns");
    check(a, Value(1), Value(-1), "C = A - A: cancellation keeps every entry as a stored zero");
    const auto at = transpose(a);
    if (a.rows == a.cols) {
      check(at, Value(1), Value(1), "C = A + A^T");
    } else if (auto mt = build(at, "A^T")) {
      EXPECT_THROW((void)ma->add(*mt, Value(1), Value(1)), DimensionMismatchError)
          << "adding A^T of a different shape";
    }
  });
}

// ---- index overflow rerun ---------------------------------------------------------------------

TEST_P(FormatConformance, Int32Limit) {
  dispatch(GetParam(), [&]<class Value, class Index>() {
    SCOPED_TRACE(context());
    const std::int64_t biggest = std::max({input_.rows, input_.cols, input_.nnz()});
    if (biggest < 2) return;  // a limit below 1 cannot be set (0 means "no override")
    const auto a = convert<Value, Index>(input_);  // converted before the limit is lowered
    const std::string& name = GetParam().format->name;
    {
      ScopedInt32Limit limit(biggest - 1);
      SCOPED_TRACE("int32 limit lowered to " + std::to_string(biggest - 1));
      if constexpr (std::is_same_v<Index, std::int32_t>) {
        try {
          (void)Matrix<Value>::build(a, name, GetParam().backend);
          ADD_FAILURE() << "building above the int32 limit did not throw IndexOverflowError";
        } catch (const IndexOverflowError& e) {
          const std::string msg = e.what();
          EXPECT_NE(msg.find("int32"), std::string::npos) << msg;
          EXPECT_NE(msg.find("int64"), std::string::npos) << "message should suggest int64: " << msg;
        }
      } else {
        auto m = build(a);
        if (!m) return;
        EXPECT_TRUE(same_csr(m->to_csr(), convert<Value, std::int64_t>(a)))
            << "int64 round trip under a low int32 limit";
        check_products(*m, a, caps(), *GetParam().scenario, seed_);
      }
    }
    if constexpr (std::is_same_v<Index, std::int32_t>) {
      // At the limit exactly the canonical matrix fits; a format whose own arrays (padding,
      // blocks) need larger int32 offsets may still refuse with IndexOverflowError.
      ScopedInt32Limit limit(biggest);
      try {
        if (auto m = build(a)) check_products(*m, a, caps(), *GetParam().scenario, seed_);
      } catch (const IndexOverflowError& e) {
        std::cout << "[  NOTE    ] format '" << name << "' needs more than rows/cols/nnz in int32 ("
                  << GetParam().scenario->name << "): " << e.what() << "\n";
      }
    }
  });
}

std::string param_name(const ::testing::TestParamInfo<Param>& info) { return label(info.param); }

GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(FormatConformance);
INSTANTIATE_TEST_SUITE_P(Conformance, FormatConformance, ::testing::ValuesIn(all_params()),
                         param_name);

// ---- backends a format does not have ----------------------------------------------------------

struct MissingBackend {
  const FormatEntry* format;
  Backend backend;
};
void PrintTo(const MissingBackend& p, std::ostream* os) {
  *os << p.format->name << " on " << to_string(p.backend);
}

class FormatWithoutBackend : public ::testing::TestWithParam<MissingBackend> {};

TEST_P(FormatWithoutBackend, BuildThrowsUnsupportedNamingTheFormat) {
  const MissingBackend& p = GetParam();
  Csr<double, std::int32_t> a;
  a.rows = a.cols = 1;
  a.row_ptr = {0, 1};
  a.col_idx = {0};
  a.values = {3.0};
  expect_unsupported([&] { (void)Matrix<double>::build(a, p.format->name, p.backend); },
                     p.format->name, "build on " + std::string(to_string(p.backend)));
}

std::vector<MissingBackend> missing_backends() {
  std::vector<MissingBackend> v;
  for (const auto& e : registry())
    for (Backend b : {Backend::cpu, Backend::cuda})
      if (!e.caps.on(b).available) v.push_back({&e, b});
  return v;
}

GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(FormatWithoutBackend);
INSTANTIATE_TEST_SUITE_P(Conformance, FormatWithoutBackend, ::testing::ValuesIn(missing_backends()),
                         [](const ::testing::TestParamInfo<MissingBackend>& info) {
                           std::string f = info.param.format->name;
                           std::replace(f.begin(), f.end(), '-', '_');
                           return f + "_" + std::string(to_string(info.param.backend));
                         });

// ---- the scenarios themselves ----------------------------------------------------------------

const Scenario& scenario(std::string_view name) {
  for (const auto& s : testing::scenarios())
    if (s.name == name) return s;
  throw std::logic_error("no scenario " + std::string(name));
}

TEST(ConformanceScenarios, EachScenarioHasTheFeatureItIsNamedFor) {
  const std::uint64_t seed = testing::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::set<std::string> names;
  for (const auto& s : testing::scenarios()) {
    EXPECT_TRUE(names.insert(s.name).second) << "duplicate scenario name " << s.name;
    const auto a = s.canonical(seed);
    EXPECT_NO_THROW(a.validate(s.name)) << s.name;
  }
  auto shape = [&](std::string_view n) {
    const auto a = scenario(n).canonical(seed);
    return std::tuple{a.rows, a.cols, a.nnz()};
  };
  EXPECT_EQ(shape("empty_0x0"), std::tuple(0, 0, 0));
  EXPECT_EQ(shape("one_by_one"), std::tuple(1, 1, 1));
  EXPECT_EQ(shape("no_rows_0x7"), std::tuple(0, 7, 0));
  EXPECT_EQ(shape("no_cols_7x0"), std::tuple(7, 0, 0));
  EXPECT_EQ(shape("all_zero_37x53"), std::tuple(37, 53, 0));
  {
    const auto a = scenario("dense_row_100000").canonical(seed);
    EXPECT_EQ(max_length(a.row_ptr), 100000);
    EXPECT_GT(a.rows, 1);
  }
  {
    const auto a = scenario("power_law_rows").canonical(seed);
    const double mean = static_cast<double>(a.nnz()) / static_cast<double>(a.rows);
    EXPECT_GT(static_cast<double>(max_length(a.row_ptr)), 50 * mean) << "not imbalanced";
  }
  {
    const auto a = scenario("empty_rows_and_cols").canonical(seed);
    const auto t = transpose(a);
    auto empties = [](const std::vector<std::int64_t>& ptr) {
      int n = 0;
      for (std::size_t i = 1; i < ptr.size(); ++i) n += ptr[i] == ptr[i - 1];
      return n;
    };
    EXPECT_GE(empties(a.row_ptr), a.rows / 3);
    EXPECT_GE(empties(t.row_ptr), a.cols / 5);
  }
  {
    const auto coo = scenario("duplicates").make(seed);
    const auto a = to_csr(coo);
    EXPECT_LT(a.col_idx.size(), coo.col_idx.size()) << "no duplicates were summed";
    EXPECT_TRUE(std::count(a.values.begin(), a.values.end(), 0.0) > 0)
        << "no duplicates cancelled to a stored zero";
  }
  {
    const auto a = scenario("explicit_zeros").canonical(seed);
    EXPECT_GT(std::count(a.values.begin(), a.values.end(), 0.0), a.nnz() / 5);
  }
  {
    const auto a = scenario("nan_inf").canonical(seed);
    EXPECT_TRUE(std::any_of(a.values.begin(), a.values.end(), [](double v) { return std::isnan(v); }));
    EXPECT_TRUE(std::any_of(a.values.begin(), a.values.end(), [](double v) { return std::isinf(v); }));
  }
  EXPECT_EQ(std::get<0>(shape("ragged_4097x4099")), 4097);
  EXPECT_EQ(std::get<1>(shape("tall_1000x7")), 7);
  EXPECT_EQ(std::get<0>(shape("wide_7x1000")), 7);
}

// ---- the registry as the conformance suite sees it --------------------------------------------

TEST(ConformanceCoverage, EveryFormatRunsSomewhereAndCudaCasesSayWhyTheySkip) {
  for (const auto& e : registry())
    EXPECT_TRUE(e.caps.cpu.available || e.caps.cuda.available || !cuda_compiled())
        << "format '" << e.name << "' has no backend in a CUDA build: it is never tested";
  bool any_cuda = false;
  for (const auto& e : registry()) any_cuda = any_cuda || e.caps.cuda.available;
  std::string why;
  if (!any_cuda)
    GTEST_SKIP() << "no registered format has a cuda backend in this build ("
                 << (cuda_compiled() ? "CUDA compiled in" : "spmat was built without CUDA")
                 << "): no cuda conformance cases were registered";
  if (!testing::gpu_available(&why))
    GTEST_SKIP() << "cuda conformance cases are registered but skip: " << why;
}

}  // namespace
}  // namespace spmat
