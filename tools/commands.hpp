// tools/commands.hpp — the subcommands of the `spmat` command-line tool.
// SPDX-License-Identifier: MIT
#pragma once

namespace spmat::cli {
// Each takes the arguments after the subcommand name and returns the process exit code.
int cmd_formats(int argc, char** argv);
int cmd_info(int argc, char** argv);
int cmd_convert(int argc, char** argv);
int cmd_bench(int argc, char** argv);
int cmd_compress(int argc, char** argv);
int cmd_model(int argc, char** argv);
int cmd_plan(int argc, char** argv);
}  // namespace spmat::cli
