// spmat/formats/csr/csr_plan.cpp — row bins of the auto kernel and merge-path tiles (host).
// SPDX-License-Identifier: MIT
#include "spmat/formats/csr/csr_plan.hpp"

#include <omp.h>

#include <algorithm>
#include <cmath>

namespace spmat::csr_plan {

bool few_rows(std::int64_t rows) { return rows * 32 <= kFewThreads; }

int threads_per_row(std::int64_t rows, std::int64_t nnz) {
  // Rows few enough that a warp each fits in about half of one wave: the product is bound by
  // the latency of the longest row's strided steps, not by lanes left idle. Measured on an
  // H100 (SpMV fp64, µs): 1138_bus (1,138 rows, mean 3.6) scalar 4.15, a warp per row 2.84;
  // nnc1374 (1,374 × 6.3) 4.58 vs 2.81; bcsstk19 (817 × 8.4) 8 lanes 3.13 vs 2.75.
  if (few_rows(rows)) return 32;
  const double mean = rows > 0 ? static_cast<double>(nnz) / static_cast<double>(rows) : 0.0;
  int t = 2;
  while (t < 32 && 2.0 * t <= mean) t *= 2;
  // With rows enough to fill the GPU several times at half the lanes, halve them: a warp then
  // holds twice the rows and keeps twice the loads in flight, and at a row or two of strided
  // steps the kernel is bound by load latency, not bandwidth. Measured on an H100, SpMV fp32
  // / fp64 µs: banded 1 M rows × 17, 16 -> 8 lanes 95 -> 70 / 110 -> 95; banded 2 M × 9,
  // 8 -> 4 lanes 103 -> 80 / 121 -> 107; power-law 2 M rows, mean 18, 16 -> 8 lanes 339 -> 296
  // / 398 -> 363; R-MAT 2 M rows, mean 15.5, 8 -> 4 lanes 311 -> 294 / 349 -> 344; random
  // 2 M × 24, 16 -> 8 lanes 479 -> 465 / 531 -> 524.
  if (t >= 8 && static_cast<double>(rows) * (t / 2) >= static_cast<double>(kManyThreads)) {
    t /= 2;
    // At 8 lanes, 4 where that idles far fewer lanes in a row's last strided step (a mean
    // row of 17 idles 7 of 24 lane slots at 8 lanes, 3 of 20 at 4): the rows are plentiful, so
    // what the idle lanes cost is loads not in flight. Measured fp32 SpMV, 8 -> 4 lanes:
    // banded 1.2·10⁸ rows × 19 (64-bit indices, 32-bit columns, H100) 9.65 -> 8.55 ms; banded
    // 10⁶ × 17 (H200) 55 -> 46 µs; a random 2·10⁶ × 16, which idles no lane at either width,
    // ran 3–10% slower at 4 lanes and keeps 8.
    const auto idle_share = [mean](int lanes) {
      const double slots = lanes * std::ceil(mean / lanes);
      return (slots - mean) / slots;
    };
    if (t == 8 && idle_share(8) - idle_share(4) >= kIdleShareGain) t = 4;
  }
  return t;
}

std::int64_t warp_row_threshold(std::int64_t rows, std::int64_t nnz) {
  const std::int64_t mean = rows > 0 ? (nnz + rows - 1) / rows : 0;
  return std::max<std::int64_t>(32 * mean, 1024);
}

std::int64_t long_row_threshold(std::int64_t rows, std::int64_t nnz) {
  return few_rows(rows) ? kWarpRowMax : warp_row_threshold(rows, nnz);
}

std::int64_t t_whole_row_max(std::int64_t rows, std::int64_t nnz) {
  return std::min(warp_row_threshold(rows, nnz), kFewRowsMinChunk);
}

std::optional<RowPlan> plan_rows_without_lists(std::int64_t rows, std::int64_t nnz,
                                               std::int64_t max_len, CsrKernel kernel,
                                               int forced_tpr, CsrBins bins,
                                               bool scalar_allowed) {
  RowPlan p;
  p.kernel = kernel;
  p.tpr = forced_tpr > 0 ? forced_tpr : threads_per_row(rows, nnz);
  if (rows == 0) return p;
  p.max_len = max_len;
  // The same decisions as plan_rows, in the same order (see there for why).
  if (kernel == CsrKernel::automatic && forced_tpr == 0 && bins != CsrBins::on && scalar_allowed &&
      nnz < 8 * rows && max_len <= 32 && !few_rows(rows))
    p.kernel = CsrKernel::scalar;
  if (p.kernel == CsrKernel::automatic && bins != CsrBins::off &&
      (bins == CsrBins::on ||
       static_cast<double>(max_len) >
           kSkewMaxOverMean * static_cast<double>(nnz) / static_cast<double>(rows)))
    return std::nullopt;  // binning, or the share of rows it would move, needs the lengths
  if (max_len > long_row_threshold(rows, nnz)) return std::nullopt;  // long rows to chunk
  p.chunk = few_rows(rows) ? kFewRowsMinChunk : kMinChunk;  // plan_rows' with no long-row nonzeros
  return p;
}

template <class Index>
ColumnLocality column_locality(std::int64_t rows, const Index* row_ptr, const Index* col_idx) {
  ColumnLocality l;
  const std::int64_t samples = locality_samples(rows);
  for (std::int64_t i = 0; i < samples; ++i) {
    const std::int64_t r = locality_row(i, rows);
    const std::int64_t b = row_ptr[r], e = std::min<std::int64_t>(row_ptr[r + 1], b + kLocalityRowNnz);
    for (std::int64_t k = b; k < e; ++k)
      l.near += has_near_column(col_idx + row_ptr[r - 1], col_idx + row_ptr[r], col_idx[k]);
    l.sampled += e - b;
  }
  return l;
}

bool may_batch_steps(const RowPlan& p, std::int64_t rows) {
  return p.kernel == CsrKernel::automatic && !p.binned && p.long_threshold == kNoLongRows &&
         p.tpr < 32 && rows * p.tpr >= kManyThreads;
}

bool may_batch_warp_rows(const RowPlan& p, std::int64_t rows, std::int64_t cols, std::int64_t nnz,
                         std::int64_t value_bytes) {
  return p.kernel == CsrKernel::automatic && !p.binned && p.long_threshold == kNoLongRows &&
         p.tpr == 32 && nnz >= kBatchWarpRowMean * rows && cols * value_bytes > kL1ResidentX;
}

int batched_lanes(int tpr, std::int64_t rows, std::int64_t nnz) {
  // Integer form of mean > kBatchSteps · t: nnz > kBatchSteps · t · rows.
  int t = tpr;
  while (t < 16 && nnz > static_cast<std::int64_t>(kBatchSteps) * t * rows) t *= 2;
  return t;
}

RowPlan plan_for_columns(const std::function<RowPlan(bool scalar_allowed)>& plan,
                         const std::function<bool()>& sample_columns, CsrKernel kernel,
                         int forced_tpr, std::int64_t rows, std::int64_t cols, std::int64_t nnz,
                         std::int64_t value_bytes) {
  std::optional<bool> local;
  const auto is_local = [&] {
    if (!local) local = x_stays_in_l1(rows, cols, value_bytes) || sample_columns();
    return *local;
  };
  RowPlan p = plan(true);
  if (p.kernel == CsrKernel::scalar && kernel == CsrKernel::automatic && !scalar_suits_columns(is_local()))
    p = plan(false);
  if (may_batch_steps(p, rows)) {
    p.batched = !is_local();
    if (p.batched && forced_tpr == 0) p.tpr = batched_lanes(p.tpr, rows, nnz);
  } else if (may_batch_warp_rows(p, rows, cols, nnz, value_bytes)) {
    p.batched = !is_local();
  }
  return p;
}

int merge_items_per_thread(std::int64_t nnz, bool skewed, bool local_columns, std::size_t value_bytes) {
  const bool wide_fits = std::int64_t{kMergeBlock} * kMergeWideIpt * static_cast<std::int64_t>(value_bytes) <=
                         kMergeWideMaxTileBytes;
  return nnz >= kMergeWideMinNnz && !skewed && local_columns && wide_fits ? kMergeWideIpt : kMergeIpt;
}

std::int64_t binned_short_max(int tpr) {
  return tpr < 32 ? 2 * static_cast<std::int64_t>(tpr) : kWarpRowMax;
}

RowPlan plan_from_stats(std::int64_t rows, std::int64_t nnz, const RowStats& stats,
                        CsrKernel kernel, int forced_tpr, CsrBins bins, bool scalar_allowed) {
  if (auto without = plan_rows_without_lists(rows, nnz, stats.max_len, kernel, forced_tpr, bins,
                                             scalar_allowed))
    return *without;
  RowPlan p;
  p.kernel = kernel;
  p.tpr = forced_tpr > 0 ? forced_tpr : threads_per_row(rows, nnz);
  p.max_len = stats.max_len;

  // Short, even rows: one thread per row beats sub-warps. Measured on an H200, fp64
  // (bench/results/2026-11-22-h200/spmv/spmv_fp64.json): lap2d:2000 (mean 5, max 5) scalar 0.087 ms
  // vs 4 lanes 0.130 ms; G3_circuit (mean 4.8) 0.041 vs 0.055; lap3d:200 (mean 7) 0.231 vs
  // 0.291. With 16/row (random_k, banded:8) sub-warps win (0.27 vs 0.54; 0.106 vs 0.143), and
  // one long row makes the scalar kernel collapse (powerlaw: 182 ms), hence both conditions.
  // A matrix of few rows is latency-bound and takes a warp per row (threads_per_row).
  if (kernel == CsrKernel::automatic && forced_tpr == 0 && bins != CsrBins::on && scalar_allowed &&
      nnz < 8 * rows && p.max_len <= 32 && !few_rows(rows))
    p.kernel = CsrKernel::scalar;

  // Bins: rows up to binned_short_max stay in the sub-warp kernel, longer ones up to
  // kWarpRowMax get a warp each, the rest chunks (with tpr = 32 the bins only lower the
  // long-row threshold).
  const std::int64_t unbinned_long = long_row_threshold(rows, nnz);
  if (p.kernel == CsrKernel::automatic && bins != CsrBins::off) {
    if (bins == CsrBins::on) {
      p.binned = true;
    } else if (static_cast<double>(p.max_len) >
               kSkewMaxOverMean * static_cast<double>(nnz) / static_cast<double>(rows)) {
      // stats.moved: the rows that binning takes away from the sub-warp kernel, where they
      // serialize.
      p.binned = stats.moved * kMovedShareDen >= nnz;
    }
    if (p.binned) p.short_max = binned_short_max(p.tpr);
    p.merge_spmv = p.binned && bins == CsrBins::automatic && nnz >= kMergeSpmvMinNnz;
  }

  const std::int64_t thr = p.binned ? kWarpRowMax : unbinned_long;
  const std::int64_t long_nnz = p.binned ? stats.long_nnz_binned : stats.long_nnz_unbinned;
  while (p.chunk > kMinChunk && long_nnz < kTargetChunks * p.chunk) p.chunk /= 2;
  if (few_rows(rows)) p.chunk = std::max(p.chunk, kFewRowsMinChunk);
  if (p.binned)
    p.long_threshold = thr;
  else if (long_nnz > 0)  // some row is longer than thr
    p.long_threshold = p.short_max = thr;
  p.t_whole_rows = !p.binned && long_nnz > 0 && p.max_len <= t_whole_row_max(rows, nnz);
  return p;
}

template <class Index>
RowPlan plan_rows(std::int64_t rows, const Index* row_ptr, CsrKernel kernel, int forced_tpr,
                  CsrBins bins, bool scalar_allowed) {
  const std::int64_t nnz = rows > 0 ? static_cast<std::int64_t>(row_ptr[rows] - row_ptr[0]) : 0;
  if (rows == 0) return plan_from_stats(rows, nnz, RowStats{}, kernel, forced_tpr, bins, scalar_allowed);
  auto len = [&](std::int64_t r) { return static_cast<std::int64_t>(row_ptr[r + 1] - row_ptr[r]); };
  // Passes over every row (tens of milliseconds serially at tens of millions of rows) run in
  // parallel; the lists come out in ascending row order as a serial loop would make them.
  // First every statistic, in one pass.
  const std::int64_t short_max_binned =
      binned_short_max(forced_tpr > 0 ? forced_tpr : threads_per_row(rows, nnz));
  const std::int64_t unbinned_long = long_row_threshold(rows, nnz);
  std::int64_t max_len = 0, moved = 0, long_binned = 0, long_unbinned = 0;
#pragma omp parallel for schedule(static) reduction(max : max_len) \
    reduction(+ : moved, long_binned, long_unbinned)
  for (std::int64_t r = 0; r < rows; ++r) {
    const std::int64_t l = len(r);
    max_len = std::max(max_len, l);
    if (l > short_max_binned && l <= unbinned_long) moved += l;
    if (l > kWarpRowMax) long_binned += l;
    if (l > unbinned_long) long_unbinned += l;
  }
  RowPlan p = plan_from_stats(rows, nnz, RowStats{max_len, moved, long_binned, long_unbinned},
                              kernel, forced_tpr, bins, scalar_allowed);
  if (!p.binned && p.long_threshold == kNoLongRows) return p;  // no lists

  const std::int64_t thr = p.long_threshold;
  const std::int64_t chunk = p.chunk;
  const bool binned = p.binned;
  const std::int64_t short_max = p.short_max;
  // Two passes over fixed row ranges: count each range's medium rows, long rows and chunks,
  // then fill from the ranges' offsets.
  const int ranges = std::max(1, std::min<int>(omp_get_max_threads(),
                                               static_cast<int>(std::min<std::int64_t>(rows, 1 << 20))));
  struct Counts {
    std::int64_t medium = 0, lng = 0, chunks = 0;
  };
  std::vector<Counts> at(static_cast<std::size_t>(ranges) + 1);
  auto range_begin = [&](int t) { return rows * t / ranges; };
#pragma omp parallel for schedule(static, 1) num_threads(ranges)
  for (int t = 0; t < ranges; ++t) {
    Counts& c = at[static_cast<std::size_t>(t) + 1];
    for (std::int64_t r = range_begin(t); r < range_begin(t + 1); ++r) {
      const std::int64_t l = len(r);
      if (binned && l > short_max && l <= thr) ++c.medium;
      if (l > thr) {
        ++c.lng;
        c.chunks += (l + chunk - 1) / chunk;
      }
    }
  }
  for (int t = 0; t < ranges; ++t) {  // counts -> offsets
    Counts& next = at[static_cast<std::size_t>(t) + 1];
    next.medium += at[static_cast<std::size_t>(t)].medium;
    next.lng += at[static_cast<std::size_t>(t)].lng;
    next.chunks += at[static_cast<std::size_t>(t)].chunks;
  }
  const Counts& total = at.back();
  p.medium_rows.resize(static_cast<std::size_t>(total.medium));
  p.long_rows.resize(static_cast<std::size_t>(total.lng));
  p.long_chunk_ptr.resize(static_cast<std::size_t>(total.lng) + 1);
  p.chunk_row.resize(static_cast<std::size_t>(total.chunks));
  p.chunk_begin.resize(static_cast<std::size_t>(total.chunks));
#pragma omp parallel for schedule(static, 1) num_threads(ranges)
  for (int t = 0; t < ranges; ++t) {
    Counts o = at[static_cast<std::size_t>(t)];
    for (std::int64_t r = range_begin(t); r < range_begin(t + 1); ++r) {
      const std::int64_t l = len(r);
      if (binned && l > short_max && l <= thr) p.medium_rows[static_cast<std::size_t>(o.medium++)] = r;
      if (l <= thr) continue;
      p.long_rows[static_cast<std::size_t>(o.lng)] = r;
      for (std::int64_t c = row_ptr[r]; c < static_cast<std::int64_t>(row_ptr[r + 1]); c += chunk) {
        p.chunk_row[static_cast<std::size_t>(o.chunks)] = r;
        p.chunk_begin[static_cast<std::size_t>(o.chunks)] = c;
        ++o.chunks;
      }
      p.long_chunk_ptr[static_cast<std::size_t>(++o.lng)] = o.chunks;
    }
  }
  return p;
}

template <class Index>
std::int64_t merge_path_row(std::int64_t diag, const Index* row_end, std::int64_t rows,
                            std::int64_t nnz) {
  std::int64_t lo = diag > nnz ? diag - nnz : 0;
  std::int64_t hi = diag < rows ? diag : rows;
  while (lo < hi) {
    const std::int64_t mid = lo + (hi - lo) / 2;
    if (static_cast<std::int64_t>(row_end[mid]) <= diag - 1 - mid)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

template <class Index>
MergePlan plan_merge(std::int64_t rows, std::int64_t nnz, const Index* row_ptr, const Index* col_idx,
                     std::size_t value_bytes) {
  MergePlan m;
  if (rows == 0) return m;
  std::int64_t max_len = 0;
#pragma omp parallel for schedule(static) reduction(max : max_len)
  for (std::int64_t r = 0; r < rows; ++r)
    max_len = std::max(max_len, static_cast<std::int64_t>(row_ptr[r + 1] - row_ptr[r]));
  m.skewed = static_cast<double>(max_len) >
             kSkewMaxOverMean * static_cast<double>(nnz) / static_cast<double>(rows);
  if (col_idx != nullptr && merge_items_per_thread(nnz, m.skewed, true, value_bytes) != kMergeIpt)
    m.ipt = merge_items_per_thread(nnz, m.skewed, column_locality(rows, row_ptr, col_idx).local(),
                                   value_bytes);
  const std::int64_t tile = static_cast<std::int64_t>(kMergeBlock) * m.ipt;
  const std::int64_t total = rows + nnz;
  const std::int64_t n = (total + tile - 1) / tile;
  m.n_tiles = n;
  m.tile_row.resize(static_cast<std::size_t>(n) + 1);
#pragma omp parallel for schedule(static)
  for (std::int64_t b = 0; b <= n; ++b)
    m.tile_row[b] = merge_path_row(std::min(b * tile, total), row_ptr + 1, rows, nnz);
  m.owner = merge_owner_completes(rows, nnz, max_len);
  if (m.owner) {
    m.tile_own.resize(static_cast<std::size_t>(n));
#pragma omp parallel for schedule(static)
    for (std::int64_t b = 0; b < n; ++b) {
      const std::int64_t row0 = m.tile_row[b], row1 = m.tile_row[b + 1];
      const std::int64_t nz0 = b * tile - row0, nz1 = std::min((b + 1) * tile, total) - row1;
      const bool has_last = row1 < rows;
      m.tile_own[b] = tile_ownership(nz0, nz1, row_ptr[row0], has_last,
                                     has_last ? row_ptr[row1] : nnz, has_last ? row_ptr[row1 + 1] : nnz);
    }
    return m;
  }
  // Tile t that finishes its first row r adds the carries of tiles first..t-1 (the tiles whose
  // last row is r; `first` is the one that began r, or tile 0).
  for (std::int64_t t = 1; t < n; ++t) {
    if (m.tile_row[t + 1] == m.tile_row[t]) continue;
    const std::int64_t t0 =
        std::lower_bound(m.tile_row.begin(), m.tile_row.begin() + t, m.tile_row[t]) -
        m.tile_row.begin();
    const std::int64_t first = std::max<std::int64_t>(t0 - 1, 0);
    if (t - first > kMaxShortFix) {
      m.fix_tile.push_back(t);
      m.fix_first.push_back(first);
    }
  }
  return m;
}

#define SPMAT_INSTANTIATE(I)                                                                   \
  template RowPlan plan_rows(std::int64_t, const I*, CsrKernel, int, CsrBins, bool);           \
  template std::int64_t merge_path_row(std::int64_t, const I*, std::int64_t, std::int64_t);    \
  template MergePlan plan_merge(std::int64_t, std::int64_t, const I*, const I*, std::size_t);  \
  template ColumnLocality column_locality(std::int64_t, const I*, const I*);
SPMAT_INSTANTIATE(std::int32_t)
SPMAT_INSTANTIATE(std::int64_t)
#undef SPMAT_INSTANTIATE

}  // namespace spmat::csr_plan
