// spmat/bench/json.hpp — a small JSON value (insertion-ordered objects), writer and reader.
// SPDX-License-Identifier: MIT
//
// Enough JSON for benchmark results: no third-party dependency. Numbers are doubles (integers
// up to 2^53 print without a fraction); NaN and ±Inf have no JSON spelling and print as null.
//
//   Json r = Json::object();
//   r.set("format", "csr").set("time_ms", 0.25).set("error", nullptr);
//   r.dump(2)   // "{\n  \"format\": \"csr\",\n  \"time_ms\": 0.25,\n  \"error\": null\n}"
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace spmat::bench {

class Json {
 public:
  enum class Kind { null, boolean, number, string, array, object };

  Json() = default;
  Json(std::nullptr_t) {}
  Json(bool b) : kind_(Kind::boolean), bool_(b) {}
  Json(double d) : kind_(Kind::number), num_(d) {}
  Json(int v) : Json(static_cast<double>(v)) {}
  Json(long v) : Json(static_cast<double>(v)) {}
  Json(long long v) : Json(static_cast<double>(v)) {}
  Json(unsigned long v) : Json(static_cast<double>(v)) {}
  Json(unsigned long long v) : Json(static_cast<double>(v)) {}
  Json(std::string s) : kind_(Kind::string), str_(std::move(s)) {}
  Json(std::string_view s) : Json(std::string(s)) {}
  Json(const char* s) : Json(std::string(s)) {}

  static Json array() { Json j; j.kind_ = Kind::array; return j; }
  static Json object() { Json j; j.kind_ = Kind::object; return j; }
  /// Parses JSON text; throws ParseError naming the offset and what was expected.
  static Json parse(std::string_view text);

  Kind kind() const { return kind_; }
  bool is_null() const { return kind_ == Kind::null; }
  bool is_number() const { return kind_ == Kind::number; }
  bool is_string() const { return kind_ == Kind::string; }
  bool is_object() const { return kind_ == Kind::object; }
  bool is_array() const { return kind_ == Kind::array; }
  bool as_bool() const { return bool_; }
  double as_number() const { return num_; }
  const std::string& as_string() const { return str_; }

  /// Object: sets `key` (replacing an existing value in place, else appending). Returns *this.
  Json& set(std::string key, Json value);
  /// Object: the value of `key`, or nullptr when absent.
  const Json* find(std::string_view key) const;
  /// Array: appends.
  Json& push(Json value);

  std::vector<Json>& items() { return items_; }
  const std::vector<Json>& items() const { return items_; }
  std::vector<std::pair<std::string, Json>>& members() { return members_; }
  const std::vector<std::pair<std::string, Json>>& members() const { return members_; }

  /// Serialises; indent < 0 gives one line, otherwise pretty-printed with `indent` spaces.
  std::string dump(int indent = 2) const;

 private:
  void dump_to(std::string& out, int indent, int depth) const;
  Kind kind_ = Kind::null;
  bool bool_ = false;
  double num_ = 0;
  std::string str_;
  std::vector<Json> items_;
  std::vector<std::pair<std::string, Json>> members_;
};

/// Shortest text that reads back as the same double ("0.1", "20000000", "1e-300"); null if
/// not finite.
std::string json_number(double d);

}  // namespace spmat::bench
