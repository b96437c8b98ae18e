// spmat/bench/report.cpp — what the harness hands back: speedups vs cuSPARSE, JSON, the table.
// SPDX-License-Identifier: MIT
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <map>
#include <tuple>

#include "spmat/bench/harness.hpp"

namespace spmat::bench {

namespace {
bool is_cusparse(const std::string& format) { return format.rfind("cusparse", 0) == 0; }

auto group_key(const Result& r) {
  const bool spmm = r.op == Op::spmm;
  return std::tuple(r.matrix, static_cast<int>(r.op), static_cast<int>(r.precision),
                    static_cast<int>(r.index), spmm ? r.k : 1,
                    spmm ? static_cast<int>(r.layout) : 0);
}

Json number_or_null(double d) { return std::isfinite(d) ? Json(d) : Json(); }

std::string fmt(const char* f, double v) {
  if (!std::isfinite(v)) return "-";
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

std::string op_label(const Result& r) {
  std::string s(to_string(r.op));
  if (r.op == Op::spmm) s += " k=" + std::to_string(r.k) + " " + std::string(to_string(r.layout));
  return s;
}

std::string format_label(const Result& r) {
  std::string s = r.options.empty() ? r.format : r.format + "[" + r.options + "]";
  if (!r.planned.empty()) s += " -> " + r.planned;
  return s;
}

std::string status_text(const Result& r) {
  if (!r.completed) return (r.unsupported ? "UNSUPPORTED: " : "ERROR: ") + r.error;
  if (!r.correct) return "INCORRECT: relative error " + fmt("%.2e", r.max_relative_norm2);
  return "";
}
}  // namespace

void compute_speedups(std::vector<Result>& results) {
  std::map<decltype(group_key(results.front())), double> best;
  for (const Result& r : results) {
    if (!is_cusparse(r.format) || !r.completed || !r.correct || !(r.time_ms > 0)) continue;
    auto [it, inserted] = best.emplace(group_key(r), r.time_ms);
    if (!inserted) it->second = std::min(it->second, r.time_ms);
  }
  for (Result& r : results) {
    r.speedup_vs_cusparse = NAN;
    if (!r.completed || !(r.time_ms > 0)) continue;
    auto it = best.find(group_key(r));
    if (it != best.end()) r.speedup_vs_cusparse = it->second / r.time_ms;
  }
}

Json to_json(const Result& r) {
  Json m = Json::object();
  m.set("name", r.matrix).set("rows", r.rows).set("cols", r.cols).set("nnz", r.nnz);
  Json j = Json::object();
  j.set("matrix", std::move(m));
  j.set("format", r.format);
  j.set("options", r.options);
  j.set("op", to_string(r.op));
  j.set("precision", to_string(r.precision));
  j.set("index", to_string(r.index));
  if (r.op == Op::spmm) j.set("k", r.k).set("layout", to_string(r.layout));
  j.set("time_ms", number_or_null(r.time_ms));
  j.set("time_min_ms", number_or_null(r.time_min_ms));
  j.set("time_max_ms", number_or_null(r.time_max_ms));
  j.set("repetitions", r.repetitions);
  j.set("calls_per_sample", r.calls_per_sample);
  j.set("setup_ms", number_or_null(r.setup_ms));
  j.set("build_ms", number_or_null(r.build_ms));
  j.set("prepare_ms", number_or_null(r.prepare_ms));
  j.set("upload_ms", number_or_null(r.upload_ms));
  j.set("build_host_before_bytes", r.build_host_before_bytes);  // 0: not known here
  j.set("build_host_peak_bytes", r.build_host_peak_bytes);
  j.set("build_device_peak_bytes", r.build_device_peak_bytes);
  if (!r.planned.empty()) j.set("plan_ms", number_or_null(r.plan_ms)).set("planned", r.planned);
  if (r.format == "tune")
  {
    j.set("tune_ms", number_or_null(r.tune_ms)).set("plan_from_cache", r.from_cache);
    Json measured = Json::object();
    for (const auto& [format, ms] : r.tune_measured) measured.set(format, number_or_null(ms));
    j.set("tune_measured_ms", std::move(measured));
  }
  if (!std::isnan(r.device_build_ms) || !r.device_build_error.empty()) {
    j.set("device_build_ms", number_or_null(r.device_build_ms));
    j.set("device_build_first_ms", number_or_null(r.device_build_first_ms));
    Json samples = Json::array();
    for (const double ms : r.device_build_samples_ms) samples.push(number_or_null(ms));
    j.set("device_build_samples_ms", std::move(samples));
    j.set("device_builder", r.device_builder);
    j.set("update_values_ms", number_or_null(r.update_values_ms));
    if (!r.device_build_error.empty()) j.set("device_build_error", r.device_build_error);
  }
  j.set("storage_bytes", r.storage_bytes);
  j.set("max_relative_norm2", number_or_null(r.max_relative_norm2));
  j.set("gbs", number_or_null(r.gbs));
  j.set("csr_equiv_gbs", number_or_null(r.csr_equiv_gbs));
  j.set("gflops", number_or_null(r.gflops));
  j.set("bw_fraction", number_or_null(r.bw_fraction));
  j.set("speedup_vs_cusparse", number_or_null(r.speedup_vs_cusparse));
  j.set("completed", r.completed);
  j.set("correct", r.correct);
  if (!r.completed) {
    j.set("error", r.error);
    j.set("unsupported", r.unsupported);
  }
  return j;
}

Json to_json(const Report& rep) {
  Json dev = Json::object();
  dev.set("name", rep.device.name)
      .set("sm_count", rep.device.sm_count)
      .set("l2_bytes", rep.device.l2_bytes)
      .set("copy_gbs", number_or_null(rep.device.copy_gbs));
  Json results = Json::array();
  for (const Result& r : rep.results) results.push(to_json(r));
  Json j = Json::object();
  j.set("device", std::move(dev));
  j.set("backend", to_string(rep.backend));
  j.set("commit", rep.commit);
  j.set("date", rep.date);
  j.set("spmat_version", rep.version);
  j.set("results", std::move(results));
  return j;
}

std::string failure_summary(const Report& rep) {
  std::size_t failed = 0, incorrect = 0;
  for (const Result& r : rep.results) {
    failed += !r.completed && !r.unsupported;
    incorrect += r.completed && !r.correct;
  }
  std::string out;
  if (failed) out += std::to_string(failed) + " measurement(s) failed (see the error column)";
  if (incorrect)
    out += std::string(failed ? "; " : "") + std::to_string(incorrect) +
           " result(s) exceed the error tolerance (fp64 " + fmt("%.0e", tolerance(Precision::fp64)) +
           ", fp32 " + fmt("%.0e", tolerance(Precision::fp32)) + ")";
  return out;
}

std::string one_line(const Result& r) {
  std::string s = r.matrix + " " + format_label(r) + " " + op_label(r) + " " +
                  std::string(to_string(r.precision)) + ": ";
  if (!r.completed) return s + status_text(r);
  s += fmt("%.4g ms", r.time_ms) + ", " + fmt("%.1f GB/s", r.gbs) + ", " +
       fmt("%.0f%% bw", 100 * r.bw_fraction);
  if (!r.correct) s += ", " + status_text(r);
  return s;
}

std::string format_table(const Report& rep, bool color) {
  const std::vector<std::string> head = {"matrix", "format", "op",    "prec",
                                         "time ms", "GB/s", "%bw", "vs cusparse", "error"};
  std::vector<std::vector<std::string>> rows;
  for (const Result& r : rep.results) {
    rows.push_back({r.matrix, format_label(r), op_label(r), std::string(to_string(r.precision)),
                    fmt("%.4f", r.time_ms), fmt("%.1f", r.gbs), fmt("%.0f", 100 * r.bw_fraction),
                    fmt("%.2fx", r.speedup_vs_cusparse), status_text(r)});
  }
  std::vector<std::size_t> width(head.size());
  for (std::size_t c = 0; c < head.size(); ++c) {
    width[c] = head[c].size();
    for (const auto& row : rows) width[c] = std::max(width[c], row[c].size());
  }
  auto line = [&](const std::vector<std::string>& cells) {
    std::string s;
    for (std::size_t c = 0; c < cells.size(); ++c) {
      const bool numeric = c >= 4 && c <= 7;
      const std::string pad(width[c] - cells[c].size(), ' ');
      if (c) s += "  ";
      s += c + 1 == cells.size() ? cells[c] : numeric ? pad + cells[c] : cells[c] + pad;
    }
    while (!s.empty() && s.back() == ' ') s.pop_back();
    return s;
  };
  std::string out = "device: " + rep.device.name + ", backend " +
                    std::string(to_string(rep.backend)) + ", copy bandwidth " +
                    fmt("%.1f GB/s", rep.device.copy_gbs) + ", commit " + rep.commit + "\n";
  out += line(head) + "\n";
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const Result& r = rep.results[i];
    const bool bad = !r.completed || !r.correct;
    const bool red = bad && color && r.completed;  // incorrect results in red
    out += (red ? "\033[31m" : "") + line(rows[i]) + (red ? "\033[0m" : "") + "\n";
  }
  std::size_t incorrect = 0, failed = 0, unsupported = 0;
  for (const Result& r : rep.results) {
    failed += !r.completed;
    unsupported += !r.completed && r.unsupported;
    incorrect += r.completed && !r.correct;
  }
  out += std::to_string(rep.results.size()) + " measurements, " + std::to_string(failed) +
         " not completed" +
         (unsupported ? " (" + std::to_string(unsupported) + " unsupported by the format)" : "") + ", " +
         std::to_string(incorrect) + " incorrect\n";
  return out;
}

std::string current_commit() {
  // SPMAT_COMMIT first: a copied working tree (a GPU machine) can carry stale git metadata.
  if (const char* env = std::getenv("SPMAT_COMMIT"); env && *env) return env;
  std::string out;
  if (FILE* p = popen("git rev-parse --short HEAD 2>/dev/null", "r")) {
    char buf[128];
    while (std::fgets(buf, sizeof buf, p)) out += buf;
    if (pclose(p) != 0) out.clear();
  }
  while (!out.empty() && (out.back() == '\n' || out.back() == '\r' || out.back() == ' '))
    out.pop_back();
  if (!out.empty()) return out;
  return "unknown";
}

std::string utc_now_iso8601() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

}  // namespace spmat::bench
