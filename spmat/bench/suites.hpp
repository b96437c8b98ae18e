// spmat/bench/suites.hpp — the named matrix suites of `spmat bench` (default, small, gpu, cpu).
// SPDX-License-Identifier: MIT
#pragma once
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "spmat/core/types.hpp"

namespace spmat::bench {

struct SuiteInfo {
  std::string name;
  std::string help;
};

/// The built-in suites with one line each, for --help.
const std::vector<SuiteInfo>& suites();

/// The matrix specs of suite `name` on `backend`:
///   default  the gpu suite on cuda, the cpu suite on cpu;
///   gpu      generated matrices of tens of millions of nonzeros (fills an H100) + every
///            bundled real matrix + G3_circuit when it can be found;
///   cpu      a smaller suite that finishes in a couple of minutes on 2 cores;
///   small    a few tiny matrices (seconds; smoke tests);
///   anything else is read as a file listing one spec per line ('#' starts a comment).
/// Throws ParseError for an unknown name that is not a readable file.
std::vector<std::string> suite_specs(std::string_view name, Backend backend);

/// Bundled real matrices (*.mtx.gz) of at most `max_file_bytes` (0 = any size), sorted by name,
/// from $SPMAT_BENCH_MATRICES, else ./bench/matrices. Empty when the folder does not exist.
std::vector<std::string> bundled_matrices(std::size_t max_file_bytes = 0);

/// G3_circuit.mtx.gz from $SPMAT_MATRIX_DIR, else ./data (git-ignored); "" when not found.
std::string find_g3_circuit();

}  // namespace spmat::bench
