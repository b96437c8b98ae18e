// tools/cmd_bench.cpp — `spmat bench` (placeholder until its issue lands).
// SPDX-License-Identifier: MIT
#include "spmat/core/error.hpp"
#include "tools/commands.hpp"

namespace spmat::cli {
int cmd_bench(int, char**) { throw UnsupportedError("'spmat bench' is not implemented yet"); }
}  // namespace spmat::cli
