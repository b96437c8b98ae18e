// tests/fuzz/fuzz_generator_spec.cpp — libFuzzer harness of the generator spec parser: any text
// gives a valid matrix or a spmat::Error. The generators make matrices as large as they are
// asked to (gen:lap2d:100000 is 10^10 rows on purpose), so a spec with a number above 12, or
// `gen:ideal` without its size (8192 rows by default), is only split, not generated: small
// sizes still reach every generator's argument checks and its construction.
// SPDX-License-Identifier: MIT
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "spmat/core/csr.hpp"
#include "spmat/gen/generators.hpp"
#include "spmat/gen/spec.hpp"
#include "tests/fuzz/fuzz_support.hpp"

namespace {

// Whether every number in the text is small (runs of digits, '.', 'e', '+', '-' read by strtod).
bool small_numbers(const std::string& s) {
  for (std::size_t i = 0; i < s.size();) {
    const auto numeric = [](char c) { return (c >= '0' && c <= '9') || c == '.'; };
    if (!numeric(s[i])) {
      ++i;
      continue;
    }
    std::size_t j = i;
    while (j < s.size() && (numeric(s[j]) || s[j] == 'e' || s[j] == 'E' ||
                            ((s[j] == '+' || s[j] == '-') && (s[j - 1] == 'e' || s[j - 1] == 'E'))))
      ++j;
    const double v = std::strtod(s.substr(i, j - i).c_str(), nullptr);
    if (!(std::fabs(v) <= 12)) return false;
    i = j;
  }
  const auto lower = [&] {
    std::string t(s);
    for (auto& c : t) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
    return t;
  }();
  return lower.find("inf") == std::string::npos && lower.find("nan") == std::string::npos &&
         lower.find("0x") == std::string::npos;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string spec = "gen:" + std::string(reinterpret_cast<const char*>(data), size);
  try {
    const auto parts = spmat::gen::detail::split_spec(spec);
    if (!small_numbers(spec) || (parts.name == "ideal" && parts.args.empty())) return 0;
    const auto a = spmat::gen::generate<double, std::int32_t>(spec);
    a.validate(spec);
  } catch (const spmat::InvalidMatrixError& e) {
    spmat::fuzz::broken(std::string("a generator made an invalid matrix: ") + e.what());
  } catch (const spmat::Error&) {
  }
  return 0;
}
