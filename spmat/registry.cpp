// spmat/registry.cpp — the one list of registered formats.
// SPDX-License-Identifier: MIT
#include "spmat/registry.hpp"

#include <string>

#include "spmat/config.hpp"
#if SPMAT_WITH_CUDA
#include <cuda_runtime_api.h>
#endif

namespace spmat {

// Each format folder defines one function returning its entries (a storage may be registered
// under several names, one per kernel choice). Adding a format = one line in each list below.
// Order = the order of `spmat formats` and of benchmark tables: the planner's "auto" and
// "tune" first, then baselines.
std::vector<FormatEntry> planned_entries();  // spmat/plan: "auto" and "tune"
std::vector<FormatEntry> csr_entries();
std::vector<FormatEntry> coo_entries();
std::vector<FormatEntry> csc_entries();
std::vector<FormatEntry> ell_entries();
std::vector<FormatEntry> ellr_entries();
std::vector<FormatEntry> sell_entries();
std::vector<FormatEntry> hyb_entries();
std::vector<FormatEntry> csb_entries();
std::vector<FormatEntry> gcsb_entries();
std::vector<FormatEntry> bro_ell_entries();
std::vector<FormatEntry> bro_coo_entries();
std::vector<FormatEntry> bro_hyb_entries();
std::vector<FormatEntry> bro_csr_entries();
std::vector<FormatEntry> bccoo_entries();
std::vector<FormatEntry> bcoo_entries();
std::vector<FormatEntry> hisparse_entries();
std::vector<FormatEntry> tiled_entries();
#if SPMAT_WITH_CUDA
std::vector<FormatEntry> cusparse_entries();  // spmat/vendor/cusparse (CUDA builds only)
#endif

const std::vector<FormatEntry>& registry() {
  static const std::vector<FormatEntry> all = [] {
    std::vector<FormatEntry> v;
    for (auto* entries : {
             &planned_entries,
             &csr_entries,
             &coo_entries,
             &csc_entries,
             &ell_entries,
             &ellr_entries,
             &sell_entries,
             &hyb_entries,
             &csb_entries,
             &gcsb_entries,
             &bro_ell_entries,
             &bro_coo_entries,
             &bro_hyb_entries,
             &bro_csr_entries,
             &bccoo_entries,
             &bcoo_entries,
             &hisparse_entries,
             &tiled_entries,
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

}  // namespace spmat
