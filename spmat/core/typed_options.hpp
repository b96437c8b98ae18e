// spmat/core/typed_options.hpp — a format's build options as a struct, declared once.
// SPDX-License-Identifier: MIT
//
// A format declares its options as a plain struct whose member initializers are the defaults,
// plus one field table (name, member, parser, help). Everything else comes from that table:
//
//   struct CsrOptions {
//     static constexpr const char* format = "csr";
//     CsrKernel kernel = CsrKernel::automatic;
//     int tpr = 0;
//     static const OptionTable<CsrOptions>& fields();
//     bool operator==(const CsrOptions&) const = default;
//   };
//   const OptionTable<CsrOptions>& CsrOptions::fields() {      // in the format's .cpp
//     static const OptionTable<CsrOptions> t{
//         enum_option("kernel", &CsrOptions::kernel, {{"auto", CsrKernel::automatic}, ...}, "..."),
//         int_choice_option("tpr", &CsrOptions::tpr, {0, 2, 4, 8, 16, 32}, "...")};
//     return t;
//   }
//
//   parse_options<CsrOptions>(o)      strings -> struct (ParseError names format, key, value and
//                                     what is accepted); keys the table lacks are left alone:
//                                     Matrix::build rejects unknown keys against the registry
//                                     entry's params before any format sees them
//   to_format_options(opts)           struct -> strings (every field), for plans and JSON
//   option_params<CsrOptions>()       the registry's ParamInfo list; each default is the
//                                     struct's default rendered by the field's own printer
//
// Parsers: int_option (range, optional step), int_choice_option (list of values), double_option
// (lower bound, inf accepted), bool_option (0 / 1), enum_option and choice_option (list of
// words), layout_option (row / col), string_option (free text). A std::optional member is
// spelt "auto" when empty, for defaults derived from other options or from the matrix. Cross-field rules (sell: sigma a
// multiple of C) stay in the format's build. docs/design.md lists the formats declared so.
#pragma once
#include <algorithm>
#include <charconv>
#include <concepts>
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "spmat/core/error.hpp"
#include "spmat/core/options.hpp"
#include "spmat/core/types.hpp"
#include "spmat/registry.hpp"

namespace spmat {

/// One option of the struct `Opts`: its key, help text, and how to read and print it.
template <class Opts>
struct OptionField {
  std::string name;
  std::string help;
  /// Sets the member from `value`; throws ParseError naming `format`, the key and the value.
  std::function<void(Opts&, std::string_view format, const std::string& value)> parse;
  /// The member as the string `parse` reads back.
  std::function<std::string(const Opts&)> render;
};

template <class Opts>
using OptionTable = std::vector<OptionField<Opts>>;

/// A struct declared with typed options: a format name and a field table.
template <class Opts>
concept TypedOptions = std::default_initializable<Opts> && requires {
  { Opts::format } -> std::convertible_to<std::string_view>;
  { Opts::fields() } -> std::convertible_to<const OptionTable<Opts>&>;
};

namespace options_detail {
/// "<format>: <key>=<value> <what>", the form of every option error.
[[noreturn]] inline void bad_value(std::string_view format, const std::string& key,
                                   const std::string& value, const std::string& what) {
  throw ParseError(std::string(format) + ": " + key + "=" + value + " " + what);
}

/// `s` read by FormatOptions' own integer (T = std::int64_t) or number (T = double) parser;
/// empty when it is not one.
template <class T>
std::optional<T> to_number(const std::string& s) {
  FormatOptions o;
  o.set("v", s);
  try {
    if constexpr (std::is_same_v<T, double>)
      return o.get_double("v", 0);
    else
      return o.get_int("v", 0);
  } catch (const ParseError&) {
    return std::nullopt;
  }
}

/// The shortest text that reads back to exactly `v` ("1.2", "8", "inf").
inline std::string number(double v) {
  char buf[64];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, r.ptr);
}

inline std::string join(const std::vector<std::string>& names) {
  std::string s;
  for (std::size_t i = 0; i < names.size(); ++i)
    s += (i == 0 ? "" : i + 1 == names.size() ? " or " : ", ") + names[i];
  return s;
}

template <class T>
struct is_optional : std::false_type {};
template <class T>
struct is_optional<std::optional<T>> : std::true_type {};
}  // namespace options_detail

namespace options_detail {
/// An integer member (any integer type, or std::optional of one: empty is spelt "auto") whose
/// values pass `ok`; `what` completes "<format>: <key>=<value> " in the error.
template <class Opts, class T>
OptionField<Opts> integer_field(std::string name, T Opts::*member,
                                std::function<bool(std::int64_t)> ok, std::string what,
                                std::string help) {
  constexpr bool opt = is_optional<T>::value;
  return {name, std::move(help),
          [=](Opts& o, std::string_view format, const std::string& s) {
            if constexpr (opt)
              if (s == "auto") {
                o.*member = std::nullopt;
                return;
              }
            const auto v = to_number<std::int64_t>(s);
            if (!v || !ok(*v)) bad_value(format, name, s, what);
            if constexpr (opt)
              o.*member = static_cast<typename T::value_type>(*v);
            else
              o.*member = static_cast<T>(*v);
          },
          [member](const Opts& o) -> std::string {
            if constexpr (opt)
              return (o.*member) ? std::to_string(*(o.*member)) : std::string("auto");
            else
              return std::to_string(o.*member);
          }};
}
}  // namespace options_detail

/// An integer member (any integer type, or std::optional of one: empty is spelt "auto") in
/// [lo, hi] (hi = the int64 maximum: no upper bound) and a multiple of `step`.
template <class Opts, class T>
OptionField<Opts> int_option(std::string name, T Opts::*member, std::int64_t lo, std::int64_t hi,
                             std::int64_t step, std::string help) {
  const std::string range = hi == std::numeric_limits<std::int64_t>::max()
                                ? ">= " + std::to_string(lo)
                                : "in " + std::to_string(lo) + ".." + std::to_string(hi);
  std::string what = "is not " +
                     (step > 1 ? "a multiple of " + std::to_string(step) : std::string("an integer")) +
                     " " + range;
  if (options_detail::is_optional<T>::value) what += " or auto";
  return options_detail::integer_field(
      std::move(name), member,
      [=](std::int64_t v) { return v >= lo && v <= hi && v % step == 0; }, std::move(what),
      std::move(help));
}

/// The same without the multiple rule.
template <class Opts, class T>
OptionField<Opts> int_option(std::string name, T Opts::*member, std::int64_t lo, std::int64_t hi,
                             std::string help) {
  return int_option(std::move(name), member, lo, hi, 1, std::move(help));
}

/// An integer member (or std::optional of one: empty is spelt "auto") that takes one of
/// `allowed`.
template <class Opts, class T>
OptionField<Opts> int_choice_option(std::string name, T Opts::*member,
                                    std::vector<std::int64_t> allowed, std::string help) {
  std::vector<std::string> names;
  for (auto a : allowed) names.push_back(std::to_string(a));
  if (options_detail::is_optional<T>::value) names.push_back("auto");
  return options_detail::integer_field(
      std::move(name), member,
      [allowed](std::int64_t v) { return std::find(allowed.begin(), allowed.end(), v) != allowed.end(); },
      "is not " + options_detail::join(names), std::move(help));
}

/// A double member >= lo (> lo when `strict`); "inf" is accepted where the range allows it.
template <class Opts>
OptionField<Opts> double_option(std::string name, double Opts::*member, double lo, bool strict,
                                std::string help) {
  const std::string what = std::string("is not a number ") + (strict ? "> " : ">= ") +
                           options_detail::number(lo);
  return {name, std::move(help),
          [=](Opts& o, std::string_view format, const std::string& s) {
            const auto v = options_detail::to_number<double>(s);
            // Written so that NaN fails too.
            if (!v || !(strict ? *v > lo : *v >= lo)) options_detail::bad_value(format, name, s, what);
            o.*member = *v;
          },
          [member](const Opts& o) { return options_detail::number(o.*member); }};
}

/// A bool member, spelt 0 or 1.
template <class Opts>
OptionField<Opts> bool_option(std::string name, bool Opts::*member, std::string help) {
  return {name, std::move(help),
          [=](Opts& o, std::string_view format, const std::string& s) {
            if (s != "0" && s != "1") options_detail::bad_value(format, name, s, "is not 0 or 1");
            o.*member = s == "1";
          },
          [member](const Opts& o) { return std::string(o.*member ? "1" : "0"); }};
}

/// A member of any type taking one of a list of spelt values (an enum, or a std::string
/// restricted to a few words: pass {{"auto", "auto"}, ...} or use choice_option).
template <class Opts, class T>
OptionField<Opts> enum_option(std::string name, T Opts::*member,
                              std::vector<std::pair<std::string, T>> values, std::string help) {
  std::vector<std::string> names;
  for (const auto& v : values) names.push_back(v.first);
  const std::string what = "is not " + options_detail::join(names);
  return {name, std::move(help),
          [=](Opts& o, std::string_view format, const std::string& s) {
            for (const auto& [spelling, v] : values)
              if (spelling == s) {
                o.*member = v;
                return;
              }
            options_detail::bad_value(format, name, s, what);
          },
          [member, values](const Opts& o) {
            for (const auto& [spelling, v] : values)
              if (v == o.*member) return spelling;
            return std::string("?");
          }};
}

/// A DenseLayout member: row or col (row_major and col_major accepted too; printed row / col).
template <class Opts>
OptionField<Opts> layout_option(std::string name, DenseLayout Opts::*member, std::string help) {
  return enum_option(std::move(name), member,
                     {{"row", DenseLayout::row_major},
                      {"col", DenseLayout::col_major},
                      {"row_major", DenseLayout::row_major},
                      {"col_major", DenseLayout::col_major}},
                     std::move(help));
}

/// A std::string member restricted to `allowed`.
template <class Opts>
OptionField<Opts> choice_option(std::string name, std::string Opts::*member,
                                const std::vector<std::string>& allowed, std::string help) {
  std::vector<std::pair<std::string, std::string>> values;
  for (const auto& a : allowed) values.emplace_back(a, a);
  return enum_option(std::move(name), member, std::move(values), std::move(help));
}

/// A free-text std::string member (checked by the build, if at all).
template <class Opts>
OptionField<Opts> string_option(std::string name, std::string Opts::*member, std::string help) {
  return {name, std::move(help),
          [member](Opts& o, std::string_view, const std::string& s) { o.*member = s; },
          [member](const Opts& o) { return o.*member; }};
}

/// The options of `o` that the table of `Opts` declares, read into a default `Opts`; keys the
/// table lacks are ignored (see the header comment). `format` names the format in errors.
template <TypedOptions Opts>
Opts parse_options(const FormatOptions& o, std::string_view format = Opts::format) {
  Opts r;
  for (const auto& f : Opts::fields())
    if (auto it = o.all().find(f.name); it != o.all().end()) f.parse(r, format, it->second);
  return r;
}

/// Every field of `opts` as strings (parse_options reads them back to an equal struct).
template <TypedOptions Opts>
FormatOptions to_format_options(const Opts& opts) {
  FormatOptions o;
  for (const auto& f : Opts::fields()) o.set(f.name, f.render(opts));
  return o;
}

/// The registry's parameter list: name, the struct's default as a string, help.
template <TypedOptions Opts>
std::vector<ParamInfo> option_params() {
  const Opts defaults{};
  std::vector<ParamInfo> v;
  for (const auto& f : Opts::fields()) v.push_back({f.name, f.render(defaults), f.help});
  return v;
}

}  // namespace spmat
