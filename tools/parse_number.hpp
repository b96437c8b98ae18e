// tools/parse_number.hpp — the number in a command-line flag's value, checked whole.
// SPDX-License-Identifier: MIT
#pragma once
#include <exception>
#include <string>
#include <type_traits>

#include "spmat/core/error.hpp"

namespace spmat::cli {

/// `v` read whole as a T (int, long long or double: std::stoi, stoll, stod) that satisfies
/// `ok`; anything else (no number, trailing characters, out of range, ok false) throws
/// ParseError "<flag> expects <what>, got '<v>'".
template <class T, class Ok>
T parse_number(const std::string& flag, const std::string& v, const std::string& what, Ok ok) {
  std::size_t used = 0;
  T x{};
  try {
    if constexpr (std::is_same_v<T, int>)
      x = std::stoi(v, &used);
    else if constexpr (std::is_same_v<T, long long>)
      x = std::stoll(v, &used);
    else
      x = std::stod(v, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != v.size() || !ok(x)) throw ParseError(flag + " expects " + what + ", got '" + v + "'");
  return x;
}

}  // namespace spmat::cli
