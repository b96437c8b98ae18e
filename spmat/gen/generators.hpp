// spmat/gen/generators.hpp — deterministic matrix generators, addressable by name ("gen:lap2d:2000").
// SPDX-License-Identifier: MIT
#pragma once
#include <string>
#include <string_view>

#include "spmat/core/csr.hpp"

namespace spmat::gen {

/// Builds the matrix named by `spec` (with or without the leading "gen:"), e.g. "gen:lap2d:2000".
/// Deterministic: the same spec (including its seed) gives the same matrix on every machine
/// and with any thread count; the result is canonical CSR. Grammar and the list of generators:
/// describe() and docs/generators.md.
/// Throws ParseError naming the spec, the item and what was expected; IndexOverflowError if
/// too large for Index (before allocating); OutOfMemoryError if the host runs out.
///
/// Example: generate<double, int32_t>("gen:banded:4:1:values=ones") gives the 4×4 tridiagonal
///   row_ptr = {0, 2, 5, 8, 10}, col_idx = {0, 1, 0, 1, 2, 1, 2, 3, 2, 3}, values = ten 1.0.
template <class Value, class Index>
Csr<Value, Index> generate(std::string_view spec);

/// True when `spec` names a generator (starts with "gen:").
inline bool is_generator_spec(std::string_view spec) { return spec.substr(0, 4) == "gen:"; }

/// Help text: one line per generator with its grammar and an example.
std::string describe();

}  // namespace spmat::gen
