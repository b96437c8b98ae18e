// tools/cmd_compress.cpp — `spmat compress`: BRO space savings η per matrix (the paper's Tables
// 3, 4, 5): BRO-ELL, BRO-COO, BRO-HYB, before and after BAR, with and without metadata.
// SPDX-License-Identifier: MIT
//
// A host computation (no kernel runs): each matrix is read with int32 indices (as the paper),
// encoded, and the index bytes are counted with each storage's index_savings()
// (spmat/formats/bro_common/bro_common.hpp, IndexSavings; definitions in
// docs/formats/bro.md, "Space savings η"):
//   η      = 1 − C/O        C = bit streams (+ raw index arrays kept, BRO-COO's columns)
//   η+meta = 1 − (C+M)/O    M = widths, per-slice/interval offsets, base rows
//   O      = BRO-ELL: ELLPACK rows·k·4 (k = longest row; the paper's Fig. 1 counts 80 B);
//            BRO-COO: COO 2·nnz·4;  BRO-HYB: HYB rows·K·4 + 2·nnz_coo·4;
//            BRO-CSR: CSR's col_idx nnz·4 (row_ptr is kept raw and not counted)
//   η_nnz  = the same against the unpadded nnz·4 (ELL) / unchanged (COO)
// The BAR row map (rows·4) is not in the paper's η; it is reported apart ("permutation").
//
// Example: spmat compress gen:lap2d:100 prints one row: bro-ell η 61.1% (78.5% after BAR),
// bro-coo 45.3%; add --json out.json for the document (schema "spmat-compress/1").
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "spmat/bench/json.hpp"
#include "spmat/core/csr.hpp"
#include "spmat/core/error.hpp"
#include "spmat/formats/bar/bar.hpp"
#include "spmat/formats/bro_coo/bro_coo.hpp"
#include "spmat/formats/bro_csr/bro_csr.hpp"
#include "spmat/formats/bro_ell/bro_ell.hpp"
#include "spmat/formats/bro_hyb/bro_hyb.hpp"
#include "spmat/io/load.hpp"
#include "tools/commands.hpp"
#include "tools/parse_number.hpp"

namespace spmat::cli {

namespace {

using bench::Json;
using Index = std::int32_t;

constexpr const char* kUsage =
    "usage: spmat compress [options] <matrix|label=matrix>...\n"
    "\n"
    "BRO space savings of the index data (Tang et al., SC'13, Tables 3-5): BRO-ELL, BRO-COO and\n"
    "BRO-HYB, before and after BAR reordering, with and without metadata, int32 indices.\n"
    "A matrix is a .mtx/.mtx.gz/.smc file or a generator spec; `label=matrix` names it in the\n"
    "output (e.g. cage12=gen:random_k:130000:16 for a stand-in).\n"
    "\n"
    "options:\n"
    "  --json PATH        write the results as JSON (schema spmat-compress/1)\n"
    "  --h N              slice height of BRO-ELL / the ELL part of BRO-HYB (default 256, the\n"
    "                     paper's; the extra column ELL32s is always h=32, first=slice)\n"
    "  --first F          first-column coding: abs (paper, default) or slice\n"
    "  --tpr N            BRO-CSR lanes per row (default 0 = auto)\n"
    "  --sym-len N        symbol length, 32 or 64 (default 32)\n"
    "  --interval N       BRO-COO entries per warp interval (default 1024)\n"
    "  --bar-algo A       auto, greedy, fast (default auto)\n"
    "  --bar-window N     fast BAR window (default 4)\n"
    "  --max-fill F       skip BRO-ELL when padded slots exceed F*(nnz+rows) (default 64)\n"
    "  --no-bar           skip the BAR runs\n"
    "  --fp32             float values (BAR's x-line term uses the value size; default double)\n";

struct Flags {
  std::vector<std::string> specs;
  std::string json_path;
  int h = 256, sym_len = 32, bar_window = 4;
  std::int64_t interval = 1024;
  std::string bar_algo = "auto", first = "abs";
  int tpr = 0;
  double max_fill = 64;
  bool bar = true, fp32 = false;
};

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

Json savings_json(const bro::IndexSavings& s) {
  Json j = Json::object();
  j.set("original_bytes", static_cast<unsigned long long>(s.original))
      .set("original_nnz_bytes", static_cast<unsigned long long>(s.original_nnz))
      .set("compressed_bytes", static_cast<unsigned long long>(s.compressed))
      .set("metadata_bytes", static_cast<unsigned long long>(s.metadata))
      .set("permutation_bytes", static_cast<unsigned long long>(s.permutation))
      .set("eta", s.eta(false))
      .set("eta_meta", s.eta(true))
      .set("eta_nnz", s.eta_nnz(false))
      .set("eta_nnz_meta", s.eta_nnz(true))
      .set("eta_all", s.eta_all());
  return j;
}

FormatOptions options_of(const Flags& f, bool bar) {
  FormatOptions o;
  o.set("h", std::to_string(f.h))
      .set("sym_len", std::to_string(f.sym_len))
      .set("interval", std::to_string(f.interval))
      .set("max_fill", std::to_string(f.max_fill))
      // Space savings do not depend on how long the longest row takes to walk.
      .set("max_skew", "inf")
      .set("bar", bar ? "1" : "0")
      .set("bar_algo", f.bar_algo)
      .set("bar_window", std::to_string(f.bar_window))
      .set("first", f.first)
      .set("tpr", std::to_string(f.tpr));
  return o;
}

// Runs `make` (which returns an IndexSavings) and records it with its time; an spmat::Error
// (a refusal, an overflow) is recorded as "skipped" with its message.
template <class F>
Json measured(F&& make) {
  const auto t0 = std::chrono::steady_clock::now();
  try {
    Json j = make();
    j.set("seconds", seconds_since(t0));
    return j;
  } catch (const Error& e) {
    Json j = Json::object();
    j.set("skipped", e.what());
    return j;
  }
}

std::string pct(const Json& variant, const char* key) {
  const Json* v = variant.find(key);
  if (!v || !v->is_number()) return "    -";
  char buf[16];
  std::snprintf(buf, sizeof buf, "%5.1f", 100.0 * v->as_number());
  return buf;
}

template <class Value>
Json compress_one(const Flags& f, const std::string& label, const std::string& spec) {
  const auto t0 = std::chrono::steady_clock::now();
  const Csr<Value, Index> a = io::load_matrix<Value, Index>(spec);
  const double read_s = seconds_since(t0);
  const std::int64_t rows = a.rows, nnz = a.nnz();
  double sum = 0, sum2 = 0;
  std::int64_t mx = 0;
  for (Index r = 0; r < a.rows; ++r) {
    const double l = double(a.row_ptr[r + 1] - a.row_ptr[r]);
    sum += l;
    sum2 += l * l;
    mx = std::max<std::int64_t>(mx, a.row_ptr[r + 1] - a.row_ptr[r]);
  }
  const double mean = rows ? sum / double(rows) : 0;
  const double sd = rows ? std::sqrt(std::max(0.0, sum2 / double(rows) - mean * mean)) : 0;

  Json m = Json::object();
  m.set("label", label).set("matrix", spec).set("name", io::matrix_name(spec));
  m.set("rows", static_cast<long long>(a.rows)).set("cols", static_cast<long long>(a.cols));
  m.set("nnz", static_cast<long long>(nnz)).set("row_len_mean", mean).set("row_len_std", sd);
  m.set("row_len_max", static_cast<long long>(mx)).set("read_seconds", read_s);

  Json ell = Json::object(), hyb = Json::object();
  const char* bar_algo =
      bar::parse_algo(f.bar_algo, rows, nnz, f.h) == bar::Algo::greedy ? "greedy" : "fast";
  for (bool with_bar : {false, true}) {
    if (with_bar && !f.bar) continue;
    const FormatOptions o = options_of(f, with_bar);
    const char* key = with_bar ? "after_bar" : "before_bar";
    ell.set(key, measured([&] {
      const auto e = BroEll<Value, Index>::build(a, o);
      Json j = savings_json(e.index_savings());
      j.set("slots", static_cast<long long>(e.values.size()));
      if (with_bar) j.set("bar_algo", bar_algo);
      return j;
    }));
    hyb.set(key, measured([&] {
      const auto hy = BroHyb<Value, Index>::build(a, o);
      Json j = savings_json(hy.index_savings());
      j.set("ell_width", static_cast<long long>(hy.ell_width));
      j.set("ell_fraction", nnz ? double(hy.ell.nnz) / double(nnz) : 0.0);
      if (with_bar) j.set("bar_algo", bar_algo);
      return j;
    }));
  }
  Json coo = measured([&] {
    const auto c = BroCoo<Value, Index>::build(a, options_of(f, false));
    return savings_json(c.index_savings());
  });
  Json csr = measured([&] {
    const auto c = BroCsr<Value, Index>::build(a, options_of(f, false));
    Json j = savings_json(c.index_savings());
    j.set("tpr", c.tpr);
    return j;
  });
  Json ell32 = measured([&] {  // the GPU defaults of bro-ell
    FormatOptions o = options_of(f, false);
    o.set("h", "32").set("first", "slice");
    const auto e = BroEll<Value, Index>::build(a, o);
    Json j = savings_json(e.index_savings());
    j.set("slots", static_cast<long long>(e.values.size()));
    return j;
  });
  m.set("bro_ell", ell).set("bro_coo", coo).set("bro_hyb", hyb).set("bro_csr", csr);
  m.set("bro_ell_h32_slice", ell32);

  const Json none = Json::object();
  auto get = [&](const Json& j, const char* k) -> const Json& {
    const Json* p = j.find(k);
    return p ? *p : none;
  };
  const Json &eb = get(ell, "before_bar"), &ea = get(ell, "after_bar");
  const Json &hb = get(hyb, "before_bar"), &ha = get(hyb, "after_bar");
  std::printf("%-24.24s %9lld %10lld %6.1f %6.1f | %s %s %s %s | %s %s | %s %s %s %s %s | %s %s | %s %s | %6.1fs\n",
              label.c_str(), (long long)rows, (long long)nnz, mean, sd, pct(eb, "eta").c_str(),
              pct(eb, "eta_meta").c_str(), pct(ea, "eta").c_str(), pct(ea, "eta_meta").c_str(),
              pct(coo, "eta").c_str(), pct(coo, "eta_meta").c_str(),
              pct(hb, "ell_fraction").c_str(), pct(hb, "eta").c_str(), pct(hb, "eta_meta").c_str(),
              pct(ha, "eta").c_str(), pct(ha, "eta_meta").c_str(), pct(csr, "eta").c_str(),
              pct(csr, "eta_meta").c_str(), pct(ell32, "eta").c_str(), pct(ell32, "eta_meta").c_str(),
              seconds_since(t0));
  std::fflush(stdout);
  return m;
}

}  // namespace

int cmd_compress(int argc, char** argv) {
  Flags f;
  auto value_of = [&](int& i, const std::string& name) -> std::string {
    if (i + 1 >= argc) throw ParseError(name + " needs a value\n" + kUsage);
    return argv[++i];
  };
  auto int_of = [&](int& i, const std::string& name) {
    return parse_number<long long>(name, value_of(i, name), "an integer",
                                   [](long long) { return true; });
  };
  for (int i = 0; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "-h" || a == "--help") {
      std::fputs(kUsage, stdout);
      return 0;
    } else if (a == "--json") f.json_path = value_of(i, a);
    else if (a == "--h") f.h = static_cast<int>(int_of(i, a));
    else if (a == "--sym-len") f.sym_len = static_cast<int>(int_of(i, a));
    else if (a == "--interval") f.interval = int_of(i, a);
    else if (a == "--first") f.first = value_of(i, a);
    else if (a == "--tpr") f.tpr = static_cast<int>(int_of(i, a));
    else if (a == "--bar-algo") f.bar_algo = value_of(i, a);
    else if (a == "--bar-window") f.bar_window = static_cast<int>(int_of(i, a));
    else if (a == "--max-fill") {
      const std::string v = value_of(i, a);
      try {
        f.max_fill = std::stod(v);
      } catch (const std::exception&) {
        throw ParseError("--max-fill expects a number, got '" + v + "'");
      }
    } else if (a == "--no-bar") f.bar = false;
    else if (a == "--fp32") f.fp32 = true;
    else if (a.size() > 1 && a[0] == '-' && a[1] == '-') throw ParseError("unknown option '" + a + "'\n" + kUsage);
    else f.specs.push_back(a);
  }
  if (f.specs.empty()) {
    std::fputs(kUsage, stderr);
    return 2;
  }
  // Validate the shared options once, before any matrix is read.
  (void)parse_options<BroEllOptions>(options_of(f, false));
  (void)parse_options<BroHybOptions>(options_of(f, false));

  std::printf("BRO space savings eta (%%), int32 indices, h=%d, first=%s, sym_len=%d, interval=%lld; "
              "+m = with metadata; ELL32s = bro-ell h=32 first=slice (no BAR)\n",
              f.h, f.first.c_str(), f.sym_len, (long long)f.interval);
  std::printf("%-24s %9s %10s %6s %6s | %-23s | %-11s | %-29s | %-11s | %-11s |\n", "matrix", "rows",
              "nnz", "mean", "std", "BRO-ELL  eta +m BAR:eta +m", "BRO-COO eta +m",
              "BRO-HYB %ELL eta +m BAR:eta +m", "BRO-CSR eta +m", "ELL32s eta +m");
  Json doc = Json::object();
  Json params = Json::object();
  params.set("h", f.h).set("sym_len", f.sym_len).set("interval", static_cast<long long>(f.interval))
      .set("bar_algo", f.bar_algo).set("bar_window", f.bar_window).set("max_fill", f.max_fill)
      .set("first", f.first).set("tpr", f.tpr)
      .set("index", "int32").set("value", f.fp32 ? "fp32" : "fp64");
  doc.set("schema", "spmat-compress/1").set("params", params);
  Json list = Json::array();
  int failures = 0;
  // Rewritten after every matrix, so that an interrupted run keeps what it measured.
  auto write_json = [&] {
    if (f.json_path.empty()) return;
    doc.set("matrices", list);
    std::ofstream out(f.json_path);
    if (!out) throw ParseError("cannot write '" + f.json_path + "'");
    out << doc.dump(1) << "\n";
    if (!out) throw ParseError("writing '" + f.json_path + "' failed");
  };
  for (const std::string& s : f.specs) {
    std::string label, spec = s;
    const auto eq = s.find('=');
    if (eq != std::string::npos && s.find_first_of(":/") > eq) {  // "label=spec"
      label = s.substr(0, eq);
      spec = s.substr(eq + 1);
    } else {
      label = io::matrix_name(spec);
    }
    try {
      list.push(f.fp32 ? compress_one<float>(f, label, spec) : compress_one<double>(f, label, spec));
    } catch (const Error& e) {
      std::fprintf(stderr, "spmat compress: %s: %s\n", label.c_str(), e.what());
      Json j = Json::object();
      j.set("label", label).set("matrix", spec).set("error", e.what());
      list.push(j);
      ++failures;
    }
    write_json();
  }
  write_json();
  return failures ? 1 : 0;
}

}  // namespace spmat::cli
