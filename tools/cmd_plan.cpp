// tools/cmd_plan.cpp — `spmat plan`: which format the planner picks for a matrix, and why.
// SPDX-License-Identifier: MIT
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>

#include "spmat/bench/json.hpp"
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
    "  --json              print the statistics and the plan as JSON\n"
    "\n"
    "Prints the matrix statistics, the choice per operation with its predicted (and, with\n"
    "--tune, measured) time, the reason, and every candidate ranked.\n";

bench::Json to_json(const std::string& spec, const FormatPlan& p) {
  using bench::Json;
  const MatrixStats& s = p.stats;
  Json st = Json::object();
  st.set("rows", s.rows).set("cols", s.cols).set("nnz", s.nnz).set("mean_row", s.mean_row);
  st.set("max_row", s.max_row).set("row_cv", s.row_cv).set("empty_rows", s.empty_rows);
  st.set("heavy_share", s.heavy_share).set("long_share", s.long_share);
  st.set("col_spread", s.col_spread).set("sectors_per_nnz", s.sectors_per_nnz);
  st.set("shifted_rows", s.shifted_rows).set("ell_fill", s.ell_fill).set("slice_fill", s.slice_fill);
  st.set("max_col", s.max_col).set("col_cv", s.col_cv).set("col_heavy_share", s.col_heavy_share);
  st.set("col_long_share", s.col_long_share).set("empty_cols", s.empty_cols);
  auto num = [](double v) { return std::isnan(v) ? Json() : Json(v); };
  Json choices = Json::array();
  for (const auto& c : p.choices) {
    Json j = Json::object();
    j.set("op", to_string(c.op)).set("format", c.format).set("transposed", c.transposed);
    j.set("predicted_ms", num(c.predicted_ms)).set("measured_ms", num(c.measured_ms));
    j.set("setup_ms", num(c.setup_ms));
    choices.push(std::move(j));
  }
  Json cands = Json::array();
  for (const auto& c : p.candidates) {
    Json j = Json::object();
    j.set("op", to_string(c.op)).set("format", c.format).set("transposed", c.transposed);
    j.set("predicted_ms", num(c.predicted_ms)).set("measured_ms", num(c.measured_ms));
    j.set("bytes", c.bytes).set("setup_ms", num(c.setup_ms)).set("note", c.note);
    cands.push(std::move(j));
  }
  Json out = Json::object();
  out.set("matrix", spec).set("backend", to_string(p.backend)).set("precision", p.precision);
  out.set("level", p.level == PlanLevel::tune ? "tune" : "auto").set("stats", std::move(st));
  out.set("choices", std::move(choices)).set("candidates", std::move(cands));
  out.set("reason", p.reason).set("plan_ms", p.plan_ms).set("tune_ms", p.tune_ms);
  out.set("setup_ms", p.setup_ms());
  out.set("from_cache", p.from_cache);
  return out;
}

template <class Value>
int run(const std::string& spec, const PlanRequest& r, bool json) {
  const auto a = io::load_matrix<Value, std::int64_t>(spec);
  FormatPlan p;
  if (a.rows <= index_max<std::int32_t>() && a.cols <= index_max<std::int32_t>() &&
      a.nnz() <= index_max<std::int32_t>())
    p = plan(convert<Value, std::int32_t>(a, spec), r);
  else
    p = plan(a, r);
  if (json) std::printf("%s\n", to_json(spec, p).dump().c_str());
  else std::fputs(p.describe().c_str(), stdout);
  return 0;
}

}  // namespace

int cmd_plan(int argc, char** argv) {
  std::string spec, precision = "fp64";
  FormatOptions o;
  std::string ops = "spmv,spmv_t";
  Backend backend = cuda_available() ? Backend::cuda : Backend::cpu;
  bool tune = false, json = false;
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
    else if (a == "--json") json = true;
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
  if (precision == "fp64") return run<double>(spec, r, json);
  if (precision == "fp32") return run<float>(spec, r, json);
  throw ParseError("plan: --precision " + precision + " is not fp64 or fp32");
}

}  // namespace spmat::cli
