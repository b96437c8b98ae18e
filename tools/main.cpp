// tools/main.cpp — `spmat`: dispatch to subcommands; every error is printed, never a crash.
// SPDX-License-Identifier: MIT
#include <cstdio>
#include <cstring>
#include <exception>

#include "spmat/core/error.hpp"
#include "tools/commands.hpp"

namespace {
struct Command {
  const char* name;
  const char* help;
  int (*run)(int, char**);
};
const Command kCommands[] = {
    {"plan", "which format and kernel to use for a matrix and operations, and why",
     spmat::cli::cmd_plan},
    {"formats", "list registered formats with capabilities and options", spmat::cli::cmd_formats},
    {"info", "read a matrix (file or gen:spec) and print its statistics", spmat::cli::cmd_info},
    {"convert", "convert between .mtx, .mtx.gz and the binary cache (.smc)", spmat::cli::cmd_convert},
    {"bench", "benchmark formats x operations x matrices (see spmat bench --help)",
     spmat::cli::cmd_bench},
    {"compress", "BRO space savings of the index data (paper Tables 3-5)", spmat::cli::cmd_compress},
    {"model", "tiled-SpMM performance model of a matrix: inputs, bounds, decision", spmat::cli::cmd_model},
};

void usage() {
  std::printf("usage: spmat <command> [args]\n\ncommands:\n");
  for (const auto& c : kCommands) std::printf("  %-9s %s\n", c.name, c.help);
  std::printf("\nmatrix arguments are .mtx / .mtx.gz / .smc files or generator specs (gen:lap2d:2000);\n"
              "`spmat info --generators` lists the generators.\n");
}
}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || !std::strcmp(argv[1], "-h") || !std::strcmp(argv[1], "--help")) {
    usage();
    return argc < 2 ? 2 : 0;
  }
  for (const auto& c : kCommands) {
    if (std::strcmp(argv[1], c.name) != 0) continue;
    try {
      return c.run(argc - 2, argv + 2);
    } catch (const spmat::Error& e) {
      std::fprintf(stderr, "spmat %s: error: %s\n", c.name, e.what());
      return 1;
    } catch (const std::exception& e) {
      std::fprintf(stderr, "spmat %s: internal error: %s\n", c.name, e.what());
      return 3;
    }
  }
  std::fprintf(stderr, "spmat: unknown command '%s'\n\n", argv[1]);
  usage();
  return 2;
}
