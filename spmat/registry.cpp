// spmat/registry.cpp — the one list of registered formats.
// SPDX-License-Identifier: MIT
#include "spmat/registry.hpp"

#include <string>

#include "spmat/config.hpp"
#include "spmat/core/device_memory.hpp"
#if SPMAT_WITH_CUDA
#include <cuda_runtime_api.h>

#include "spmat/cuda/buffer.hpp"
#endif

namespace spmat {

// Order = the order of `spmat formats` and of benchmark tables: the planner's "auto" and
// "tune" first, then the built-in formats, then the vendor baselines.
std::vector<FormatEntry> planned_entries();  // spmat/plan: "auto" and "tune"
std::vector<FormatEntry> format_entries();   // spmat/formats/format_entries.cpp
#if SPMAT_WITH_CUDA
std::vector<FormatEntry> cusparse_entries();  // spmat/vendor/cusparse (CUDA builds only)
#endif

const std::vector<FormatEntry>& registry() {
  static const std::vector<FormatEntry> all = [] {
    std::vector<FormatEntry> v;
    for (auto* entries : {
             &planned_entries,
             &format_entries,
#if SPMAT_WITH_CUDA
             &cusparse_entries,
#endif
         })
      for (auto& e : entries()) v.push_back(std::move(e));
    return v;
  }();
  return all;
}

const FormatEntry& find_format(std::string_view name) {
  for (const auto& e : registry())
    if (e.name == name) return e;
  std::string names;
  for (const auto& e : registry()) names += (names.empty() ? "" : ", ") + e.name;
  throw UnsupportedError("unknown format '" + std::string(name) + "' (known formats: " + names +
                         ")");
}

FormatSpec FormatSpec::parse(std::string_view spec) {
  const auto colon = spec.find(':');
  if (colon == std::string_view::npos) return {std::string(spec), {}};
  return {std::string(spec.substr(0, colon)), FormatOptions::parse(spec.substr(colon + 1))};
}

bool cuda_compiled() { return kCudaCompiled; }

bool cuda_available() {
#if SPMAT_WITH_CUDA
  static const bool available = [] {
    int n = 0;
    // Any error (no driver, driver too old, no device) means "no GPU".
    if (cudaGetDeviceCount(&n) != cudaSuccess) {
      cudaGetLastError();
      return false;
    }
    return n > 0;
  }();
  return available;
#else
  return false;
#endif
}

void release_cached_device_memory() {
#if SPMAT_WITH_CUDA
  if (cuda_available()) cuda::release_cached_memory();
#endif
}

}  // namespace spmat
