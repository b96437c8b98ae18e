// spmat/gen/rmat.cpp — R-MAT graphs (Chakrabarti, Zhan & Faloutsos 2004) with the Graph500
// parameters a = 0.57, b = c = 0.19, d = 0.05.
// SPDX-License-Identifier: MIT
//
// Edge e picks one quadrant per level, scale levels, from 32 random bits per level compared with
// integer thresholds ⌊a·2^32⌋, ⌊(a+b)·2^32⌋, ⌊(a+b+c)·2^32⌋ (so no floating point is involved).
// Unlike Graph500 there is no per-level parameter noise and no vertex relabelling: the heavy
// rows and columns sit at small indices. Self loops are kept. Repeated edges are SUMMED in
// generation order (so with values=ones a value is the edge's multiplicity).
#include <algorithm>
#include <utility>

#include "spmat/gen/build.hpp"

namespace spmat::gen::detail {

// Contract: 2^scale × 2^scale canonical CSR with at most edge_factor·2^scale entries. Edges are
// drawn in chunks of 2^16, chunk c from its own stream, so the edge list (and the summation
// order of repeats) is independent of the thread count. Memory: about 32 bytes per edge
// transiently (the edge list, then the row-sorted list), then the CSR. Work O(edges·scale) draws + a counting sort by row +
// a per-row sort by column.
template <class Value, class Index>
Csr<Value, Index> gen_rmat(const Args& a) {
  const std::int64_t scale = a.integer(0, "<scale>", 0, 62);
  const std::int64_t ef = a.integer(1, "<edge_factor>", 0, kMaxDim);
  const double pa = a.key_real("a", 0.57, 0.0, 1.0);
  const double pb = a.key_real("b", 0.19, 0.0, 1.0);
  const double pc = a.key_real("c", 0.19, 0.0, 1.0);
  if (pa + pb + pc > 1.0 + 1e-12) a.fail("a + b + c must be at most 1 (d = 1 - a - b - c)");
  const std::uint64_t seed = a.seed(), salt = name_salt("rmat");
  const ValueKind kind = a.values();
  const std::int64_t n = std::int64_t(1) << scale;
  const std::int64_t edges = checked_product(a.text(), "edge_factor·2^scale edges", {ef, n});
  check_index_range<Index>(n, n, 0, a.text());

  auto thr = [](double p) {
    return static_cast<std::uint64_t>(std::min(1.0, p) * 4294967296.0);
  };
  const std::uint64_t t_a = thr(pa), t_ab = thr(pa + pb), t_abc = thr(pa + pb + pc);

  // 1. The edge list.
  struct Edge {
    Index row, col;
    double value;
  };
  std::vector<Edge> edge(static_cast<std::size_t>(edges));
  constexpr std::int64_t kChunk = std::int64_t(1) << 16;
  const std::int64_t chunks = (edges + kChunk - 1) / kChunk;
#pragma omp parallel for schedule(dynamic, 1) if (chunks > 1)
  for (std::int64_t c = 0; c < chunks; ++c) {
    Rng rng = Rng::stream(seed, salt, static_cast<std::uint64_t>(c));
    const std::int64_t end = std::min(edges, (c + 1) * kChunk);
    for (std::int64_t e = c * kChunk; e < end; ++e) {
      std::int64_t r = 0, col = 0;
      std::uint64_t bits = 0;
      for (std::int64_t level = 0; level < scale; ++level) {
        if ((level & 1) == 0) bits = rng.next();
        const std::uint64_t u = (level & 1) ? (bits >> 32) : (bits & 0xffffffffULL);
        const int down = u >= t_ab, right = (u >= t_a && u < t_ab) || u >= t_abc;
        r = (r << 1) | down;
        col = (col << 1) | right;
      }
      edge[e] = {static_cast<Index>(r), static_cast<Index>(col), draw_value(rng, kind)};
    }
  }

  // 2. Stable counting sort by row.
  std::vector<std::int64_t> start(static_cast<std::size_t>(n) + 1, 0);
  for (const Edge& e : edge) ++start[static_cast<std::size_t>(e.row) + 1];
  for (std::int64_t i = 0; i < n; ++i) start[i + 1] += start[i];
  std::vector<std::pair<Index, double>> sorted(edge.size());
  {
    std::vector<std::int64_t> next(start.begin(), start.end() - 1);
    for (const Edge& e : edge) sorted[next[e.row]++] = {e.col, e.value};
  }
  std::vector<Edge>().swap(edge);

  // 3. Per row: stable sort by column, sum repeats in generation order, compact in place.
  std::vector<std::int64_t> len(static_cast<std::size_t>(n), 0);
#pragma omp parallel for schedule(dynamic, 256) if (n >= 4096)
  for (std::int64_t i = 0; i < n; ++i) {
    auto first = sorted.begin() + start[i], last = sorted.begin() + start[i + 1];
    std::stable_sort(first, last, [](const auto& x, const auto& y) { return x.first < y.first; });
    std::int64_t out = 0;
    for (auto it = first; it != last; ++it) {
      if (out > 0 && first[out - 1].first == it->first)
        first[out - 1].second += it->second;
      else
        first[out++] = *it;
    }
    len[i] = out;
  }
  return build_rows<Value, Index>(
      a.text(), n, n, [&](std::int64_t i, std::vector<std::uint64_t>&) { return len[i]; },
      [&](std::int64_t i, std::int64_t l, Index* cols, Value* vals, std::vector<std::uint64_t>&) {
        for (std::int64_t k = 0; k < l; ++k) {
          cols[k] = sorted[start[i] + k].first;
          vals[k] = static_cast<Value>(sorted[start[i] + k].second);
        }
      });
}

#define SPMAT_INSTANTIATE(V, I) template Csr<V, I> gen_rmat<V, I>(const Args&);
SPMAT_FOR_EACH_TYPE_PAIR(SPMAT_INSTANTIATE)
#undef SPMAT_INSTANTIATE

}  // namespace spmat::gen::detail
