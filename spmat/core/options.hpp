// spmat/core/options.hpp — per-format build parameters as key=value pairs ("C=32,sigma=256").
// SPDX-License-Identifier: MIT
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include "spmat/core/error.hpp"

namespace spmat {

/// Build parameters of a format. Each format reads the keys it knows and declares them in its
/// registry entry (name, default, meaning); `check_known` rejects typos with a clear error.
class FormatOptions {
 public:
  FormatOptions() = default;
  /// Parses "key=value,key=value". Throws ParseError on a malformed pair.
  static FormatOptions parse(std::string_view text);

  FormatOptions& set(std::string key, std::string value) {
    values_[std::move(key)] = std::move(value);
    return *this;
  }
  bool has(const std::string& key) const { return values_.count(key) != 0; }
  std::int64_t get_int(const std::string& key, std::int64_t fallback) const;
  double get_double(const std::string& key, double fallback) const;
  std::string get_string(const std::string& key, std::string fallback) const;
  const std::map<std::string, std::string>& all() const { return values_; }
  /// "key=value,..." in key order ("" when empty).
  std::string to_string() const;

 private:
  std::map<std::string, std::string> values_;
};

}  // namespace spmat
