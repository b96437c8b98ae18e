// spmat/core/options.cpp — parsing of FormatOptions.
// SPDX-License-Identifier: MIT
#include "spmat/core/options.hpp"

#include <charconv>

namespace spmat {

FormatOptions FormatOptions::parse(std::string_view text) {
  FormatOptions o;
  while (!text.empty()) {
    const auto comma = text.find(',');
    const std::string_view item = text.substr(0, comma);
    const auto eq = item.find('=');
    if (eq == std::string_view::npos || eq == 0)
      throw ParseError("format option '" + std::string(item) + "' is not of the form key=value");
    o.set(std::string(item.substr(0, eq)), std::string(item.substr(eq + 1)));
    if (comma == std::string_view::npos) break;
    text.remove_prefix(comma + 1);
  }
  return o;
}

std::int64_t FormatOptions::get_int(const std::string& key, std::int64_t fallback) const {
  auto it = values_.find(key);
  if (it == values_.end()) return fallback;
  std::int64_t v = 0;
  const auto& s = it->second;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size())
    throw ParseError("format option " + key + "=" + s + ": expected an integer");
  return v;
}

double FormatOptions::get_double(const std::string& key, double fallback) const {
  auto it = values_.find(key);
  if (it == values_.end()) return fallback;
  try {
    std::size_t used = 0;
    const double v = std::stod(it->second, &used);
    if (used == it->second.size()) return v;
  } catch (const std::exception&) {
  }
  throw ParseError("format option " + key + "=" + it->second + ": expected a number");
}

std::string FormatOptions::get_string(const std::string& key, std::string fallback) const {
  auto it = values_.find(key);
  return it == values_.end() ? fallback : it->second;
}

std::string FormatOptions::to_string() const {
  std::string s;
  for (const auto& [k, v] : values_) s += (s.empty() ? "" : ",") + k + "=" + v;
  return s;
}

}  // namespace spmat
