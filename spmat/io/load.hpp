// spmat/io/load.hpp — one entry point for every matrix argument: a generator spec, a binary
// cache or a Matrix Market file.
// SPDX-License-Identifier: MIT
//
//   auto a = spmat::io::load_matrix<double, std::int32_t>("gen:lap2d:100");   // generated
//   auto b = spmat::io::load_matrix<float, std::int64_t>("A.smc");            // binary cache
//   auto c = spmat::io::load_matrix<double, std::int32_t>("G3_circuit.mtx.gz");
//   spmat::io::matrix_name("/x/G3_circuit.mtx.gz") == "G3_circuit"
#pragma once
#include <string>
#include <string_view>

#include "spmat/core/csr.hpp"
#include "spmat/io/matrix_market.hpp"
#include "spmat/io/read_options.hpp"

namespace spmat::io {

/// "gen:..." -> spmat::gen::generate; a file ending in .smc or starting with the cache magic ->
/// read_binary_cache; anything else -> read_matrix_market (.mtx or .mtx.gz, gzip sniffed).
/// "-" is standard input (a cache or Matrix Market, sniffed the same way); pipes are streamed.
/// A missing file gives ParseError "cannot open 'path': No such file or directory".
/// `mm_header`, when given, receives the banner and size line of a Matrix Market input
/// (its size_line stays 0 for the other kinds).
template <class Value, class Index>
Csr<Value, Index> load_matrix(std::string_view spec, const ReadOptions& options = {},
                              MatrixMarketHeader* mm_header = nullptr);

/// A short name for reports: the file name without its directory and .mtx/.mtx.gz/.smc/.gz
/// ("G3_circuit"), or a generator spec as given.
std::string matrix_name(std::string_view spec);

}  // namespace spmat::io

namespace spmat {
using io::load_matrix;
using io::matrix_name;
}  // namespace spmat
