// spmat/plan/stats.cpp — matrix statistics and the structural fingerprint.
// SPDX-License-Identifier: MIT
#include "spmat/plan/stats.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <vector>

namespace spmat {

template <class Value, class Index>
MatrixStats matrix_stats(const Csr<Value, Index>& a, bool with_columns) {
  MatrixStats s;
  s.rows = a.rows;
  s.cols = a.cols;
  s.nnz = a.nnz();
  if (s.rows <= 0) return s;
  s.mean_row = static_cast<double>(s.nnz) / static_cast<double>(s.rows);
  const double heavy_len = 4.0 * s.mean_row;
  const double long_len = std::max(32.0 * s.mean_row, 1024.0);
  const double inv_cols = s.cols > 0 ? 1.0 / static_cast<double>(s.cols) : 0.0;
  const double col_per_row = static_cast<double>(s.cols) / static_cast<double>(s.rows);
  // Row lengths come from row_ptr alone; the column-dependent figures are estimated from every
  // stride-th row so that planning reads at most about 2 M entries whatever the matrix size.
  const std::int64_t rows = s.rows;
  const std::int64_t stride = std::max<std::int64_t>(1, s.nnz / (std::int64_t(2) << 20));
  std::int64_t max_row = 0, empty = 0, heavy = 0, lng = 0, sectors = 0, shifted = 0, sampled = 0,
               sampled_rows = 0;
  double sq = 0, spread = 0;
#pragma omp parallel for schedule(static) reduction(max : max_row) \
    reduction(+ : empty, heavy, lng, sectors, shifted, sampled, sampled_rows, sq, spread)
  for (std::int64_t r = 0; r < rows; ++r) {
    const std::int64_t b = a.row_ptr[r], e = a.row_ptr[r + 1], len = e - b;
    max_row = std::max(max_row, len);
    const double d = static_cast<double>(len) - s.mean_row;
    sq += d * d;
    if (len == 0) {
      ++empty;
      continue;
    }
    if (len > heavy_len) heavy += len;
    if (len > long_len) lng += len;
    if (r % stride != 0) continue;
    ++sampled_rows;
    sampled += len;
    const double diag = static_cast<double>(r) * col_per_row;
    std::int64_t last_sector = -1;
    for (std::int64_t i = b; i < e; ++i) {
      const std::int64_t c = a.col_idx[i];
      spread += std::abs(static_cast<double>(c) - diag) * inv_cols;
      const std::int64_t sector = c >> 2;  // 4 doubles per 32-byte sector
      if (sector != last_sector) ++sectors;
      last_sector = sector;
    }
    if (r > 0) {
      const std::int64_t pb = a.row_ptr[r - 1], pe = a.row_ptr[r];
      bool same = pe - pb == len;
      for (std::int64_t i = 0; same && i < len; ++i) same = a.col_idx[b + i] == a.col_idx[pb + i] + 1;
      if (same) ++shifted;
    }
  }
  s.max_row = max_row;
  s.row_cv = s.mean_row > 0 ? std::sqrt(sq / static_cast<double>(rows)) / s.mean_row : 0.0;
  s.empty_rows = static_cast<double>(empty) / static_cast<double>(rows);
  if (s.nnz > 0) {
    const double n = static_cast<double>(s.nnz);
    s.heavy_share = static_cast<double>(heavy) / n;
    s.long_share = static_cast<double>(lng) / n;
  }
  if (sampled > 0) {
    s.col_spread = spread / static_cast<double>(sampled);
    s.sectors_per_nnz = static_cast<double>(sectors) / static_cast<double>(sampled);
  }
  s.shifted_rows = sampled_rows > 0 ? static_cast<double>(shifted) / static_cast<double>(sampled_rows) : 0.0;

  {
    const std::int64_t slices = (rows + 31) / 32;
    double padded = 0;
#pragma omp parallel for schedule(static) reduction(+ : padded)
    for (std::int64_t sl = 0; sl < slices; ++sl) {
      const std::int64_t b = sl * 32, e = std::min(rows, b + 32);
      std::int64_t m = 0;
      for (std::int64_t r = b; r < e; ++r) m = std::max<std::int64_t>(m, a.row_ptr[r + 1] - a.row_ptr[r]);
      padded += static_cast<double>(m) * static_cast<double>(e - b);
    }
    const double n = static_cast<double>(s.nnz);
    s.slice_fill = padded > 0 ? n / padded : 1.0;
    s.ell_fill = s.max_row > 0 ? n / (static_cast<double>(s.max_row) * static_cast<double>(rows)) : 1.0;
  }

  // Column counts (every entry: a sample would make even columns look uneven), with relaxed
  // atomic increments, since a per-thread copy of a column-sized array would cost threads x cols
  // memory. Only when asked: they matter for planning Aᵀx alone.
  if (with_columns && s.cols > 0 && s.nnz > 0) {
    std::vector<std::int32_t> count(static_cast<std::size_t>(s.cols), 0);
    const std::int64_t nnz = s.nnz;
#pragma omp parallel for schedule(static)
    for (std::int64_t i = 0; i < nnz; ++i)
      std::atomic_ref<std::int32_t>(count[a.col_idx[i]]).fetch_add(1, std::memory_order_relaxed);
    const double mean_col = static_cast<double>(s.nnz) / static_cast<double>(s.cols);
    const double heavy_col = 4.0 * mean_col, long_col = std::max(32.0 * mean_col, 1024.0);
    std::int64_t max_col = 0, empty_c = 0, heavy_c = 0, long_c = 0;
    double sq_c = 0;
    const std::int64_t cols = s.cols;
#pragma omp parallel for schedule(static) reduction(max : max_col) \
    reduction(+ : empty_c, heavy_c, long_c, sq_c)
    for (std::int64_t c = 0; c < cols; ++c) {
      const std::int64_t len = count[c];
      max_col = std::max(max_col, len);
      const double d = static_cast<double>(len) - mean_col;
      sq_c += d * d;
      if (len == 0) ++empty_c;
      if (len > heavy_col) heavy_c += len;
      if (len > long_col) long_c += len;
    }
    s.max_col = max_col;
    s.col_cv = mean_col > 0 ? std::sqrt(sq_c / static_cast<double>(cols)) / mean_col : 0.0;
    s.empty_cols = static_cast<double>(empty_c) / static_cast<double>(cols);
    if (s.nnz > 0) {
      s.col_heavy_share = static_cast<double>(heavy_c) / static_cast<double>(s.nnz);
      s.col_long_share = static_cast<double>(long_c) / static_cast<double>(s.nnz);
    }
  }
  return s;
}

MatrixStats MatrixStats::transposed() const {
  MatrixStats t = *this;
  std::swap(t.rows, t.cols);
  t.mean_row = t.rows > 0 ? static_cast<double>(nnz) / static_cast<double>(t.rows) : 0.0;
  std::swap(t.max_row, t.max_col);
  std::swap(t.row_cv, t.col_cv);
  std::swap(t.heavy_share, t.col_heavy_share);
  std::swap(t.long_share, t.col_long_share);
  std::swap(t.empty_rows, t.empty_cols);
  // Padding of Aᵀ is unknown without its row order; estimate it from the longest column.
  t.ell_fill = t.max_row > 0 ? t.mean_row / static_cast<double>(t.max_row) : 1.0;
  t.slice_fill = std::max(t.ell_fill, t.row_cv < 0.25 ? slice_fill : t.ell_fill);
  return t;
}

std::string MatrixStats::summary() const {
  char buf[320];
  std::snprintf(buf, sizeof buf,
                "%lld x %lld, %lld nnz, rows: mean %.1f max %lld cv %.2f, heavy %.0f%%, long "
                "%.0f%%, empty %.0f%%, col spread %.3f, sectors/nnz %.2f, shifted rows %.0f%%",
                static_cast<long long>(rows), static_cast<long long>(cols),
                static_cast<long long>(nnz), mean_row, static_cast<long long>(max_row), row_cv,
                100 * heavy_share, 100 * long_share, 100 * empty_rows, col_spread,
                sectors_per_nnz, 100 * shifted_rows);
  return buf;
}

namespace {
// splitmix64 finalizer: a cheap, well-mixed 64-bit hash step.
std::uint64_t mix(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// Order-dependent hash of an array, computed in fixed blocks so that the result does not
// depend on the thread count.
template <class T>
std::uint64_t hash_array(const std::vector<T>& v) {
  constexpr std::int64_t kBlock = 1 << 16;
  const std::int64_t n = static_cast<std::int64_t>(v.size());
  const std::int64_t blocks = (n + kBlock - 1) / kBlock;
  std::vector<std::uint64_t> part(static_cast<std::size_t>(blocks));
#pragma omp parallel for schedule(static)
  for (std::int64_t blk = 0; blk < blocks; ++blk) {
    std::uint64_t h = mix(static_cast<std::uint64_t>(blk));
    const std::int64_t e = std::min(n, (blk + 1) * kBlock);
    for (std::int64_t i = blk * kBlock; i < e; ++i)
      h = (h ^ static_cast<std::uint64_t>(v[i])) * 0x100000001b3ULL;
    part[blk] = mix(h);
  }
  std::uint64_t h = mix(static_cast<std::uint64_t>(n));
  for (auto p : part) h = mix(h ^ p);
  return h;
}
}  // namespace

template <class Value, class Index>
std::uint64_t structure_fingerprint(const Csr<Value, Index>& a) {
  std::uint64_t h = mix(static_cast<std::uint64_t>(a.rows));
  h = mix(h ^ static_cast<std::uint64_t>(a.cols));
  h = mix(h ^ hash_array(a.row_ptr));
  return mix(h ^ hash_array(a.col_idx));
}

#define SPMAT_INSTANTIATE(V, I)                                  \
  template MatrixStats matrix_stats(const Csr<V, I>&, bool);           \
  template std::uint64_t structure_fingerprint(const Csr<V, I>&);
SPMAT_FOR_EACH_TYPE_PAIR(SPMAT_INSTANTIATE)
#undef SPMAT_INSTANTIATE

}  // namespace spmat
