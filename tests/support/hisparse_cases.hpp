// tests/support/hisparse_cases.hpp — shared pieces of the HiSparse tests: random COO inputs and
// the (d, dense) option grid their batteries sweep.
// SPDX-License-Identifier: MIT
#pragma once
#include <cstdint>
#include <random>
#include <string>

#include "spmat/core/csr.hpp"
#include "spmat/core/options.hpp"

namespace spmat::testing {

/// Appends the entry (r, k, x) to `c`.
inline void add_entry(Coo<double, std::int64_t>& c, std::int64_t r, std::int64_t k, double x) {
  c.row_idx.push_back(r);
  c.col_idx.push_back(k);
  c.values.push_back(x);
}

/// m×n COO: every (r, k), row by row, where keep(r, k) holds is present with probability
/// `density` (one draw from `rng`), its value then uniform in [-2, 2) (a second draw).
template <class Keep>
Coo<double, std::int64_t> random_coo(std::int64_t m, std::int64_t n, double density,
                                     std::mt19937_64& rng, Keep keep) {
  std::uniform_real_distribution<double> u(0, 1), v(-2, 2);
  Coo<double, std::int64_t> c;
  c.rows = m;
  c.cols = n;
  for (std::int64_t r = 0; r < m; ++r)
    for (std::int64_t k = 0; k < n; ++k)
      if (keep(r, k) && u(rng) < density) add_entry(c, r, k, v(rng));
  return c;
}

/// fn(o, tag) for d in {2, 4, 16, 128} × dense in {auto, never}: o the HiSparse options, tag
/// "m×n d … dense=… seed …" for the failure messages of the m×n case.
template <class Fn>
void for_each_d_and_dense(std::int64_t m, std::int64_t n, std::uint64_t seed, Fn&& fn) {
  for (int d : {2, 4, 16, 128})
    for (const char* dense : {"auto", "never"}) {
      const FormatOptions o = FormatOptions().set("d", std::to_string(d)).set("dense", dense);
      const std::string tag = std::to_string(m) + "x" + std::to_string(n) + " d " +
                              std::to_string(d) + " dense=" + dense + " seed " +
                              std::to_string(seed);
      fn(o, tag);
    }
}

}  // namespace spmat::testing
