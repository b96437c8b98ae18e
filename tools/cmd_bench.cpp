// tools/cmd_bench.cpp — `spmat bench`: formats × operations × matrices × precisions, timed.
// SPDX-License-Identifier: MIT
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "spmat/bench/harness.hpp"
#include "spmat/bench/suites.hpp"
#include "spmat/registry.hpp"
#include "tools/commands.hpp"
#include "tools/parse_number.hpp"

namespace spmat::cli {

namespace {

using namespace spmat::bench;

std::vector<std::string> split_list(std::string_view s) {
  std::vector<std::string> v;
  std::string cur;
  for (char c : s) {
    if (c == ',') {
      if (!cur.empty()) v.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  if (!cur.empty()) v.push_back(cur);
  return v;
}

std::string ops_of(const BackendCaps& c) {
  if (!c.available) return "-";
  std::string s;
  for (Op op : {Op::spmv, Op::spmv_t, Op::spmm, Op::add})
    if (c.supports(op)) s += (s.empty() ? "" : ",") + std::string(to_string(op));
  return s;
}

void print_help() {
  std::printf(
      "usage: spmat bench [options] [matrices...]\n"
      "\n"
      "Times formats x operations x matrices x precisions; checks every result against the fp64\n"
      "reference; prints a table and optionally writes JSON (schema: bench/README.md).\n"
      "Matrices are .mtx/.mtx.gz/.smc files or generator specs (gen:lap2d:2000); none: --suite.\n"
      "Exit status 1 when a measurement failed or is incorrect; a format refusing an operation\n"
      "by design (UNSUPPORTED in the table) does not count.\n"
      "\n"
      "options:\n"
      "  --formats a,b|all     formats to run (default: all available on the backend)\n"
      "  --ops a,b|all         operations (default spmv,spmv_t)\n"
      "  --precision a,b       fp32, fp64 (default fp64,fp32)\n"
      "  --k 32,128            spmm: dense columns (default 32)\n"
      "  --layout row,col      spmm: layout of B and C (default row)\n"
      "  --backend cpu|cuda    (default: cuda when a GPU is usable, else cpu; here: %s)\n"
      "  --index int32|int64   index type of the formats (default int32)\n"
      "  --build-from host|device  device (cuda): also time each format's build from the CSR\n"
      "                        already on the GPU (device_build_ms; the upload is not timed)\n"
      "                        and update_values with device values (update_values_ms)\n"
      "  --reps N              timed runs (default 50 on cuda, 10 on cpu)\n"
      "  --warmup N            untimed runs first (default 10 on cuda, 2 on cpu; on cuda for\n"
      "                        at least 25 ms)\n"
      "  --flush-l2            write 2x L2 (CPU: 2x last-level cache) between timed runs\n"
      "                        (on cuda: one call per timed sample)\n"
      "  --sample-ms X         cuda: a timed sample holds enough back-to-back calls to span\n"
      "                        about X ms, so microsecond products are timed as a solver loop\n"
      "                        runs them, without the launch latency (default 0.2; 0: one\n"
      "                        call per sample; time_ms is always per call)\n"
      "  --option fmt:k=v      a build option of one format (repeatable)\n"
      "  --variant fmt[:k=v,..] one more run of fmt with these options, beside the --formats\n"
      "                        runs (repeatable; compares variants on one load of each matrix)\n"
      "  --suite NAME          matrices when none are given (default: default)\n"
      "  --json PATH           write the results as JSON\n"
      "  --out-dir DIR         write DIR/bench.json\n"
      "  --copy-gbs X          use X GB/s as the copy bandwidth instead of measuring it\n"
      "\noperations:",
      cuda_available() ? "cuda" : "cpu");
  for (Op op : {Op::spmv, Op::spmv_t, Op::spmm, Op::add})
    std::printf(" %s", std::string(to_string(op)).c_str());
  std::printf("\n\nsuites:\n");
  for (const auto& s : suites()) std::printf("  %-8s %s\n", s.name.c_str(), s.help.c_str());
  std::printf("\nformats (operations on cpu | cuda):\n");
  for (const auto& e : registry()) {
    std::printf("  %-16s %-24s | %-24s %s\n", e.name.c_str(), ops_of(e.caps.cpu).c_str(),
                ops_of(e.caps.cuda).c_str(), e.summary.c_str());
    for (const auto& p : e.params)
      std::printf("  %-16s   --option %s:%s=... (default %s): %s\n", "", e.name.c_str(),
                  p.name.c_str(), p.default_value.c_str(), p.help.c_str());
  }
}

int parse_count(const std::string& flag, const std::string& v, int min) {
  return parse_number<int>(flag, v, "an integer >= " + std::to_string(min),
                           [&](int n) { return n >= min; });
}

void write_file(const std::filesystem::path& path, const std::string& text) {
  std::error_code ec;
  if (path.has_parent_path()) std::filesystem::create_directories(path.parent_path(), ec);
  std::ofstream out(path);
  out << text;
  if (!out) throw Error("cannot write " + path.string());
  std::fprintf(stderr, "wrote %s\n", path.string().c_str());
}

/// Progress on stderr: a bar redrawn in place on a terminal, one line per measurement otherwise.
struct Progress {
  bool tty = isatty(STDERR_FILENO) != 0;
  void operator()(const Result& r, std::size_t done, std::size_t total) const {
    const std::string line = one_line(r);
    if (!tty) {
      std::fprintf(stderr, "[%zu/%zu] %s\n", done, total, line.c_str());
      return;
    }
    constexpr int kWidth = 30;
    const int filled = total ? static_cast<int>(kWidth * done / total) : kWidth;
    std::string bar(static_cast<std::size_t>(filled), '#');
    bar.resize(kWidth, '.');
    std::fprintf(stderr, "\r\033[K[%s] %zu/%zu %.90s", bar.c_str(), done, total, line.c_str());
    if (done == total) std::fprintf(stderr, "\n");
    std::fflush(stderr);
  }
};

}  // namespace

int cmd_bench(int argc, char** argv) {
  BenchConfig cfg;
  cfg.backend = cuda_available() ? Backend::cuda : Backend::cpu;
  std::vector<std::string> format_names, matrices;
  bool all_formats = true, formats_given = false;
  std::map<std::string, FormatOptions> options;
  std::vector<std::pair<std::string, FormatOptions>> variants;  // --variant: (format, options)
  std::string suite = "default", json_path, out_dir;

  for (int i = 0; i < argc; ++i) {
    std::string arg = argv[i], value;
    if (arg == "-h" || arg == "--help") {
      print_help();
      return 0;
    }
    if (arg == "--flush-l2") {
      cfg.flush_l2 = true;
      continue;
    }
    if (arg.rfind("--", 0) != 0) {
      matrices.push_back(arg);
      continue;
    }
    if (auto eq = arg.find('='); eq != std::string::npos) {
      value = arg.substr(eq + 1);
      arg.resize(eq);
    } else {
      if (i + 1 >= argc) throw ParseError(arg + " needs a value (see spmat bench --help)");
      value = argv[++i];
    }
    if (arg == "--formats") {
      all_formats = value == "all";
      formats_given = true;
      format_names = all_formats ? std::vector<std::string>{} : split_list(value);
    } else if (arg == "--ops") {
      cfg.ops.clear();
      for (const auto& s : value == "all" ? split_list("spmv,spmv_t,spmm,add") : split_list(value))
        cfg.ops.push_back(parse_op(s));
    } else if (arg == "--precision") {
      cfg.precisions.clear();
      for (const auto& s : split_list(value)) cfg.precisions.push_back(parse_precision(s));
    } else if (arg == "--k") {
      cfg.ks.clear();
      for (const auto& s : split_list(value)) cfg.ks.push_back(parse_count("--k", s, 1));
    } else if (arg == "--layout") {
      cfg.layouts.clear();
      for (const auto& s : split_list(value)) cfg.layouts.push_back(parse_layout(s));
    } else if (arg == "--backend") {
      cfg.backend = parse_backend(value);
    } else if (arg == "--index") {
      cfg.index = parse_index_width(value);
    } else if (arg == "--build-from") {
      if (value != "host" && value != "device")
        throw ParseError("--build-from " + value + " is not one of host, device");
      cfg.build_from_device = value == "device";
    } else if (arg == "--reps") {
      cfg.reps = parse_count(arg, value, 1);
    } else if (arg == "--warmup") {
      cfg.warmup = parse_count(arg, value, 0);
    } else if (arg == "--option" || arg == "--variant") {
      const auto colon = value.find(':');  // --variant may name a format alone
      if (value.empty() || colon == 0 || (arg == "--option" && colon == std::string::npos))
        throw ParseError(arg + " expects format:key=value[,key=value...], got '" + value + "'");
      const FormatSpec spec = FormatSpec::parse(value);
      const std::string fmt = find_format(spec.name).name;
      if (arg == "--variant") {
        variants.emplace_back(fmt, spec.options);
      } else {
        for (const auto& [k, v] : spec.options.all()) options[fmt].set(k, v);
      }
    } else if (arg == "--suite") {
      suite = value;
    } else if (arg == "--json") {
      json_path = value;
    } else if (arg == "--out-dir") {
      out_dir = value;
    } else if (arg == "--copy-gbs") {
      cfg.copy_gbs =
          parse_number<double>(arg, value, "a positive number", [](double x) { return x > 0; });
    } else if (arg == "--sample-ms") {
      cfg.min_sample_ms = parse_number<double>(arg, value, "milliseconds in [0, 1000]",
                                               [](double x) { return x >= 0 && x <= 1000; });
    } else {
      throw ParseError("unknown option " + arg + " (see spmat bench --help)");
    }
  }

  // --variant alone runs only its variants (no implicit "all formats").
  if (!formats_given && !variants.empty()) all_formats = false;
  if (all_formats) {
    for (const auto& e : registry())
      if (e.caps.on(cfg.backend).available) format_names.push_back(e.name);
  }
  for (const auto& name : format_names) {
    const auto it = options.find(name);
    cfg.formats.push_back({find_format(name).name, it == options.end() ? FormatOptions{} : it->second});
  }
  for (const auto& [fmt, own] : variants) {
    FormatOptions opts;  // --option values of the format first; the variant's own win
    if (const auto it = options.find(fmt); it != options.end())
      for (const auto& [k, v] : it->second.all()) opts.set(k, v);
    for (const auto& [k, v] : own.all()) opts.set(k, v);
    cfg.formats.push_back({fmt, opts});
  }
  for (const auto& [fmt, opts] : options) {
    bool used = false;
    for (const auto& f : cfg.formats) used = used || f.name == fmt;
    if (!used)
      throw ParseError("--option for format '" + fmt + "', which is not among the formats run");
  }
  if (cfg.formats.empty())
    throw UnsupportedError("no format is available on backend " + std::string(to_string(cfg.backend)));
  if (matrices.empty()) matrices = suite_specs(suite, cfg.backend);
  if (matrices.empty()) throw ParseError("suite '" + suite + "' lists no matrices");
  for (const auto& m : matrices) cfg.matrices.push_back(matrix_from_spec(m));
  cfg.on_result = Progress{};

  Report rep = run_bench(cfg);
  std::fputs(format_table(rep, isatty(STDOUT_FILENO) != 0).c_str(), stdout);
  std::fflush(stdout);
  const std::string json = to_json(rep).dump(2) + "\n";
  if (!json_path.empty()) write_file(json_path, json);
  if (!out_dir.empty()) write_file(std::filesystem::path(out_dir) / "bench.json", json);

  const std::string failures = failure_summary(rep);
  if (!failures.empty()) {
    std::fprintf(stderr, "spmat bench: %s\n", failures.c_str());
    return 1;
  }
  return 0;
}

}  // namespace spmat::cli
