// tools/cmd_formats.cpp — `spmat formats`: the registry, printed (never retyped anywhere else).
// SPDX-License-Identifier: MIT
#include <cstdio>
#include <string>

#include "spmat/registry.hpp"
#include "tools/commands.hpp"

namespace spmat::cli {

namespace {
std::string ops(const BackendCaps& c) {
  if (!c.available) return "-";
  std::string s;
  auto add = [&](bool on, const char* name, bool det) {
    if (on) s += std::string(s.empty() ? "" : ",") + name + (det ? "" : "*");
  };
  add(c.spmv, "spmv", c.deterministic_spmv);
  add(c.spmv_t, "spmv_t", c.deterministic_spmv_t);
  add(c.spmm, "spmm", true);
  add(c.add, "add", true);
  return s;
}
}  // namespace

int cmd_formats(int, char**) {
  std::printf("%-16s %-28s %-28s %s\n", "format", "cpu", "cuda", "summary");
  for (const auto& e : registry()) {
    std::printf("%-16s %-28s %-28s %s\n", e.name.c_str(), ops(e.caps.cpu).c_str(),
                ops(e.caps.cuda).c_str(), e.summary.c_str());
    for (const auto& p : e.params)
      std::printf("%16s   option %s (default %s): %s\n", "", p.name.c_str(),
                  p.default_value.c_str(), p.help.c_str());
  }
  std::printf("\n* = not deterministic (floating-point atomics); cuda available at run time: %s\n",
              cuda_available() ? "yes" : "no");
  return 0;
}

}  // namespace spmat::cli
