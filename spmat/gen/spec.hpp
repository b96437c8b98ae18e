// spmat/gen/spec.hpp — the generator spec grammar: parsing, the table of generators, checked
// argument access with messages that name the spec, the item and what was expected.
// SPDX-License-Identifier: MIT
//
// Grammar:  gen:<name>[:<positional>]...[:<key>=<value>]...
//   positionals come first, in the generator's order; key=value items come last, any order,
//   each key at most once. Dimensions are "<n>" (square) or "<m>x<n>" where the generator
//   accepts rectangles. Integers are plain decimal; reals use C syntax (0.05, 5e-2).
#pragma once
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "spmat/gen/rng.hpp"

namespace spmat::gen::detail {

/// One generator of the table: what describe() prints and what the parser checks.
struct GeneratorInfo {
  std::string_view name;
  std::string_view grammar;  ///< e.g. "gen:lap2d:<n>"
  std::string_view summary;  ///< one short phrase
  std::string_view example;  ///< a spec that works, e.g. "gen:lap2d:1000"
  int min_args = 0;          ///< positional arguments required
  int max_args = 0;          ///< positional arguments accepted
  std::string_view keys;     ///< accepted keys, space separated ("seed values")
};

/// Every generator, in the order describe() lists them.
std::span<const GeneratorInfo> generator_table();

/// A spec split into its parts (no checking beyond the shape of the grammar).
struct Spec {
  std::string text;  ///< the spec as given (used verbatim in messages)
  std::string name;
  std::vector<std::string> args;
  std::vector<std::pair<std::string, std::string>> keys;
};

/// Splits `spec` (with or without "gen:"); throws ParseError on an empty name, an empty item,
/// a positional item after a key=value item, or a repeated key.
Spec split_spec(std::string_view spec);

/// Rows × columns.
struct Dims {
  std::int64_t rows = 0;
  std::int64_t cols = 0;
};

/// Checked access to a spec's arguments against its table entry. The constructor checks the
/// number of positionals and that every key is accepted; the getters check each value.
class Args {
 public:
  Args(const Spec& spec, const GeneratorInfo& info);

  const std::string& text() const { return spec_.text; }
  bool has(std::size_t pos) const { return pos < spec_.args.size(); }
  /// Integer positional in [lo, hi].
  std::int64_t integer(std::size_t pos, std::string_view what, std::int64_t lo,
                       std::int64_t hi) const;
  /// Real positional in [lo, hi].
  double real(std::size_t pos, std::string_view what, double lo, double hi) const;
  /// "<n>" (n×n) or, when `rectangular`, also "<m>x<n>"; each in [0, hi].
  Dims dims(std::size_t pos, std::string_view what, bool rectangular, std::int64_t hi) const;

  std::int64_t key_integer(std::string_view key, std::int64_t dflt, std::int64_t lo,
                           std::int64_t hi) const;
  double key_real(std::string_view key, double dflt, double lo, double hi) const;
  /// seed=N, any unsigned 64-bit integer; default 0.
  std::uint64_t seed() const;
  /// values=uniform|ones|int; default uniform.
  ValueKind values() const;

  /// Throws ParseError "<spec>: <message>; expected <grammar> (e.g. <example>)".
  [[noreturn]] void fail(const std::string& message) const;

 private:
  const std::string* find_key(std::string_view key) const;
  const Spec& spec_;
  const GeneratorInfo& info_;
};

/// rows = a·b (·c) with overflow refused: IndexOverflowError naming the spec.
std::int64_t checked_product(std::string_view spec, std::string_view what,
                             std::initializer_list<std::int64_t> factors);

}  // namespace spmat::gen::detail
