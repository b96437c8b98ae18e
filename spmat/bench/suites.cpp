// spmat/bench/suites.cpp — the named matrix suites of `spmat bench`.
// SPDX-License-Identifier: MIT
#include "spmat/bench/suites.hpp"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "spmat/core/error.hpp"

namespace spmat::bench {

namespace fs = std::filesystem;

namespace {
// Sized for one H100 (80 GB, 50 MB L2): every matrix is ≥ 8 M nonzeros so that x, y and the
// matrix stream far past L2, yet the largest (lap3d:200, 56 M nnz) fits with its fp64 copies.
const std::vector<std::string> kGpuGenerated = {
    "gen:lap2d:2000",          // 4 M rows, 20 M nnz, 5-point stencil
    "gen:lap3d:200",           // 8 M rows, 56 M nnz, 7-point stencil
    "gen:random_k:2000000:16", // 2 M rows, 32 M nnz, uniform columns
    "gen:rmat:21:16",          // 2 M rows, ~32 M nnz, skewed (R-MAT)
    "gen:powerlaw:2000000:16", // 2 M rows, ~32 M nnz, power-law row lengths
    "gen:banded:1000000:8",    // 1 M rows, 17 M nnz, band of half-width 8
};
// Sized so the CPU main job (every CPU format × 2 ops × 2 precisions) stays near ten minutes
// on 2 cores.
const std::vector<std::string> kCpuGenerated = {
    "gen:lap2d:300",           // 90 k rows, 0.45 M nnz
    "gen:random_k:100000:8",   // 100 k rows, 0.8 M nnz
    "gen:rmat:15:8",           // 33 k rows, ~0.26 M nnz
};
const std::vector<std::string> kSmall = {
    "gen:lap2d:64",
    "gen:random_k:5000:8",
    "gen:banded:10000:4",
};
constexpr std::size_t kCpuBundledMaxBytes = std::size_t(4) << 20;

std::vector<std::string> read_list(const std::string& path) {
  std::ifstream in(path);
  if (!in) return {};
  std::vector<std::string> specs;
  std::string line;
  while (std::getline(in, line)) {
    if (auto hash = line.find('#'); hash != std::string::npos) line.resize(hash);
    const auto b = line.find_first_not_of(" \t\r");
    if (b == std::string::npos) continue;
    const auto e = line.find_last_not_of(" \t\r");
    specs.push_back(line.substr(b, e - b + 1));
  }
  return specs;
}
}  // namespace

const std::vector<SuiteInfo>& suites() {
  static const std::vector<SuiteInfo> all = {
      {"default", "gpu on the cuda backend, cpu on the cpu backend"},
      {"gpu", "generated matrices of 17-56 M nonzeros + bundled real ones (+ G3_circuit)"},
      {"cpu", "generated matrices of 1-3 M nonzeros + bundled real ones under 4 MiB"},
      {"small", "three tiny generated matrices (a smoke test)"},
      {"FILE", "any other name: a file with one matrix spec per line ('#' comments)"},
  };
  return all;
}

std::vector<std::string> bundled_matrices(std::size_t max_file_bytes) {
  const char* env = std::getenv("SPMAT_BENCH_MATRICES");
  const fs::path dir = env && *env ? fs::path(env) : fs::path("bench") / "matrices";
  std::vector<std::string> out;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return out;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.size() < 7 || name.compare(name.size() - 7, 7, ".mtx.gz") != 0) continue;
    if (max_file_bytes && entry.file_size(ec) > max_file_bytes) continue;
    out.push_back(entry.path().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::string find_g3_circuit() {
  const char* env = std::getenv("SPMAT_MATRIX_DIR");
  const fs::path dir = env && *env ? fs::path(env) : fs::path("data");
  std::error_code ec;
  const fs::path g3 = dir / "G3_circuit.mtx.gz";
  return fs::is_regular_file(g3, ec) ? g3.string() : std::string();
}

std::vector<std::string> suite_specs(std::string_view name, Backend backend) {
  if (name == "default") return suite_specs(backend == Backend::cuda ? "gpu" : "cpu", backend);
  std::vector<std::string> specs;
  if (name == "gpu") {
    specs = kGpuGenerated;
    for (auto& m : bundled_matrices()) specs.push_back(m);
    if (auto g3 = find_g3_circuit(); !g3.empty()) {
      const bool bundled = std::any_of(specs.begin(), specs.end(), [](const std::string& s) {
        return s.find("G3_circuit") != std::string::npos;
      });
      if (!bundled) specs.push_back(g3);
    }
    return specs;
  }
  if (name == "cpu") {
    specs = kCpuGenerated;
    for (auto& m : bundled_matrices(kCpuBundledMaxBytes)) specs.push_back(m);
    return specs;
  }
  if (name == "small") return kSmall;
  std::error_code ec;
  if (fs::is_regular_file(std::string(name), ec)) return read_list(std::string(name));
  std::string names;
  for (const auto& s : suites()) names += (names.empty() ? "" : ", ") + s.name;
  throw ParseError("unknown suite '" + std::string(name) + "' (suites: " + names +
                   "; or a readable file listing one matrix spec per line)");
}

}  // namespace spmat::bench
