// tools/cmd_convert.cpp — `spmat convert` (placeholder until its issue lands).
// SPDX-License-Identifier: MIT
#include "spmat/core/error.hpp"
#include "tools/commands.hpp"

namespace spmat::cli {
int cmd_convert(int, char**) { throw UnsupportedError("'spmat convert' is not implemented yet"); }
}  // namespace spmat::cli
