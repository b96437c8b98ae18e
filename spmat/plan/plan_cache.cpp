// spmat/plan/plan_cache.cpp — the on-disk plan cache.
// SPDX-License-Identifier: MIT
#include "spmat/plan/plan_cache.hpp"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "spmat/config.hpp"
#include "spmat/plan/model.hpp"
#include "spmat/registry.hpp"

namespace spmat {

namespace fs = std::filesystem;

namespace {
constexpr const char* kMagic = "spmat-plan-cache 1";

std::uint64_t hash_text(std::string_view s) {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char c : s) h = (h ^ c) * 0x100000001b3ULL;
  return h;
}

void warn(const std::string& what) { std::fprintf(stderr, "spmat: plan cache: %s\n", what.c_str()); }
}  // namespace

PlanCache PlanCache::from_environment() {
  if (const char* d = std::getenv("SPMAT_CACHE_DIR"); d && *d) return PlanCache(d);
  if (const char* d = std::getenv("XDG_CACHE_HOME"); d && *d) return PlanCache(fs::path(d) / "spmat");
  if (const char* h = std::getenv("HOME"); h && *h) return PlanCache(fs::path(h) / ".cache" / "spmat");
  return PlanCache(fs::path());
}

fs::path PlanCache::file_for(const std::string& key) const {
  char name[32];
  std::snprintf(name, sizeof name, "%016llx.plan", static_cast<unsigned long long>(hash_text(key)));
  return dir_ / name;
}

std::optional<CachedPlan> PlanCache::load(const std::string& key) const {
  if (dir_.empty()) return std::nullopt;
  const fs::path f = file_for(key);
  std::error_code ec;
  if (!fs::exists(f, ec)) return std::nullopt;
  std::ifstream in(f);
  std::string line;
  auto corrupt = [&](const std::string& why) -> std::optional<CachedPlan> {
    warn("ignoring " + f.string() + " (" + why + ")");
    return std::nullopt;
  };
  if (!std::getline(in, line) || line != kMagic) return corrupt("not a plan cache file");
  if (!std::getline(in, line) || line != "key " + key) return corrupt("written for another key");
  CachedPlan c;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    std::istringstream ls(line);
    std::string tag, op, format;
    int transposed = -1;
    double predicted = NAN, measured = NAN;
    ls >> tag >> op >> format >> transposed >> predicted >> measured;
    if (tag != "choice" || ls.fail() || (transposed != 0 && transposed != 1))
      return corrupt("malformed line '" + line.substr(0, 80) + "'");
    OpChoice ch;
    try {
      ch.op = parse_op(op);
      find_format(FormatSpec::parse(format).name);
    } catch (const Error& e) {
      return corrupt(e.what());
    }
    ch.format = format;
    ch.transposed = transposed == 1;
    ch.predicted_ms = predicted < 0 ? NAN : predicted;
    ch.measured_ms = measured < 0 ? NAN : measured;
    c.choices.push_back(ch);
  }
  if (c.choices.empty()) return corrupt("no choices");
  return c;
}

void PlanCache::store(const std::string& key, const FormatPlan& p) const {
  if (dir_.empty()) return;
  std::error_code ec;
  fs::create_directories(dir_, ec);
  const fs::path f = file_for(key);
  const fs::path tmp = f.string() + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    if (!out) return warn("cannot write " + tmp.string());
    out << kMagic << "\nkey " << key << "\n";
    out.precision(9);
    // Times as numbers, -1 for "none" (streams do not read back "nan").
    auto num = [](double v) { return std::isnan(v) ? -1.0 : v; };
    for (const auto& c : p.choices)
      out << "choice " << to_string(c.op) << ' ' << c.format << ' ' << (c.transposed ? 1 : 0)
          << ' ' << num(c.predicted_ms) << ' ' << num(c.measured_ms) << "\n";
    if (!out) return warn("cannot write " + tmp.string());
  }
  fs::rename(tmp, f, ec);  // atomic on POSIX: a reader never sees half a file
  if (ec) warn("cannot write " + f.string() + ": " + ec.message());
}

std::string plan_cache_key(std::uint64_t fingerprint, const FormatPlan& p, const PlanRequest& r,
                           std::string_view index_type) {
  char fp[24];
  std::snprintf(fp, sizeof fp, "%016llx", static_cast<unsigned long long>(fingerprint));
  std::string device = plan_model::device_for(r.backend).name;
  for (char& c : device)
    if (c == ' ') c = '_';
  return std::string(fp) + " " + device + " " + p.precision + " " + std::string(index_type) +
         " v" + kVersion + " " + r.key();
}

bool apply_cached(FormatPlan& p, const CachedPlan& c) {
  if (c.choices.size() != p.choices.size()) return false;
  for (std::size_t i = 0; i < c.choices.size(); ++i)
    if (c.choices[i].op != p.choices[i].op) return false;
  p.choices = c.choices;
  p.reason = "tuned earlier on this device (plan cache): " + p.reason;
  return true;
}

}  // namespace spmat
