// spmat/bench/json.cpp — JSON writer and reader for benchmark results.
// SPDX-License-Identifier: MIT
#include "spmat/bench/json.hpp"

#include <charconv>
#include <cmath>
#include <cstdio>

#include "spmat/core/error.hpp"

namespace spmat::bench {

std::string json_number(double d) {
  if (!std::isfinite(d)) return "null";
  if (d == 0) return "0";  // also turns -0 into 0
  char buf[64];
  if (std::nearbyint(d) == d && std::fabs(d) < 9007199254740992.0) {  // integral, below 2^53
    auto [end, ec] = std::to_chars(buf, buf + sizeof buf, static_cast<std::int64_t>(d));
    (void)ec;
    return std::string(buf, end);
  }
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, d);
  (void)ec;
  return std::string(buf, end);
}

Json& Json::set(std::string key, Json value) {
  for (auto& [k, v] : members_)
    if (k == key) {
      v = std::move(value);
      return *this;
    }
  members_.emplace_back(std::move(key), std::move(value));
  return *this;
}

const Json* Json::find(std::string_view key) const {
  for (const auto& [k, v] : members_)
    if (k == key) return &v;
  return nullptr;
}

Json& Json::push(Json value) {
  items_.push_back(std::move(value));
  return *this;
}

namespace {
void escape_to(std::string& out, const std::string& s) {
  out += '"';
  for (unsigned char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (c < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out += buf;
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  out += '"';
}

void newline(std::string& out, int indent, int depth) {
  if (indent < 0) return;
  out += '\n';
  out.append(static_cast<std::size_t>(indent * depth), ' ');
}

// An array or object: `open`, the n elements (element(i) writes element i) one per line at
// depth + 1 when indenting, `close`; "[]" or "{}" when empty.
template <class Element>
void dump_container(std::string& out, char open, char close, std::size_t n, int indent, int depth,
                    Element&& element) {
  out += open;
  if (n == 0) {
    out += close;
    return;
  }
  for (std::size_t i = 0; i < n; ++i) {
    if (i) out += indent < 0 ? ", " : ",";
    newline(out, indent, depth + 1);
    element(i);
  }
  newline(out, indent, depth);
  out += close;
}
}  // namespace

void Json::dump_to(std::string& out, int indent, int depth) const {
  switch (kind_) {
    case Kind::null: out += "null"; return;
    case Kind::boolean: out += bool_ ? "true" : "false"; return;
    case Kind::number: out += json_number(num_); return;
    case Kind::string: escape_to(out, str_); return;
    case Kind::array:
      dump_container(out, '[', ']', items_.size(), indent, depth,
                     [&](std::size_t i) { items_[i].dump_to(out, indent, depth + 1); });
      return;
    case Kind::object:
      dump_container(out, '{', '}', members_.size(), indent, depth, [&](std::size_t i) {
        escape_to(out, members_[i].first);
        out += ": ";
        members_[i].second.dump_to(out, indent, depth + 1);
      });
      return;
  }
}

std::string Json::dump(int indent) const {
  std::string out;
  dump_to(out, indent, 0);
  return out;
}

namespace {
class Parser {
 public:
  explicit Parser(std::string_view t) : t_(t) {}
  Json document() {
    Json v = value();
    skip_ws();
    if (p_ != t_.size()) fail("end of input");
    return v;
  }

 private:
  [[noreturn]] void fail(const char* expected) const {
    throw ParseError("JSON: expected " + std::string(expected) + " at offset " +
                     std::to_string(p_));
  }
  void skip_ws() {
    while (p_ < t_.size() && (t_[p_] == ' ' || t_[p_] == '\n' || t_[p_] == '\r' || t_[p_] == '\t'))
      ++p_;
  }
  bool literal(std::string_view word) {
    if (t_.substr(p_, word.size()) != word) return false;
    p_ += word.size();
    return true;
  }
  Json value() {
    skip_ws();
    if (p_ >= t_.size()) fail("a value");
    const char c = t_[p_];
    if (c == '{') return object();
    if (c == '[') return array();
    if (c == '"') return Json(string());
    if (literal("null")) return Json();
    if (literal("true")) return Json(true);
    if (literal("false")) return Json(false);
    return number();
  }
  Json number() {
    double d = 0;
    auto [end, ec] = std::from_chars(t_.data() + p_, t_.data() + t_.size(), d);
    if (ec != std::errc() || end == t_.data() + p_) fail("a value");
    p_ = static_cast<std::size_t>(end - t_.data());
    return Json(d);
  }
  std::string string() {
    ++p_;  // opening quote
    std::string s;
    while (true) {
      if (p_ >= t_.size()) fail("a closing '\"'");
      const char c = t_[p_++];
      if (c == '"') return s;
      if (c != '\\') {
        s += c;
        continue;
      }
      if (p_ >= t_.size()) fail("an escape");
      const char e = t_[p_++];
      switch (e) {
        case '"': s += '"'; break;
        case '\\': s += '\\'; break;
        case '/': s += '/'; break;
        case 'b': s += '\b'; break;
        case 'f': s += '\f'; break;
        case 'n': s += '\n'; break;
        case 'r': s += '\r'; break;
        case 't': s += '\t'; break;
        case 'u': {
          if (p_ + 4 > t_.size()) fail("four hex digits");
          unsigned cp = 0;
          auto [end, ec] = std::from_chars(t_.data() + p_, t_.data() + p_ + 4, cp, 16);
          if (ec != std::errc() || end != t_.data() + p_ + 4) fail("four hex digits");
          p_ += 4;
          // UTF-8 encode (surrogate pairs are not combined: results never contain them).
          if (cp < 0x80) {
            s += static_cast<char>(cp);
          } else if (cp < 0x800) {
            s += static_cast<char>(0xC0 | (cp >> 6));
            s += static_cast<char>(0x80 | (cp & 0x3F));
          } else {
            s += static_cast<char>(0xE0 | (cp >> 12));
            s += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
            s += static_cast<char>(0x80 | (cp & 0x3F));
          }
          break;
        }
        default: fail("a valid escape");
      }
    }
  }
  Json array() {
    ++p_;
    Json a = Json::array();
    skip_ws();
    if (literal("]")) return a;
    while (true) {
      a.push(value());
      skip_ws();
      if (literal(",")) continue;
      if (literal("]")) return a;
      fail("',' or ']'");
    }
  }
  Json object() {
    ++p_;
    Json o = Json::object();
    skip_ws();
    if (literal("}")) return o;
    while (true) {
      skip_ws();
      if (p_ >= t_.size() || t_[p_] != '"') fail("a key string");
      std::string key = string();
      skip_ws();
      if (!literal(":")) fail("':'");
      o.set(std::move(key), value());
      skip_ws();
      if (literal(",")) continue;
      if (literal("}")) return o;
      fail("',' or '}'");
    }
  }

  std::string_view t_;
  std::size_t p_ = 0;
};
}  // namespace

Json Json::parse(std::string_view text) { return Parser(text).document(); }

}  // namespace spmat::bench
