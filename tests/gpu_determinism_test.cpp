// tests/gpu_determinism_test.cpp — every CUDA kernel whose capabilities promise a deterministic
// product gives the same bits 100 times in a row.
// SPDX-License-Identifier: MIT
//
// GpuDeterminism/Repeats.HundredRunsBitwise/<format>: for every registered format with a CUDA
// spmv (dashes become underscores), fp32 and fp64, int32 indices, on three matrices — uniform
// random rows, R-MAT (skewed rows and columns) and one with a row of 60,000 entries among short
// ones (the long-row paths that combine partial sums across blocks) — each of spmv and spmv_t
// that caps.cuda declares deterministic runs 100 times on the same operands (output
// NaN-poisoned before each run, beta = 0, then once more with beta = -0.5 on a fixed y): every
// result must equal the first bit for bit. The first result is also checked against the fp64
// reference, so a kernel cannot pass by being deterministically wrong. A matrix the format
// refuses (UnsupportedError at build) is skipped with a line on stdout; a format that declares
// neither product deterministic is skipped with a message. Without a GPU every case skips.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "spmat/config.hpp"
#include "spmat/core/reference.hpp"
#include "spmat/gen/generators.hpp"
#include "spmat/matrix.hpp"
#include "spmat/registry.hpp"
#include "tests/support/test_support.hpp"
#if SPMAT_WITH_CUDA
#include "spmat/cuda/buffer.hpp"
#endif

namespace spmat {
namespace {

#if SPMAT_WITH_CUDA

constexpr int kRuns = 100;

/// Uniform rows, R-MAT, and short rows with one 60,000-entry row.
std::vector<std::pair<std::string, Csr<double, std::int64_t>>> test_matrices() {
  std::vector<std::pair<std::string, Csr<double, std::int64_t>>> v;
  v.emplace_back("random_k", gen::generate<double, std::int64_t>("gen:random_k:3000:12"));
  v.emplace_back("rmat", gen::generate<double, std::int64_t>("gen:rmat:12:8"));
  Csr<double, std::int64_t> a;
  a.rows = 2000;
  a.cols = 70000;
  a.row_ptr.assign(1, 0);
  std::uint64_t state = 12345;
  auto next = [&state] {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return state >> 33;
  };
  for (std::int64_t r = 0; r < a.rows; ++r) {
    const std::int64_t len = r == 777 ? 60000 : 1 + static_cast<std::int64_t>(next() % 9);
    const std::int64_t step = a.cols / len;
    for (std::int64_t j = 0; j < len; ++j) {
      a.col_idx.push_back(j * step + static_cast<std::int64_t>(next() % static_cast<std::uint64_t>(step)));
      a.values.push_back(static_cast<double>(static_cast<std::int64_t>(next() % 2001) - 1000) / 997.0);
    }
    a.row_ptr.push_back(static_cast<std::int64_t>(a.col_idx.size()));
  }
  v.emplace_back("long_row", std::move(a));
  return v;
}

template <class Value>
std::vector<Value> random_vector(std::int64_t n, std::uint64_t seed) {
  std::vector<Value> x(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) {
    seed = seed * 6364136223846793005ull + 1442695040888963407ull;
    x[static_cast<std::size_t>(i)] =
        static_cast<Value>(static_cast<double>(seed >> 11) / 9007199254740992.0 * 2.0 - 1.0);
  }
  return x;
}

template <class Value>
bool same_bits(const std::vector<Value>& a, const std::vector<Value>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(Value)) == 0;
}

/// Relative 2-norm error of `got` against the fp64 `want`.
template <class Value>
double relative_error(const std::vector<Value>& got, const std::vector<double>& want) {
  double num = 0, den = 0;
  for (std::size_t i = 0; i < want.size(); ++i) {
    const double d = static_cast<double>(got[i]) - want[i];
    num += d * d;
    den += want[i] * want[i];
  }
  return std::sqrt(num / (den > 0 ? den : 1));
}

/// Runs op kRuns times with beta = 0 and once more with beta != 0 twice; returns failures.
template <class Value>
std::vector<std::string> check_format(const FormatEntry& e, Op op,
                                      const std::string& matrix_name,
                                      const Csr<double, std::int64_t>& a64) {
  std::vector<std::string> failures;
  const Csr<Value, std::int32_t> a = convert<Value, std::int32_t>(a64);
  std::optional<Matrix<Value>> m;
  try {
    m.emplace(Matrix<Value>::build(a, e.name, Backend::cuda));
  } catch (const UnsupportedError& ex) {
    std::cout << "[ REFUSED  ] " << e.name << " refused " << matrix_name << ": " << ex.what()
              << "\n";
    return failures;
  }
  m->prepare(op);
  const std::int64_t n_in = op == Op::spmv ? a.cols : a.rows;
  const std::int64_t n_out = op == Op::spmv ? a.rows : a.cols;
  const std::vector<Value> x = random_vector<Value>(n_in, 7);
  const std::vector<Value> y0 = random_vector<Value>(n_out, 11);
  cuda::DeviceBuffer<Value> dx(x, "determinism x"), dy(static_cast<std::size_t>(n_out), "determinism y");
  auto run = [&](Value beta) {
    if (beta == Value(0))
      dy.fill_bytes(0xFF);
    else
      dy.upload(y0);
    if (op == Op::spmv)
      m->spmv(std::span<const Value>(dx.span()), dy.span(), Value(1), beta);
    else
      m->spmv_t(std::span<const Value>(dx.span()), dy.span(), Value(1), beta);
    return dy.download();
  };
  const std::string what = e.name + " " + std::string(to_string(op)) + " on " + matrix_name;
  for (const Value beta : {Value(0), Value(-0.5)}) {
    const std::vector<Value> first = run(beta);
    std::vector<double> want =
        op == Op::spmv ? reference::spmv<Value, std::int32_t, Value, Value>(a, std::span<const Value>(x))
                       : reference::spmv_t<Value, std::int32_t, Value, Value>(a, std::span<const Value>(x));
    for (std::size_t i = 0; i < want.size(); ++i) want[i] += static_cast<double>(beta) * y0[i];
    const double tol = sizeof(Value) == 4 ? 1e-5 : 1e-12;
    const double err = relative_error(first, want);
    if (!(err <= tol))
      failures.push_back(what + ": first result off the reference by " + std::to_string(err));
    const int runs = beta == Value(0) ? kRuns : 10;
    for (int i = 1; i < runs; ++i)
      if (!same_bits(run(beta), first)) {
        failures.push_back(what + " (beta " + std::to_string(static_cast<double>(beta)) +
                           "): run " + std::to_string(i + 1) + " differs bitwise from run 1");
        break;
      }
  }
  return failures;
}

class Repeats : public testing::GpuFormatTest {
 protected:
  Repeats() : GpuFormatTest("determinism") {}
};

TEST_P(Repeats, HundredRunsBitwise) {
  const FormatEntry* e = nullptr;
  for (const auto& f : registry())
    if (f.name == GetParam()) e = &f;
  ASSERT_NE(e, nullptr);
  std::vector<Op> ops;
  if (e->caps.cuda.supports(Op::spmv) && e->caps.cuda.deterministic_spmv) ops.push_back(Op::spmv);
  if (e->caps.cuda.supports(Op::spmv_t) && e->caps.cuda.deterministic_spmv_t)
    ops.push_back(Op::spmv_t);
  if (ops.empty()) GTEST_SKIP() << GetParam() << " declares no deterministic CUDA product";
  std::vector<std::string> failures;
  for (const auto& [name, a] : test_matrices())
    for (Op op : ops) {
      for (auto& f : check_format<float>(*e, op, name, a)) failures.push_back("fp32 " + f);
      for (auto& f : check_format<double>(*e, op, name, a)) failures.push_back("fp64 " + f);
    }
  std::string report;
  for (const auto& f : failures) report += "\n  " + f;
  EXPECT_TRUE(failures.empty()) << failures.size() << " failures:" << report;
}

GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(Repeats);
INSTANTIATE_TEST_SUITE_P(GpuDeterminism, Repeats,
                         ::testing::ValuesIn(testing::cuda_formats_with(Op::spmv)),
                         [](const auto& info) { return testing::test_name(info.param); });

#else

TEST(GpuDeterminism, NeedsCuda) { GTEST_SKIP() << "spmat was built without CUDA"; }

#endif  // SPMAT_WITH_CUDA

}  // namespace
}  // namespace spmat
