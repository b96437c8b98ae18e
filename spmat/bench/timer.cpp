// spmat/bench/timer.cpp — CPU timing, the OpenMP copy-bandwidth probe and the CPU description.
// SPDX-License-Identifier: MIT
#include "spmat/bench/timer.hpp"

#include <omp.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <memory>

namespace spmat::bench {

TimingStats summarize(std::vector<double> t) {
  TimingStats s;
  s.repetitions = static_cast<int>(t.size());
  if (t.empty()) return s;
  std::sort(t.begin(), t.end());
  const std::size_t n = t.size();
  s.median_ms = n % 2 ? t[n / 2] : 0.5 * (t[n / 2 - 1] + t[n / 2]);
  s.min_ms = t.front();
  s.max_ms = t.back();
  return s;
}

void release_host_threads() {
#ifdef _OPENMP
  if (!omp_in_parallel()) (void)omp_pause_resource_all(omp_pause_soft);  // -1: nothing to end
#endif
}

namespace cpu {

namespace {
std::size_t cache_bytes(int name) {
  const long v = sysconf(name);
  return v > 0 ? static_cast<std::size_t>(v) : 0;
}
}  // namespace

std::vector<double> time_runs(const std::function<void()>& run, int warmup, int reps,
                              bool flush_caches) {
  std::vector<char> flush;
  if (flush_caches) {
    std::size_t llc = std::max(cache_bytes(_SC_LEVEL3_CACHE_SIZE), cache_bytes(_SC_LEVEL2_CACHE_SIZE));
    if (llc == 0) llc = std::size_t(32) << 20;  // unknown: assume a 32 MiB last-level cache
    flush.resize(2 * llc);
  }
  for (int i = 0; i < warmup; ++i) run();
  std::vector<double> t;
  t.reserve(static_cast<std::size_t>(reps));
  for (int i = 0; i < reps; ++i) {
    if (flush_caches) std::memset(flush.data(), i & 0xFF, flush.size());
    t.push_back(wall_ms(run));
  }
  return t;
}

double copy_bandwidth_gbs() {
  const std::int64_t n = (std::int64_t(256) << 20) / static_cast<std::int64_t>(sizeof(double));
  std::unique_ptr<double[]> a(new double[static_cast<std::size_t>(n)]);
  std::unique_ptr<double[]> b(new double[static_cast<std::size_t>(n)]);
  // First touch in parallel, with the same static partition as the copy (NUMA placement).
#pragma omp parallel for schedule(static)
  for (std::int64_t i = 0; i < n; ++i) {
    a[i] = static_cast<double>(i);
    b[i] = 0;
  }
  auto copy = [&] {
#pragma omp parallel for schedule(static)
    for (std::int64_t i = 0; i < n; ++i) b[i] = a[i];
  };
  copy();  // warm-up
  std::vector<double> t;
  for (int i = 0; i < 20; ++i) t.push_back(wall_ms(copy));
  const double ms = summarize(t).median_ms;
  const double bytes = 2.0 * static_cast<double>(n) * sizeof(double);
  return ms > 0 ? bytes / (ms * 1e6) : 0;
}

DeviceDescription describe() {
  DeviceDescription d;
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) != 0) continue;
    const auto colon = line.find(':');
    if (colon != std::string::npos) {
      d.name = line.substr(colon + 1);
      d.name.erase(0, d.name.find_first_not_of(" \t"));
    }
    break;
  }
  if (d.name.empty()) d.name = "unknown CPU";
  d.sm_count = omp_get_max_threads();
  d.name += " (" + std::to_string(d.sm_count) + " threads)";
  d.l2_bytes = cache_bytes(_SC_LEVEL2_CACHE_SIZE);
  return d;
}

}  // namespace cpu
}  // namespace spmat::bench
