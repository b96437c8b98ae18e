// spmat/gen/structured.cpp — the stencil generators (lap2d, lap3d, lap3d27) and banded.
// SPDX-License-Identifier: MIT
#include "spmat/gen/build.hpp"

namespace spmat::gen::detail {

// Contract (stencils): an n×n (lap2d) or n×n×n grid, point (x, y, z) is row (z·n + y)·n + x.
// Row i holds the stencil's neighbours that lie inside the grid (Dirichlet boundary: outside
// points are dropped, so boundary rows are shorter), in increasing column order because the
// offsets are visited in (dz, dy, dx) lexicographic order. Values: centre 4 / 6 / 26, the
// others -1. nnz: 5n²-4n, 7n³-6n², (3n-2)³. Deterministic (no randomness); O(nnz) work.
template <class Value, class Index>
Csr<Value, Index> gen_stencil(const Args& a, int kind) {
  const std::int64_t n = a.integer(0, "<n>", 0, kMaxDim);
  const bool three_d = kind != lap2d;
  const std::int64_t rows = checked_product(a.text(), "rows", {n, n, three_d ? n : 1});
  const __int128 m = n;
  __int128 nnz = 0;
  if (n > 0) {
    if (kind == lap2d) nnz = 5 * m * m - 4 * m;
    if (kind == lap3d) nnz = 7 * m * m * m - 6 * m * m;
    if (kind == lap3d27) nnz = (3 * m - 2) * (3 * m - 2) * (3 * m - 2);
  }
  check_sizes<Index>(a.text(), rows, rows, nnz);
  const Value centre = kind == lap2d ? 4 : kind == lap3d ? 6 : 26;
  const std::int64_t nz = three_d ? n : 1;
  auto in_stencil = [kind](int dz, int dy, int dx) {
    const int manhattan = (dz != 0) + (dy != 0) + (dx != 0);
    return kind == lap3d27 || manhattan <= 1;
  };
  // Visits the neighbours of row i in increasing column order.
  auto visit = [&](std::int64_t i, auto&& emit) {
    const std::int64_t x = i % n, y = (i / n) % n, z = i / (n * n);
    for (int dz = -1; dz <= 1; ++dz) {
      if (z + dz < 0 || z + dz >= nz) continue;
      for (int dy = -1; dy <= 1; ++dy) {
        if (y + dy < 0 || y + dy >= n) continue;
        for (int dx = -1; dx <= 1; ++dx) {
          if (x + dx < 0 || x + dx >= n || !in_stencil(dz, dy, dx)) continue;
          const bool c = dz == 0 && dy == 0 && dx == 0;
          emit(((z + dz) * n + (y + dy)) * n + (x + dx), c ? centre : Value(-1));
        }
      }
    }
  };
  return build_rows<Value, Index>(
      a.text(), rows, rows,
      [&](std::int64_t i, std::vector<std::uint64_t>&) {
        std::int64_t len = 0;
        visit(i, [&](std::int64_t, Value) { ++len; });
        return len;
      },
      [&](std::int64_t i, std::int64_t, Index* cols, Value* vals, std::vector<std::uint64_t>&) {
        visit(i, [&](std::int64_t c, Value v) {
          *cols++ = static_cast<Index>(c);
          *vals++ = v;
        });
      });
}

// Contract (banded): n×n, row i holds every column j with |i-j| <= bandwidth (clipped to the
// matrix), values drawn from row i's own stream (values= key), so the result is the same for
// any thread count. nnz = n(2b+1) - b(b+1) with b = min(bandwidth, n-1). O(nnz) work.
template <class Value, class Index>
Csr<Value, Index> gen_banded(const Args& a) {
  const std::int64_t n = a.integer(0, "<n>", 0, kMaxDim);
  const std::int64_t bw = a.integer(1, "<bandwidth>", 0, kMaxDim);
  const std::int64_t b = n > 0 ? std::min(bw, n - 1) : 0;
  const __int128 nnz = n > 0 ? static_cast<__int128>(n) * (2 * b + 1) - static_cast<__int128>(b) * (b + 1) : 0;
  check_sizes<Index>(a.text(), n, n, nnz);
  const std::uint64_t seed = a.seed(), salt = name_salt("banded");
  const ValueKind kind = a.values();
  return build_rows<Value, Index>(
      a.text(), n, n,
      [&](std::int64_t i, std::vector<std::uint64_t>&) {
        return std::min(n - 1, i + b) - std::max<std::int64_t>(0, i - b) + 1;
      },
      [&](std::int64_t i, std::int64_t len, Index* cols, Value* vals, std::vector<std::uint64_t>&) {
        Rng rng = Rng::stream(seed, salt, static_cast<std::uint64_t>(i));
        const std::int64_t first = std::max<std::int64_t>(0, i - b);
        for (std::int64_t k = 0; k < len; ++k) {
          cols[k] = static_cast<Index>(first + k);
          vals[k] = static_cast<Value>(draw_value(rng, kind));
        }
      });
}

#define SPMAT_INSTANTIATE(V, I)                                  \
  template Csr<V, I> gen_stencil<V, I>(const Args&, int);        \
  template Csr<V, I> gen_banded<V, I>(const Args&);
SPMAT_FOR_EACH_TYPE_PAIR(SPMAT_INSTANTIATE)
#undef SPMAT_INSTANTIATE

}  // namespace spmat::gen::detail
