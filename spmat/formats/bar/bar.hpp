// spmat/formats/bar/bar.hpp — BAR: BRO-aware row reordering (paper Alg. 2, spec §6 and §9.9-10).
// SPDX-License-Identifier: MIT
//
// BAR groups the rows into clusters of h rows (one BRO-ELL slice each) so as to minimise the
// modelled memory transactions of Eq. (1) with the spec's corrections:
//   Φ = Σ_slices ( ⌈Σ_j d(S,j) / α⌉ + Σ_j c(S,j) )
//   d(S,j) = max_{r∈S} Γ(δ_{r,j})                 (bit width of column position j)
//   c(S,j) = |∪_{r∈S} Ω(c_{r,j})|                 (distinct x cache lines at position j;
//                                                   absolute columns, padding excluded)
// The constant factor h/w is dropped (it does not change the argmin). Ω(c) = c·value_bytes /
// line_bytes (128-byte lines by default).
//
// Two algorithms return the same kind of result, `order[p]` = the original row stored at
// position p (a permutation of 0..rows-1):
//   greedy — Algorithm 2 as printed, with every choice fixed: rows sorted by length, longest
//            first (ties: lower row index first); cluster t (t = 0..v-1, v = ⌈rows/h⌉) seeded with
//            sorted row t·h; the other rows, in sorted order, go to the cluster of least cost
//            increase ΔΦ among the clusters that are not full (ties: lowest cluster index).
//            Cluster capacities are h, except the last: rows − (v−1)·h (so h ∤ rows is fine).
//            Time O(nnz·v): for small matrices and as the reference of the fast variant.
//   fast   — the same, but a row at sorted position p only considers the non-full clusters
//            within `window` of its home cluster ⌊p/h⌋ (bucketed candidates, spec §10); if all are
//            full, the nearest non-full cluster. Time O(nnz·(2·window+1)), memory O(nnz).
// Both evaluate ΔΦ exactly with running per-(cluster, position) maxima and a hash set of
// (cluster, position, line) triples (64-bit hashes; a collision can only misjudge a cost).
#pragma once
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "spmat/core/csr.hpp"
#include "spmat/core/options.hpp"

namespace spmat::bar {

enum class Algo { greedy, fast };

struct Params {
  int h = 256;                   ///< slice height (cluster size)
  int sym_len = 32;              ///< α, the symbol length in bits
  int value_bytes = 8;           ///< sizeof(Value), for Ω
  int line_bytes = 128;          ///< cache line of x
  std::int64_t max_len = -1;     ///< consider only the first max_len entries of a row (HYB); -1 all
  Algo algo = Algo::fast;
  int window = 4;                ///< fast: clusters on either side of the home cluster
};

/// Parses "greedy" / "fast"; "auto" picks greedy when nnz·⌈rows/h⌉ <= 2e8, else fast.
Algo parse_algo(const std::string& name, std::int64_t rows, std::int64_t nnz, int h);

/// The BAR row order of the matrix given by row_ptr (rows+1) and col_idx (nnz, sorted per row).
template <class Index>
std::vector<std::int64_t> order(std::int64_t rows, std::span<const Index> row_ptr,
                                std::span<const Index> col_idx, const Params& p);

/// Φ (Eq. 1 as corrected above) of the slices formed by `order` (identity when empty).
template <class Index>
std::int64_t cost(std::int64_t rows, std::span<const Index> row_ptr,
                  std::span<const Index> col_idx, const Params& p,
                  const std::vector<std::int64_t>& order);


/// The BAR order a BRO format's build uses: slices of h rows, symbols of sym_len bits, the first
/// max_len entries of each row (-1: all), and the options bar_algo (auto, greedy, fast) and
/// bar_window.
template <class Value, class Index>
std::vector<std::int64_t> order_for(const Csr<Value, Index>& a, const std::string& algo, int window,
                                    int h, int sym_len, std::int64_t max_len) {
  Params p;
  p.h = h;
  p.sym_len = sym_len;
  p.value_bytes = static_cast<int>(sizeof(Value));
  p.max_len = max_len;
  p.algo = parse_algo(algo, a.rows, a.nnz(), h);
  p.window = window;
  return order<Index>(a.rows, a.row_ptr, a.col_idx, p);
}

}  // namespace spmat::bar
