// tests/fuzz/fuzz_matrix_market.cpp — libFuzzer harness of the Matrix Market reader: any input
// gives a valid canonical CSR or a spmat::Error (never a crash, hang, sanitizer report or an
// allocation beyond the memory limit); a matrix read is written back with its field and
// symmetry and must read back the same.
// SPDX-License-Identifier: MIT
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>

#include "spmat/core/csr.hpp"
#include "spmat/io/matrix_market.hpp"
#include "tests/fuzz/fuzz_support.hpp"

namespace {

// Values equal, NaN equal to NaN (a NaN is written "nan" and read back as a NaN).
template <class V>
bool same_values(const std::vector<V>& a, const std::vector<V>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t k = 0; k < a.size(); ++k)
    if (!(a[k] == b[k] || (std::isnan(a[k]) && std::isnan(b[k])))) return false;
  return true;
}

template <class V, class I>
void read_and_round_trip(const std::string& path, const spmat::io::ReadOptions& options) {
  spmat::io::MatrixMarketHeader h;
  spmat::Csr<V, I> a;
  try {
    a = spmat::io::read_matrix_market<V, I>(path, options, &h);
  } catch (const spmat::Error&) {
    return;  // a clear error is a correct answer to malformed input
  }
  try {
    a.validate("fuzzed matrix");
  } catch (const spmat::Error& e) {
    spmat::fuzz::broken(std::string("the reader returned an invalid CSR: ") + e.what());
  }
  const std::string out = spmat::fuzz::scratch_path(".mtx");
  try {
    spmat::io::write_matrix_market(out, a, spmat::io::MmWriteOptions{h.field, h.symmetry});
  } catch (const spmat::InvalidMatrixError&) {
    return;  // e.g. duplicates summed past 2^53, or NaN breaking A == A^T
  }
  const auto b = spmat::io::read_matrix_market<V, I>(out, spmat::io::ReadOptions{});
  std::remove(out.c_str());
  const bool pattern = h.field == spmat::io::MmField::pattern;  // duplicates summed: values lost
  if (b.rows != a.rows || b.cols != a.cols || b.row_ptr != a.row_ptr || b.col_idx != a.col_idx ||
      (!pattern && !same_values(a.values, b.values)))
    spmat::fuzz::broken("a read-write-read round trip changed the matrix");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string path = spmat::fuzz::as_file(data, size);
  spmat::io::ReadOptions options;
  options.lenient = size % 2 == 1;  // both modes, chosen by something the fuzzer varies
  // The default limit lets a 20-byte file declare 5 million empty rows (64 MiB of slack): legal,
  // but seconds per input under ASan, twice over with the round trip. A lower limit keeps the
  // fuzzer fast and still exercises the refusal.
  options.max_memory = std::uint64_t(16) << 20;
  read_and_round_trip<double, std::int32_t>(path, options);
  read_and_round_trip<float, std::int64_t>(path, options);
  return 0;
}
