// tests/fuzz/fuzz_formats.cpp — libFuzzer harness of the formats: a small CSR made from the
// input is built in every registered CPU format; to_csr must give it back exactly and spmv /
// spmv_t must match the serial reference exactly (small integer values: every sum is exact in
// any order). A format may refuse a matrix only with UnsupportedError (a refusal by design).
// SPDX-License-Identifier: MIT
#include <cstdint>
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

// Input layout: rows-1, cols-1 (each mod 64), then (row, col, value) triples; values are
// small signed integers, 0 included (explicit zeros).
spmat::Csr<double, std::int32_t> matrix_from(const std::uint8_t* data, std::size_t size) {
  spmat::Coo<double, std::int32_t> c;
  c.rows = size > 0 ? 1 + data[0] % 64 : 1;
  c.cols = size > 1 ? 1 + data[1] % 64 : 1;
  for (std::size_t k = 2; k + 2 < size; k += 3) {
    c.row_idx.push_back(data[k] % c.rows);
    c.col_idx.push_back(data[k + 1] % c.cols);
    c.values.push_back(static_cast<double>(static_cast<std::int8_t>(data[k + 2]) % 16));
  }
  return spmat::to_csr(c);
}

void check(const spmat::Matrix<double>& m, const spmat::Csr<double, std::int32_t>& a, spmat::Op op,
           const std::string& name) {
  if (!m.supports(op)) return;
  const bool t = op == spmat::Op::spmv_t;
  std::vector<double> x(static_cast<std::size_t>(t ? a.rows : a.cols));
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<double>(int(i % 7) - 3);
  std::vector<double> y(static_cast<std::size_t>(t ? a.cols : a.rows), -1.0);
  const std::span<const double> xs(x);
  const std::vector<double> want = t ? spmat::reference::spmv_t<double, std::int32_t, double, double>(a, xs)
                                     : spmat::reference::spmv<double, std::int32_t, double, double>(a, xs);
  if (t) m.spmv_t(x, y);
  else m.spmv(x, y);
  if (y != want) spmat::fuzz::broken(name + ": " + std::string(spmat::to_string(op)) + " differs from the reference");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto a = matrix_from(data, size);
  for (const auto& e : spmat::registry()) {
    if (!e.caps.cpu.available) continue;
    std::optional<spmat::Matrix<double>> m;
    // "tune" keeps its decisions on disk: not one file per fuzzed matrix.
    const spmat::FormatOptions options =
        e.name == "tune" ? spmat::FormatOptions().set("cache", "0") : spmat::FormatOptions();
    try {
      m.emplace(spmat::Matrix<double>::build(a, e.name, spmat::Backend::cpu, options));
    } catch (const spmat::UnsupportedError&) {
      continue;
    } catch (const spmat::Error& err) {
      spmat::fuzz::broken(e.name + ": build failed on a valid matrix: " + err.what());
    }
    if (m->to_csr() != spmat::convert<double, std::int64_t>(a))
      spmat::fuzz::broken(e.name + ": to_csr does not give the matrix back");
    try {
      check(*m, a, spmat::Op::spmv, e.name);
      check(*m, a, spmat::Op::spmv_t, e.name);
    } catch (const spmat::UnsupportedError&) {
    }
  }
  return 0;
}
