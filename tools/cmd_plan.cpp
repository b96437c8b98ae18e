// tools/cmd_plan.cpp — `spmat plan`: which format the planner picks for a matrix, and why.
// SPDX-License-Identifier: MIT
#include <cstdio>
#include <cstring>
#include <string>

#include "spmat/io/load.hpp"
#include "spmat/plan/plan.hpp"
#include "spmat/registry.hpp"
#include "tools/commands.hpp"

namespace spmat::cli {

namespace {

constexpr const char* kUsage =
    "usage: spmat plan <matrix> [options]\n"
    "  <matrix>            .mtx / .mtx.gz / .smc file, or a generator spec (gen:lap2d:2000)\n"
    "  --ops a,b           operations to plan: spmv, spmv_t, spmm, add (default spmv,spmv_t)\n"
    "  --k N               spmm: dense columns (default 32)\n"
    "  --layout row|col    spmm: layout of B and C (default row)\n"
    "  --calls N           expected calls of each operation (default: many; build not weighed)\n"
    "  --backend cpu|cuda  (default: cuda when a GPU is usable, else cpu)\n"
    "  --precision fp64|fp32  (default fp64)\n"
    "  --memory BYTES      device bytes the matrix may take (limits a stored transpose)\n"
    "  --deterministic     only kernels with bitwise-identical results run to run\n"
    "  --transpose auto|store|native   spmv_t strategy (default auto)\n"
    "  --tune              also build and time the best candidates (needs the backend present)\n"
    "  --budget-ms X       tune: time budget (default 100)\n"
    "  --no-cache          tune: neither read nor write the plan cache\n"
    "\n"
    "Prints the matrix statistics, the choice per operation with its predicted (and, with\n"
    "--tune, measured) time, the reason, and every candidate ranked.\n";

template <class Value>
int run(const std::string& spec, const PlanRequest& r) {
  const auto a = io::load_matrix<Value, std::int64_t>(spec);
  if (a.rows <= index_max<std::int32_t>() && a.cols <= index_max<std::int32_t>() &&
      a.nnz() <= index_max<std::int32_t>()) {
    const auto a32 = convert<Value, std::int32_t>(a, spec);
    std::fputs(plan(a32, r).describe().c_str(), stdout);
  } else {
    std::fputs(plan(a, r).describe().c_str(), stdout);
  }
  return 0;
}

}  // namespace

int cmd_plan(int argc, char** argv) {
  std::string spec, precision = "fp64";
  FormatOptions o;
  std::string ops = "spmv,spmv_t";
  Backend backend = cuda_available() ? Backend::cuda : Backend::cpu;
  bool tune = false;
  for (int i = 0; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw ParseError("plan: " + a + " needs a value");
      return argv[++i];
    };
    if (a == "-h" || a == "--help") {
      std::fputs(kUsage, stdout);
      return 0;
    } else if (a == "--ops") ops = value();
    else if (a == "--k") o.set("k", value());
    else if (a == "--layout") o.set("layout", value());
    else if (a == "--calls") o.set("calls", value());
    else if (a == "--backend") backend = parse_backend(value());
    else if (a == "--precision") precision = value();
    else if (a == "--memory") o.set("memory", value());
    else if (a == "--deterministic") o.set("deterministic", "1");
    else if (a == "--transpose") o.set("transpose", value());
    else if (a == "--tune") tune = true;
    else if (a == "--budget-ms") o.set("budget_ms", value());
    else if (a == "--no-cache") o.set("cache", "0");
    else if (!a.empty() && a[0] == '-') throw ParseError("plan: unknown option " + a + "\n" + kUsage);
    else if (spec.empty()) spec = a;
    else throw ParseError("plan: one matrix at a time (got '" + spec + "' and '" + a + "')");
  }
  if (spec.empty()) {
    std::fputs(kUsage, stderr);
    return 2;
  }
  for (char& c : ops)
    if (c == ',') c = '+';
  o.set("ops", ops);
  // The automatic level needs no device (it plans for an H100 when none is present); tuning
  // times kernels, so it does.
  if (tune && backend == Backend::cuda && !cuda_available())
    throw UnsupportedError("plan: --tune on cuda needs a usable CUDA GPU, and none was found");
  const PlanRequest r =
      PlanRequest::from_options(o, backend, tune ? PlanLevel::tune : PlanLevel::automatic);
  if (precision == "fp64") return run<double>(spec, r);
  if (precision == "fp32") return run<float>(spec, r);
  throw ParseError("plan: --precision " + precision + " is not fp64 or fp32");
}

}  // namespace spmat::cli
