// tools/cmd_model.cpp — `spmat model`: the tiled-SpMM performance model of a matrix:
// every model input, the intensities of Eqs. 2–6, the row-wise kernel's bounds, and the decision.
// SPDX-License-Identifier: MIT
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>

#include "spmat/bench/json.hpp"
#include "spmat/config.hpp"
#include "spmat/core/error.hpp"
#include "spmat/io/load.hpp"
#include "spmat/model/intensity.hpp"
#include "spmat/registry.hpp"
#include "tools/commands.hpp"
#include "tools/parse_number.hpp"
#if SPMAT_WITH_CUDA
#include "spmat/cuda/buffer.hpp"
#endif

namespace spmat::cli {

namespace {

constexpr const char* kUsage =
    "usage: spmat model <matrix> [--k 64] [--precision fp32|fp64] [--index int32|int64]\n"
    "                   [--layout row|col] [--device h200|h100|a100] [--bandwidth-gbs X]\n"
    "                   [--peak-gflops X] [--l2-mib X] [--sms N] [--panel-rows R]\n"
    "                   [--as-run OPTIONS] [--json PATH]\n"
    "\n"
    "Prints the inputs of the tiled-SpMM model (mu, sigma, rho, Z, C_miss, L, U), the naive,\n"
    "algorithmic, all-miss and optimistic intensities (paper Eqs. 2-6) of the four variants\n"
    "{baseline, segmented} x {in order, reordered}, the row-wise kernel's predicted time with its\n"
    "all-miss / optimistic bounds, and the variant the `tiled` format runs by default.\n"
    "\n"
    "  <matrix>            .mtx / .mtx.gz / .smc file or generator spec (gen:lap2d:1000)\n"
    "  --k N               dense columns K (default 64)\n"
    "  --precision P       fp32 (default) or fp64 (peak halved)\n"
    "  --index I           int32 (default) or int64\n"
    "  --layout L          row (default) or col: layout of B and C (C_miss of the paper kernel)\n"
    "  --device D          device numbers when no GPU is present (default h200:\n"
    "                      4800 GB/s, 66900 GFLOP/s fp32, 50 MiB L2, 132 SMs)\n"
    "  --bandwidth-gbs X   DRAM bandwidth (overrides the device's)\n"
    "  --peak-gflops X     fp32 peak (overrides the device's)\n"
    "  --l2-mib X          L2 size in MiB (overrides)\n"
    "  --sms N             SM count (overrides)\n"
    "  --panel-rows R      rows per warp of the panel kernel (kernel=panel, default 4)\n"
    "  --as-run OPTIONS    also predict one row-wise configuration as it ran, e.g.\n"
    "                      variant=segmented,segsize=64,reorder=on,kt=16 (JSON key as_run)\n"
    "  --json PATH         also write the report as JSON\n"
    "With a GPU, the SM count and L2 size come from it, and bandwidth/peak from its name\n"
    "(H200, H100, A100) unless given by the flags.\n";

struct Flags {
  std::string spec, json, device = "h200", precision = "fp32", index = "int32", layout = "row", as_run;
  std::int64_t k = 64, panel_rows = 4;
  double bandwidth = 0, peak = 0, l2_mib = 0;
  int sms = 0;
};

double parse_positive(const std::string& flag, const std::string& v) {
  return parse_number<double>(flag, v, "a positive number", [](double x) { return x > 0; });
}

Flags parse_flags(int argc, char** argv) {
  Flags f;
  for (int i = 0; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg.rfind("--", 0) != 0) {
      if (!f.spec.empty()) throw ParseError("more than one matrix given ('" + f.spec + "', '" + arg + "')");
      f.spec = arg;
      continue;
    }
    if (i + 1 >= argc) throw ParseError(arg + " needs a value (see spmat model --help)");
    const std::string v = argv[++i];
    if (arg == "--k") {
      const double k = parse_positive("--k", v);
      if (k != static_cast<double>(static_cast<std::int64_t>(k))) throw ParseError("--k expects an integer >= 1, got '" + v + "'");
      f.k = static_cast<std::int64_t>(k);
    } else if (arg == "--precision") {
      if (v != "fp32" && v != "fp64") throw ParseError("--precision expects fp32 or fp64, got '" + v + "'");
      f.precision = v;
    } else if (arg == "--index") {
      if (v != "int32" && v != "int64") throw ParseError("--index expects int32 or int64, got '" + v + "'");
      f.index = v;
    } else if (arg == "--layout") {
      if (v != "row" && v != "col") throw ParseError("--layout expects row or col, got '" + v + "'");
      f.layout = v;
    } else if (arg == "--device") {
      model::device_by_name(v);
      f.device = v;
    } else if (arg == "--bandwidth-gbs") {
      f.bandwidth = parse_positive(arg, v);
    } else if (arg == "--peak-gflops") {
      f.peak = parse_positive(arg, v);
    } else if (arg == "--l2-mib") {
      f.l2_mib = parse_positive(arg, v);
    } else if (arg == "--sms") {
      f.sms = static_cast<int>(parse_positive(arg, v));
    } else if (arg == "--panel-rows") {
      f.panel_rows = static_cast<std::int64_t>(parse_positive(arg, v));
    } else if (arg == "--as-run") {
      f.as_run = v;
    } else if (arg == "--json") {
      f.json = v;
    } else {
      throw ParseError("unknown option " + arg + " (see spmat model --help)");
    }
  }
  if (f.spec.empty()) throw ParseError("no matrix given (see spmat model --help)");
  return f;
}

/// Device numbers: the GPU's (name → table, SMs, L2) when present, then the flags.
model::DeviceModel resolve_device(const Flags& f, std::string* source) {
  model::DeviceModel d = model::device_by_name(f.device);
  *source = "table:" + f.device;
#if SPMAT_WITH_CUDA
  if (cuda_available()) {
    const auto info = cuda::device_info();
    if (info.name.find("H200") != std::string::npos) d = model::DeviceModel::h200();
    else if (info.name.find("H100") != std::string::npos) d = model::DeviceModel::h100();
    else if (info.name.find("A100") != std::string::npos) d = model::DeviceModel::a100();
    d.name = info.name;
    d.sm_count = info.sm_count;
    d.l2_bytes = static_cast<double>(info.l2_bytes);
    *source = "gpu";
  }
#endif
  if (f.bandwidth > 0) d.bandwidth_gbs = f.bandwidth, *source += "+flags";
  if (f.peak > 0) d.peak_gflops = f.peak, *source += "+flags";
  if (f.l2_mib > 0) d.l2_bytes = f.l2_mib * 1024 * 1024, *source += "+flags";
  if (f.sms > 0) d.sm_count = f.sms, *source += "+flags";
  return d;
}

bench::Json bound_json(const model::Bound& b) {
  bench::Json j = bench::Json::object();
  j.set("intensity", b.intensity).set("gflops", b.gflops).set("time_ms", b.seconds * 1e3);
  return j;
}

bench::Json rows_json(const model::RowsTraffic& t, double flops) {
  bench::Json j = bench::Json::object();
  j.set("kt", t.kt).set("tiles", t.tiles).set("bytes", t.total).set("a_bytes", t.a_bytes)
      .set("b_bytes", t.b_bytes).set("c_bytes", t.c_bytes)
      .set("intensity", t.total > 0 ? flops / t.total : 0.0)
      .set("time_ms", t.seconds * 1e3).set("gflops", t.seconds > 0 ? flops / t.seconds / 1e9 : 0.0)
      .set("l1_bytes", t.l1_bytes).set("l2_bytes", t.l2_bytes).set("dram_ms", t.dram_seconds * 1e3)
      .set("l1_ms", t.l1_seconds * 1e3).set("l2_ms", t.l2_seconds * 1e3)
      .set("latency_ms", t.latency_seconds * 1e3);
  return j;
}

/// "variant=segmented,segsize=64,reorder=on,kt=16" → (segsize, reorder, kt); unknown keys ignored.
void parse_as_run(const std::string& opts, std::int64_t* segsize, bool* reorder, std::int64_t* kt) {
  *segsize = 0, *reorder = false, *kt = 0;
  std::size_t pos = 0;
  while (pos <= opts.size()) {
    const std::size_t end = std::min(opts.find(',', pos), opts.size());
    const std::string kv = opts.substr(pos, end - pos);
    const std::size_t eq = kv.find('=');
    if (eq != std::string::npos) {
      const std::string key = kv.substr(0, eq), val = kv.substr(eq + 1);
      if (key == "segsize") *segsize = static_cast<std::int64_t>(parse_positive("--as-run segsize", val));
      else if (key == "kt") *kt = static_cast<std::int64_t>(parse_positive("--as-run kt", val));
      else if (key == "reorder") *reorder = val == "on";
      else if (key == "variant" && val == "baseline") *segsize = 0;
    }
    pos = end + 1;
  }
}

template <class Value, class Index>
int run(const Flags& f) {
  const auto a = io::load_matrix<Value, Index>(f.spec);
  std::string source;
  const auto dev = resolve_device(f, &source);
  const DenseLayout layout = f.layout == "row" ? DenseLayout::row_major : DenseLayout::col_major;
  const model::TileParams tile{};
  const auto rep = model::evaluate(a, f.k, layout, tile, dev);
  auto rows = model::decide_rows(a, f.k, dev, {}, {}, 256, f.panel_rows);
  if (layout == DenseLayout::col_major) {  // the panel kernel and the strided walk are row-major only
    rows.kernel = "rows";
    rows.stride = false;
  }
  const double flops = 2.0 * static_cast<double>(a.nnz()) * static_cast<double>(f.k);
  const auto& base = rep.variants[0].stats;
  const auto& pick = rows.variants[rows.chosen];
  const double peak = dev.peak_gflops * (sizeof(Value) == 8 ? 0.5 : 1.0);

  std::printf("matrix      %s  (%lld x %lld, %lld nonzeros)\n", io::matrix_name(f.spec).c_str(),
              static_cast<long long>(a.rows), static_cast<long long>(a.cols), static_cast<long long>(a.nnz()));
  std::printf("case        K = %lld, %s, %s, %s-major B and C\n", static_cast<long long>(f.k),
              f.precision.c_str(), f.index.c_str(), f.layout.c_str());
  std::printf("device      %s: %.0f GB/s, %.0f GFLOP/s (%s), L2 %.0f MiB, %d SMs [%s]\n", dev.name.c_str(),
              dev.bandwidth_gbs, peak, f.precision.c_str(), dev.l2_bytes / 1048576.0, dev.sm_count, source.c_str());
  std::printf("\ninputs (paper kernel, R = %d, %lld rows/panel, %lld B smem)\n", tile.r,
              static_cast<long long>(tile.panel_rows), static_cast<long long>(tile.smem_bytes));
  std::printf("  mu %.4g  sigma %.4g  sigma/mu %.4g  rho %.4g  Z %.4g  C_miss %.4g  L %.4g  U %.4g\n", base.mu,
              base.sigma, base.cv, base.rho, base.z, base.c_miss, base.l, base.u);
  std::printf("  naive SpMM (Eq. 2): %.4f FLOP/B -> %.0f GFLOP/s\n", rep.naive.intensity, rep.naive.gflops);
  std::printf("\n  %-18s %9s %9s %9s | %10s %10s %10s  (FLOP/B | GFLOP/s)\n", "paper variant", "alg", "all-miss",
              "optimist", "alg", "all-miss", "optimist");
  for (const auto& v : rep.variants)
    std::printf("  %-18s %9.4f %9.4f %9.4f | %10.0f %10.0f %10.0f%s\n", v.name.c_str(), v.algorithmic.intensity,
                v.all_miss.intensity, v.optimistic.intensity, v.algorithmic.gflops, v.all_miss.gflops,
                v.optimistic.gflops, &v == &rep.variants[rep.chosen] ? "  <- paper flow" : "");
  std::printf("  paper flow: %s\n", rep.reason.c_str());
  std::printf("\nrow-wise kernel (spmat's default): time in ms, GFLOP/s of the prediction\n");
  std::printf("  %-18s %6s %5s %10s %10s %10s %10s\n", "variant", "segsz", "kt", "predicted", "all-miss",
              "optimist", "GFLOP/s");
  for (const auto& v : rows.variants)
    std::printf("  %-18s %6lld %5lld %10.4f %10.4f %10.4f %10.0f%s\n", v.name.c_str(),
                static_cast<long long>(v.segsize), static_cast<long long>(v.predicted.kt), v.predicted.seconds * 1e3,
                v.all_miss.seconds * 1e3, v.optimistic.seconds * 1e3, flops / v.predicted.seconds / 1e9,
                &v == &pick ? "  <- chosen" : "");
  const std::string options = std::string("variant=") + (pick.segsize > 0 ? "segmented,segsize=" + std::to_string(pick.segsize)
                                                                          : std::string("baseline")) +
                              ",reorder=" + (pick.reordered ? "on" : "off") + ",kt=" + std::to_string(pick.predicted.kt);
  std::printf("  %-18s %6s %5lld %10.4f %10.4f %10.4f %10.0f%s\n", ("panel R=" + std::to_string(f.panel_rows)).c_str(), "-",
              static_cast<long long>(rows.panel.predicted.kt), rows.panel.predicted.seconds * 1e3,
              rows.panel.all_miss.seconds * 1e3, rows.panel.optimistic.seconds * 1e3,
              flops / rows.panel.predicted.seconds / 1e9, rows.kernel == "panel" ? "  <- kernel=auto runs it" : "");
  std::printf("  terms of %s: DRAM %.4f ms, L1 slots %.4f ms (%.0f MB), L2 pieces %.4f ms (%.0f MB), latency %.4f ms\n",
              pick.name.c_str(), pick.predicted.dram_seconds * 1e3, pick.predicted.l1_seconds * 1e3,
              pick.predicted.l1_bytes / 1e6, pick.predicted.l2_seconds * 1e3, pick.predicted.l2_bytes / 1e6,
              pick.predicted.latency_seconds * 1e3);
  std::printf("  terms of panel: DRAM %.4f ms, L1 loads %.4f ms (%.0f MB), L2 pieces %.4f ms (%.0f MB)\n",
              rows.panel.predicted.dram_seconds * 1e3, rows.panel.predicted.l1_seconds * 1e3,
              rows.panel.predicted.l1_bytes / 1e6, rows.panel.predicted.l2_seconds * 1e3,
              rows.panel.predicted.l2_bytes / 1e6);
  std::printf("kernel      %s%s (rows %.4f ms, panel %.4f ms)\n", rows.kernel.c_str(),
              rows.kernel == "rows" && rows.stride ? ", strided schedule" : "", pick.predicted.seconds * 1e3,
              rows.panel.predicted.seconds * 1e3);
  std::printf("\ndecision    %s\n            --option tiled:%s (what kernel=rows, variant=auto, k=%lld picks)\n",
              rows.reason.c_str(), options.c_str(), static_cast<long long>(f.k));

  if (!f.json.empty()) {
    using bench::Json;
    Json j = Json::object();
    Json m = Json::object();
    m.set("name", io::matrix_name(f.spec)).set("rows", static_cast<long long>(a.rows))
        .set("cols", static_cast<long long>(a.cols)).set("nnz", static_cast<long long>(a.nnz()));
    j.set("matrix", m).set("k", static_cast<long long>(f.k)).set("precision", f.precision).set("index", f.index)
        .set("layout", f.layout);
    Json d = Json::object();
    d.set("name", dev.name).set("bandwidth_gbs", dev.bandwidth_gbs).set("peak_gflops", peak)
        .set("l2_bytes", dev.l2_bytes).set("sm_count", dev.sm_count).set("source", source);
    j.set("device", d);
    Json s = Json::object();
    s.set("mu", base.mu).set("sigma", base.sigma).set("cv", base.cv).set("rho", base.rho).set("z", base.z)
        .set("c_miss", base.c_miss).set("l", base.l).set("u", base.u).set("n_touched", base.n_touched)
        .set("sum_d", base.sum_d);
    j.set("inputs", s).set("naive", bound_json(rep.naive));
    Json pv = Json::array();
    for (const auto& v : rep.variants) {
      Json x = Json::object();
      x.set("name", v.name).set("segsize", static_cast<long long>(v.segsize)).set("rho", v.stats.rho)
          .set("z", v.stats.z).set("c_miss", v.stats.c_miss).set("l", v.stats.l).set("u", v.stats.u)
          .set("mu_star", v.stats.mu_star).set("algorithmic", bound_json(v.algorithmic))
          .set("all_miss", bound_json(v.all_miss)).set("optimistic", bound_json(v.optimistic))
          .set("predicted", bound_json(v.predicted));
      pv.push(x);
    }
    j.set("paper_variants", pv).set("paper_chosen", rep.variants[rep.chosen].name).set("paper_reason", rep.reason);
    Json rv = Json::array();
    for (const auto& v : rows.variants) {
      Json x = Json::object();
      x.set("name", v.name).set("segsize", static_cast<long long>(v.segsize)).set("reordered", v.reordered)
          .set("predicted", rows_json(v.predicted, flops)).set("all_miss", rows_json(v.all_miss, flops))
          .set("optimistic", rows_json(v.optimistic, flops));
      rv.push(x);
    }
    j.set("rows_variants", rv).set("chosen", pick.name).set("chosen_options", options).set("reason", rows.reason);
    Json pn = Json::object();
    pn.set("panel_rows", static_cast<long long>(rows.panel.columns.panel_rows))
        .set("sum_distinct", rows.panel.columns.sum_distinct)
        .set("max_panel_distinct", static_cast<long long>(rows.panel.columns.max_panel_distinct))
        .set("predicted", rows_json(rows.panel.predicted, flops)).set("all_miss", rows_json(rows.panel.all_miss, flops))
        .set("optimistic", rows_json(rows.panel.optimistic, flops));
    j.set("panel", pn).set("kernel", rows.kernel).set("schedule", rows.kernel == "rows" && rows.stride ? "stride" : "grid")
        .set("rows_time_ms", pick.predicted.seconds * 1e3)
        .set("panel_time_ms", rows.panel.predicted.seconds * 1e3);
    if (!f.as_run.empty()) {
      std::int64_t segsize = 0, kt = 0;
      bool reorder = false;
      parse_as_run(f.as_run, &segsize, &reorder, &kt);
      auto v = model::predict_rows(a, f.k, dev, segsize, reorder, kt);
      // kernel=auto ran the panel kernel (the decision's rule) unless the run forced kernel=rows.
      if (rows.kernel == "panel" && f.as_run.find("kernel=rows") == std::string::npos) {
        v.name = "panel R=" + std::to_string(rows.panel.columns.panel_rows);
        v.predicted = rows.panel.predicted, v.all_miss = rows.panel.all_miss, v.optimistic = rows.panel.optimistic;
      }
      const auto& p = v.profile;
      Json hist = Json::array();
      for (double h : p.hist) hist.push(h);
      Json wn = Json::array();
      for (double x : p.warp_nnz) wn.push(x);
      Json prof = Json::object();
      prof.set("rows", static_cast<long long>(p.rows)).set("nnz", static_cast<long long>(p.nnz))
          .set("work_rows", static_cast<long long>(p.work_rows)).set("panels", static_cast<long long>(p.panels))
          .set("panel_rows", static_cast<long long>(p.panel_rows)).set("max_work_row", static_cast<long long>(p.max_work_row))
          .set("n_touched", p.n_touched).set("sum_d", p.sum_d).set("cold", p.cold)
          .set("split_work_rows", static_cast<long long>(p.split_work_rows)).set("hist", hist).set("warp_nnz", wn);
      Json x = Json::object();
      x.set("options", f.as_run).set("name", v.name).set("segsize", static_cast<long long>(v.segsize))
          .set("reordered", v.reordered).set("profile", prof).set("predicted", rows_json(v.predicted, flops))
          .set("all_miss", rows_json(v.all_miss, flops)).set("optimistic", rows_json(v.optimistic, flops));
      j.set("as_run", x);
    }
    std::ofstream out(f.json);
    out << j.dump(2) << "\n";
    if (!out) throw Error("cannot write " + f.json);
    std::fprintf(stderr, "wrote %s\n", f.json.c_str());
  }
  return 0;
}

}  // namespace

int cmd_model(int argc, char** argv) {
  for (int i = 0; i < argc; ++i)
    if (!std::strcmp(argv[i], "-h") || !std::strcmp(argv[i], "--help")) {
      std::printf("%s", kUsage);
      return 0;
    }
  const Flags f = parse_flags(argc, argv);
  if (f.precision == "fp32")
    return f.index == "int32" ? run<float, std::int32_t>(f) : run<float, std::int64_t>(f);
  return f.index == "int32" ? run<double, std::int32_t>(f) : run<double, std::int64_t>(f);
}

}  // namespace spmat::cli
