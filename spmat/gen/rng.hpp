// spmat/gen/rng.hpp — the generators' own PRNG (splitmix64 + xoshiro256**) and exact samplers.
// SPDX-License-Identifier: MIT
//
// Why our own: std::uniform_*_distribution output is implementation-defined, so a matrix made
// with it would differ between standard libraries. Everything here is integer arithmetic
// (plus one exactly rounded multiply for doubles), so the same seed gives the same bits on
// every machine. Parallel generators derive one independent stream per row (or block, or
// chunk) from (seed, generator salt, item), so the result does not depend on the thread count.
#pragma once
#include <algorithm>
#include <cstdint>
#include <string_view>
#include <vector>

namespace spmat::gen {

/// splitmix64 finaliser: a bijective 64-bit mix (Steele, Lea & Flood 2014).
constexpr std::uint64_t mix64(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

/// FNV-1a of a name: the per-generator salt, so two generators never share streams.
constexpr std::uint64_t name_salt(std::string_view name) {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for (char c : name) h = (h ^ static_cast<unsigned char>(c)) * 0x100000001b3ULL;
  return h;
}

/// xoshiro256** (Blackman & Vigna 2018), seeded from a 64-bit key through splitmix64.
class Rng {
 public:
  explicit Rng(std::uint64_t key) {
    std::uint64_t x = key;
    for (auto& w : s_) {
      x += 0x9e3779b97f4a7c15ULL;
      w = mix64(x);
    }
  }
  /// The stream for `item` (a row, block or chunk) of a generator keyed by (seed, salt).
  static Rng stream(std::uint64_t seed, std::uint64_t salt, std::uint64_t item,
                    std::uint64_t sub = 0) {
    return Rng(mix64(mix64(mix64(seed ^ salt) ^ item) + sub));
  }

  std::uint64_t next() {
    const std::uint64_t result = rotl(s_[1] * 5, 7) * 9;
    const std::uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = rotl(s_[3], 45);
    return result;
  }
  /// Uniform double in [0, 1): the top 53 bits times 2^-53 (exact).
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
  /// Uniform double in (0, 1]: never 0, safe for log().
  double uniform_open0() { return static_cast<double>((next() >> 11) + 1) * 0x1.0p-53; }
  /// Uniform integer in [0, n), n > 0, unbiased (Lemire 2019 multiply-shift with rejection).
  std::uint64_t below(std::uint64_t n) {
    unsigned __int128 m = static_cast<unsigned __int128>(next()) * n;
    auto low = static_cast<std::uint64_t>(m);
    if (low < n) {
      const std::uint64_t threshold = (0 - n) % n;
      while (low < threshold) {
        m = static_cast<unsigned __int128>(next()) * n;
        low = static_cast<std::uint64_t>(m);
      }
    }
    return static_cast<std::uint64_t>(m >> 64);
  }

 private:
  static constexpr std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  std::uint64_t s_[4];
};

/// How stored values are drawn (the `values=` key).
enum class ValueKind { uniform, ones, integers };

/// One value of the given kind from `rng`. uniform: an odd multiple of 2^-24 in (-1, 1) — never
/// zero, and exactly representable in float, so the fp32 matrix equals the fp64 one rounded
/// (it is the same numbers). integers: one of ±1..±4 (exact sums). ones: 1 (draws nothing).
inline double draw_value(Rng& rng, ValueKind kind) {
  switch (kind) {
    case ValueKind::ones: return 1.0;
    case ValueKind::integers: {
      const auto r = static_cast<int>(rng.below(8));
      return r < 4 ? -(r + 1) : r - 3;
    }
    case ValueKind::uniform: break;
  }
  const auto j = static_cast<double>(rng.next() >> 40);  // 24 bits
  return (2.0 * j + 1.0) * 0x1.0p-24 - 1.0;
}

/// k distinct integers drawn uniformly from [0, n) (every k-subset equally likely), written to
/// `out` in increasing order. Requires 0 <= k <= n. Work O(k log k) when k is small against n,
/// O(n) otherwise. `scratch` is reused between calls to avoid allocation.
template <class Index>
void sample_distinct(Rng& rng, std::int64_t k, std::int64_t n, Index* out,
                     std::vector<std::uint64_t>& scratch) {
  if (k <= 0) return;
  if (k * 4 >= n) {
    // Selection sampling (Knuth, TAOCP vol. 2, Algorithm S): output comes out sorted.
    std::int64_t need = k;
    for (std::int64_t i = 0; i < n && need > 0; ++i)
      if (static_cast<std::int64_t>(rng.below(static_cast<std::uint64_t>(n - i))) < need)
        out[k - need--] = static_cast<Index>(i);
    return;
  }
  // Draw, sort, drop repeats, draw the missing ones again: the first k distinct values of an
  // i.i.d. uniform sequence, which is a uniform k-subset. Expected extra draws < k/3.
  scratch.clear();
  while (static_cast<std::int64_t>(scratch.size()) < k) {
    const std::int64_t missing = k - static_cast<std::int64_t>(scratch.size());
    const std::size_t old = scratch.size();
    for (std::int64_t i = 0; i < missing; ++i) scratch.push_back(rng.below(static_cast<std::uint64_t>(n)));
    std::sort(scratch.begin() + static_cast<std::ptrdiff_t>(old), scratch.end());
    std::inplace_merge(scratch.begin(), scratch.begin() + static_cast<std::ptrdiff_t>(old),
                       scratch.end());
    scratch.erase(std::unique(scratch.begin(), scratch.end()), scratch.end());
  }
  for (std::int64_t i = 0; i < k; ++i) out[i] = static_cast<Index>(scratch[static_cast<std::size_t>(i)]);
}

}  // namespace spmat::gen
