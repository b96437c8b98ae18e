// tests/fuzz/fuzz_formats.cpp — libFuzzer harness of the formats: a small CSR made from the
// input is built in the registered CPU format the input names; to_csr must give it back
// exactly, and spmv, spmv_t and spmm must match the serial reference exactly (small integer
// values and operands: every sum is exact in any order). A format may refuse a matrix only with
// UnsupportedError (a refusal by design).
// SPDX-License-Identifier: MIT
//
// One format per input, not every format: a build under ASan costs about as much as the rest of
// an input, so an input per format lets libFuzzer spend its time where the coverage is, about
// 25 times more inputs per second (tests/fuzz/README.md), and the input's first byte lets it
// steer towards a format like any other mutation.
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "spmat/core/csr.hpp"
#include "spmat/core/reference.hpp"
#include "spmat/matrix.hpp"
#include "spmat/registry.hpp"
#include "tests/fuzz/fuzz_support.hpp"

namespace {

// Input layout:
//   byte 0    the format: an index into the registered formats with a CPU backend, in
//             registry order (modulo their number)
//   byte 1    rows - 1 in the low 6 bits; the high 2 bits: OpenMP threads of the kernels
//             (0 or 1: one, 2: two, 3: three), so that the per-thread splits are fuzzed too
//   byte 2    cols - 1 in the low 6 bits; bit 6: spmm with k = 3 instead of 1; bit 7: spmm in
//             column-major layout
//   then      (row, col, value) triples: row and col modulo the shape, value a small signed
//             integer (0 included: explicit zeros); duplicates are summed
struct Input {
  std::size_t format = 0;
  int threads = 1;
  std::int64_t k = 1;
  spmat::DenseLayout layout = spmat::DenseLayout::row_major;
  spmat::Csr<double, std::int32_t> a;
};

Input parse(const std::uint8_t* data, std::size_t size, std::size_t formats) {
  Input in;
  auto byte = [&](std::size_t i) -> unsigned { return i < size ? data[i] : 0u; };
  in.format = byte(0) % formats;
  in.threads = std::max(1u, byte(1) >> 6);
  in.k = (byte(2) & 0x40) ? 3 : 1;
  in.layout = (byte(2) & 0x80) ? spmat::DenseLayout::col_major : spmat::DenseLayout::row_major;
  spmat::Coo<double, std::int32_t> c;
  c.rows = 1 + (byte(1) & 63);
  c.cols = 1 + (byte(2) & 63);
  for (std::size_t k = 3; k + 2 < size; k += 3) {
    c.row_idx.push_back(data[k] % c.rows);
    c.col_idx.push_back(data[k + 1] % c.cols);
    c.values.push_back(static_cast<double>(static_cast<std::int8_t>(data[k + 2]) % 16));
  }
  in.a = spmat::to_csr(c);
  return in;
}

/// Small integers in [-3, 3], different per position and seed.
std::vector<double> operand(std::int64_t n, int seed) {
  std::vector<double> v(static_cast<std::size_t>(n));
  for (std::size_t i = 0; i < v.size(); ++i)
    v[i] = static_cast<double>(static_cast<int>((i * 5 + static_cast<std::size_t>(seed)) % 7) - 3);
  return v;
}

void expect_equal(const std::vector<double>& got, const std::vector<double>& want,
                  const std::string& what) {
  // Bitwise equal values; NaN (poison left unwritten) never compares equal.
  if (got != want) spmat::fuzz::broken(what + " differs from the reference");
}

using Ref = spmat::Csr<double, std::int32_t>;

/// Runs `op` where the caps have it; an UnsupportedError at run time (the planners refuse an
/// operation they were not planned for) skips it.
template <class F>
void where_supported(const spmat::Matrix<double>& m, spmat::Op op, F&& run) {
  if (!m.supports(op)) return;
  try {
    run();
  } catch (const spmat::UnsupportedError&) {
  }
}

void check_products(const spmat::Matrix<double>& m, const Input& in, const std::string& name) {
  const Ref& a = in.a;
  where_supported(m, spmat::Op::spmv, [&] {
    // y = A x on NaN poison: every output written, none read (beta = 0).
    const auto x = operand(a.cols, 1);
    std::vector<double> y(static_cast<std::size_t>(a.rows), NAN);
    m.spmv(x, y);
    expect_equal(y, spmat::reference::spmv<double, std::int32_t, double, double>(a, x),
                 name + ": spmv");
  });
  where_supported(m, spmat::Op::spmv_t, [&] {
    // y = 2 Aᵀ x - y0.
    const auto x = operand(a.rows, 2);
    const auto y0 = operand(a.cols, 3);
    std::vector<double> y = y0;
    m.spmv_t(x, y, 2.0, -1.0);
    expect_equal(y,
                 spmat::reference::spmv_t<double, std::int32_t, double, double>(
                     a, x, 2.0, -1.0, std::span<const double>(y0)),
                 name + ": spmv_t");
  });
  where_supported(m, spmat::Op::spmm, [&] {
    const auto b = operand(a.cols * in.k, 4);
    std::vector<double> c(static_cast<std::size_t>(a.rows * in.k), NAN);
    m.spmm(b, c, in.k, in.layout);
    expect_equal(c,
                 spmat::reference::spmm<double, std::int32_t, double, double>(a, b, in.k,
                                                                              in.layout),
                 name + ": spmm (k = " + std::to_string(in.k) +
                     (in.layout == spmat::DenseLayout::row_major ? ", row-major)"
                                                                 : ", column-major)"));
  });
}

std::vector<const spmat::FormatEntry*> cpu_formats() {
  std::vector<const spmat::FormatEntry*> v;
  for (const auto& e : spmat::registry())
    if (e.caps.cpu.available) v.push_back(&e);
  return v;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  // Idle OpenMP threads sleep instead of spinning: a campaign runs one fuzzer per core, and
  // spinning threads would take the cores of the others. Set before OpenMP starts.
  setenv("OMP_WAIT_POLICY", "passive", 0);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const std::vector<const spmat::FormatEntry*> formats = cpu_formats();
  const Input in = parse(data, size, formats.size());
  const spmat::FormatEntry& e = *formats[in.format];
  omp_set_num_threads(in.threads);
  // "tune" with the smallest budget times no candidate beyond the model's choice, so that what
  // it builds, and any failure found through it, does not depend on timing noise; and it keeps
  // no decision on disk (not a file per fuzzed matrix).
  const spmat::FormatOptions options =
      e.name == "tune" ? spmat::FormatOptions().set("cache", "0").set("budget_ms", "1e-9")
                       : spmat::FormatOptions();
  std::optional<spmat::Matrix<double>> m;
  try {
    m.emplace(spmat::Matrix<double>::build(in.a, e.name, spmat::Backend::cpu, options));
  } catch (const spmat::UnsupportedError&) {
    return 0;
  } catch (const spmat::Error& err) {
    spmat::fuzz::broken(e.name + ": build failed on a valid matrix: " + err.what());
  }
  if (m->to_csr() != spmat::convert<double, std::int64_t>(in.a))
    spmat::fuzz::broken(e.name + ": to_csr does not give the matrix back");
  check_products(*m, in, e.name);
  return 0;
}
