// spmat/plan/plan_cache.hpp — tuned decisions kept on disk, keyed by matrix structure and device.
// SPDX-License-Identifier: MIT
//
// Location: $SPMAT_CACHE_DIR, else $XDG_CACHE_HOME/spmat, else $HOME/.cache/spmat; one small
// text file per key. A file that cannot be read or parsed is ignored with a warning on stderr
// (and overwritten by the next tune), never trusted.
#pragma once
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "spmat/plan/plan.hpp"

namespace spmat {

/// A cached decision: the chosen format per operation and the measured times.
struct CachedPlan {
  std::vector<OpChoice> choices;
};

class PlanCache {
 public:
  explicit PlanCache(std::filesystem::path dir) : dir_(std::move(dir)) {}
  /// The directory from the environment (see above); empty path when none can be found.
  static PlanCache from_environment();
  const std::filesystem::path& dir() const { return dir_; }
  std::optional<CachedPlan> load(const std::string& key) const;
  /// Best effort: a cache that cannot be written costs a warning, not an error.
  void store(const std::string& key, const FormatPlan& p) const;
  std::filesystem::path file_for(const std::string& key) const;

 private:
  std::filesystem::path dir_;
};

/// Fingerprint, device name, precision, index type, library version and the request.
std::string plan_cache_key(std::uint64_t fingerprint, const FormatPlan& p, const PlanRequest& r,
                           std::string_view index_type);
/// Takes the cached choices into `p` when they answer the same operations with formats that
/// exist; false (and `p` unchanged) otherwise.
bool apply_cached(FormatPlan& p, const CachedPlan& c);

}  // namespace spmat
