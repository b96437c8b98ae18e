// tools/cmd_info.cpp — `spmat info` (placeholder until its issue lands).
// SPDX-License-Identifier: MIT
#include "spmat/core/error.hpp"
#include "tools/commands.hpp"

namespace spmat::cli {
int cmd_info(int, char**) { throw UnsupportedError("'spmat info' is not implemented yet"); }
}  // namespace spmat::cli
