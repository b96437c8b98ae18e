// spmat/gen/generators.hpp — deterministic matrix generators, addressable by name ("gen:lap2d:2000").
// SPDX-License-Identifier: MIT
#pragma once
#include <string>
#include <string_view>

#include "spmat/core/csr.hpp"

namespace spmat::gen {

/// Builds the matrix named by `spec` (with or without the leading "gen:"), e.g. "gen:lap2d:2000".
/// Deterministic: the same spec (including its seed) gives the same matrix on every machine.
/// Throws ParseError naming the spec and what was expected; IndexOverflowError if too large
/// for Index.
template <class Value, class Index>
Csr<Value, Index> generate(std::string_view spec);

/// True when `spec` names a generator (starts with "gen:").
inline bool is_generator_spec(std::string_view spec) { return spec.substr(0, 4) == "gen:"; }

/// Help text: one line per generator with its grammar and an example.
std::string describe();

}  // namespace spmat::gen
