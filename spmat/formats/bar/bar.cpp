// spmat/formats/bar/bar.cpp — BAR row reordering: exact greedy (Alg. 2) and the windowed variant.
// SPDX-License-Identifier: MIT
#include "spmat/formats/bar/bar.hpp"

#include <algorithm>
#include <numeric>

#include "spmat/core/error.hpp"
#include "spmat/formats/bro_common/bro_common.hpp"

namespace spmat::bar {

namespace {

std::uint64_t mix(std::uint64_t z) {  // splitmix64 finaliser
  z += 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

/// Open-addressing set of 64-bit hashes of (cluster, position, line); 0 marks an empty slot.
class TripleSet {
 public:
  explicit TripleSet(std::int64_t expected) {
    std::size_t n = 16;
    while (n < static_cast<std::size_t>(expected) * 2) n <<= 1;
    slots_.assign(n, 0);
    mask_ = n - 1;
  }
  static std::uint64_t key(std::int64_t cluster, std::int64_t pos, std::uint64_t line) {
    const std::uint64_t k = mix(mix(static_cast<std::uint64_t>(cluster) * 0x100000001b3ull ^
                                    static_cast<std::uint64_t>(pos)) ^ line);
    return k ? k : 1;
  }
  bool contains(std::uint64_t k) const {
    for (std::size_t i = k & mask_;; i = (i + 1) & mask_) {
      if (slots_[i] == k) return true;
      if (slots_[i] == 0) return false;
    }
  }
  void insert(std::uint64_t k) {
    for (std::size_t i = k & mask_;; i = (i + 1) & mask_) {
      if (slots_[i] == k) return;
      if (slots_[i] == 0) {
        slots_[i] = k;
        return;
      }
    }
  }

 private:
  std::vector<std::uint64_t> slots_;
  std::size_t mask_ = 0;
};

/// Per-row Γ(δ) and x lines of the considered entries, flattened.
struct RowData {
  std::vector<std::int64_t> ptr;
  std::vector<std::uint8_t> gam;
  std::vector<std::uint64_t> line;
};

template <class Index>
RowData row_data(std::int64_t rows, std::span<const Index> row_ptr, std::span<const Index> col_idx,
                 const Params& p) {
  RowData d;
  d.ptr.assign(static_cast<std::size_t>(rows) + 1, 0);
  for (std::int64_t r = 0; r < rows; ++r) {
    std::int64_t len = row_ptr[r + 1] - row_ptr[r];
    if (p.max_len >= 0) len = std::min(len, p.max_len);
    d.ptr[r + 1] = d.ptr[r] + len;
  }
  d.gam.resize(static_cast<std::size_t>(d.ptr[rows]));
  d.line.resize(d.gam.size());
  for (std::int64_t r = 0; r < rows; ++r) {
    std::int64_t prev = -1;
    for (std::int64_t j = 0; j < d.ptr[r + 1] - d.ptr[r]; ++j) {
      const std::int64_t c = col_idx[row_ptr[r] + j];
      d.gam[d.ptr[r] + j] = static_cast<std::uint8_t>(bro::gamma(static_cast<std::uint64_t>(c - prev)));
      d.line[d.ptr[r] + j] =
          static_cast<std::uint64_t>(c) * static_cast<std::uint64_t>(p.value_bytes) /
          static_cast<std::uint64_t>(p.line_bytes);
      prev = c;
    }
  }
  return d;
}

struct Clusters {
  std::vector<std::vector<std::uint8_t>> width;  // running max Γ per position
  std::vector<std::int64_t> bits;                // Σ_j width
  std::vector<std::vector<std::int64_t>> members;
  std::vector<std::int64_t> cap;
  TripleSet lines;
  int alpha;

  Clusters(std::int64_t v, std::int64_t rows, int h, std::int64_t nnz, int a)
      : width(v), bits(v, 0), members(v), cap(v, h), lines(nnz), alpha(a) {
    if (v > 0) cap[v - 1] = rows - (v - 1) * h;
  }
  bool full(std::int64_t m) const { return static_cast<std::int64_t>(members[m].size()) >= cap[m]; }
  std::int64_t ceil_div(std::int64_t b) const { return (b + alpha - 1) / alpha; }

  /// ΔΦ of adding row r to cluster m.
  std::int64_t delta(const RowData& d, std::int64_t r, std::int64_t m) const {
    const auto& w = width[m];
    std::int64_t add_bits = 0, new_lines = 0;
    for (std::int64_t j = 0; j < d.ptr[r + 1] - d.ptr[r]; ++j) {
      const int g = d.gam[d.ptr[r] + j];
      const int cur = j < static_cast<std::int64_t>(w.size()) ? w[j] : 0;
      if (g > cur) add_bits += g - cur;
      if (!lines.contains(TripleSet::key(m, j, d.line[d.ptr[r] + j]))) ++new_lines;
    }
    return ceil_div(bits[m] + add_bits) - ceil_div(bits[m]) + new_lines;
  }

  void add(const RowData& d, std::int64_t r, std::int64_t m) {
    auto& w = width[m];
    const std::int64_t len = d.ptr[r + 1] - d.ptr[r];
    if (static_cast<std::int64_t>(w.size()) < len) w.resize(static_cast<std::size_t>(len), 0);
    for (std::int64_t j = 0; j < len; ++j) {
      const std::uint8_t g = d.gam[d.ptr[r] + j];
      if (g > w[j]) {
        bits[m] += g - w[j];
        w[j] = g;
      }
      lines.insert(TripleSet::key(m, j, d.line[d.ptr[r] + j]));
    }
    members[m].push_back(r);
  }
};

}  // namespace

Algo parse_algo(const std::string& name, std::int64_t rows, std::int64_t nnz, int h) {
  if (name == "greedy") return Algo::greedy;
  if (name == "fast") return Algo::fast;
  if (name == "auto") {
    const double work = static_cast<double>(nnz) * static_cast<double>((rows + h - 1) / std::max(h, 1));
    return work <= 2e8 ? Algo::greedy : Algo::fast;
  }
  throw ParseError("bar_algo=" + name + " is not one of auto, greedy, fast");
}

template <class Index>
std::vector<std::int64_t> order(std::int64_t rows, std::span<const Index> row_ptr,
                                std::span<const Index> col_idx, const Params& p) {
  if (p.h < 1) throw ParseError("BAR: h must be >= 1");
  if (rows == 0) return {};
  const RowData d = row_data(rows, row_ptr, col_idx, p);
  std::vector<std::int64_t> sorted(static_cast<std::size_t>(rows));
  std::iota(sorted.begin(), sorted.end(), 0);
  std::stable_sort(sorted.begin(), sorted.end(), [&](std::int64_t a, std::int64_t b) {
    return d.ptr[a + 1] - d.ptr[a] > d.ptr[b + 1] - d.ptr[b];
  });
  const std::int64_t v = (rows + p.h - 1) / p.h;
  Clusters cl(v, rows, p.h, d.ptr[rows] + 1, p.sym_len);
  std::vector<char> seeded(static_cast<std::size_t>(rows), 0);
  for (std::int64_t t = 0; t < v; ++t) {
    cl.add(d, sorted[t * p.h], t);
    seeded[t * p.h] = 1;
  }
  const std::int64_t win = std::max(0, p.window);
  for (std::int64_t pos = 0; pos < rows; ++pos) {
    if (seeded[pos]) continue;
    const std::int64_t r = sorted[pos];
    std::int64_t lo = 0, hi = v - 1;
    if (p.algo == Algo::fast) {
      const std::int64_t home = std::min(pos / p.h, v - 1);
      lo = std::max<std::int64_t>(0, home - win);
      hi = std::min(v - 1, home + win);
    }
    std::int64_t best = -1, best_cost = 0;
    for (std::int64_t m = lo; m <= hi; ++m) {
      if (cl.full(m)) continue;
      const std::int64_t c = cl.delta(d, r, m);
      if (best < 0 || c < best_cost) best = m, best_cost = c;
    }
    if (best < 0) {  // fast: the window is full; take the nearest cluster with room
      for (std::int64_t off = 1; best < 0; ++off) {
        if (lo - off >= 0 && !cl.full(lo - off)) best = lo - off;
        else if (hi + off < v && !cl.full(hi + off)) best = hi + off;
      }
    }
    cl.add(d, r, best);
  }
  std::vector<std::int64_t> out;
  out.reserve(static_cast<std::size_t>(rows));
  for (std::int64_t t = 0; t < v; ++t) out.insert(out.end(), cl.members[t].begin(), cl.members[t].end());
  return out;
}

template <class Index>
std::int64_t cost(std::int64_t rows, std::span<const Index> row_ptr,
                  std::span<const Index> col_idx, const Params& p,
                  const std::vector<std::int64_t>& ord) {
  if (rows == 0) return 0;
  const RowData d = row_data(rows, row_ptr, col_idx, p);
  const std::int64_t v = (rows + p.h - 1) / p.h;
  Clusters cl(v, rows, p.h, d.ptr[rows] + 1, p.sym_len);
  std::int64_t lines = 0;
  for (std::int64_t pos = 0; pos < rows; ++pos) {
    const std::int64_t r = ord.empty() ? pos : ord[pos], m = pos / p.h;
    for (std::int64_t j = 0; j < d.ptr[r + 1] - d.ptr[r]; ++j)
      if (!cl.lines.contains(TripleSet::key(m, j, d.line[d.ptr[r] + j]))) ++lines;
    cl.add(d, r, m);
  }
  std::int64_t total = lines;
  for (std::int64_t m = 0; m < v; ++m) total += cl.ceil_div(cl.bits[m]);
  return total;
}

#define SPMAT_INSTANTIATE(I)                                                                    \
  template std::vector<std::int64_t> order(std::int64_t, std::span<const I>, std::span<const I>, \
                                           const Params&);                                      \
  template std::int64_t cost(std::int64_t, std::span<const I>, std::span<const I>, const Params&, \
                             const std::vector<std::int64_t>&);
SPMAT_INSTANTIATE(std::int32_t)
SPMAT_INSTANTIATE(std::int64_t)
#undef SPMAT_INSTANTIATE

}  // namespace spmat::bar
