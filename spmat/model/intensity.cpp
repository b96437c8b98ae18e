// spmat/model/intensity.cpp — tiled-SpMM intensity model: closed forms, tiling plan, predictions.
// SPDX-License-Identifier: MIT
#include "spmat/model/intensity.hpp"

#include <algorithm>
#include <cmath>

#include "spmat/core/error.hpp"

namespace spmat::model {

// ---- closed forms ----------------------------------------------------------------------------

double naive_intensity(double mu, double bt, double bi, double delta) {
  if (mu <= 0) return 0;
  return 2 * mu / (mu * (bt + bi) + mu * bt + bt + delta);
}

double tiled_bytes_per_fma(const TiledTerms& t) {
  const double map = t.map_term == MapTerm::per_mu ? t.bi / (t.rho * t.mu) : t.bi / (t.rho * t.r);
  return (t.bt + t.bis) * t.z / t.r + t.bt * t.gamma / t.rho + map + t.delta / (t.r * t.mu);
}

double tiled_intensity(const TiledTerms& t) {
  if (t.mu <= 0 || t.rho <= 0 || t.r <= 0) return 0;
  return 2 / tiled_bytes_per_fma(t);
}

double segmented_intensity(const TiledTerms& t) {
  if (t.mu <= 0 || t.rho <= 0 || t.r <= 0 || t.mu_orig <= 0) return 0;
  return 2 / (tiled_bytes_per_fma(t) + t.bi / (t.r * t.mu) + t.bt / t.mu_orig);
}

double roofline_gflops(double intensity, double bandwidth_gbs, double peak_gflops) {
  return std::min(intensity * bandwidth_gbs, peak_gflops);
}

DeviceModel DeviceModel::a100() {
  return {"A100-40GB", 1555, 19500, 40.0 * 1024 * 1024, 108, 64, 32};
}
DeviceModel DeviceModel::h100() {
  return {"H100-SXM", 3350, 66900, 50.0 * 1024 * 1024, 132, 64, 32};
}
DeviceModel DeviceModel::h200() {
  return {"H200", 4800, 66900, 50.0 * 1024 * 1024, 132, 64, 32};
}

// ---- tiling plan -----------------------------------------------------------------------------

template <class Value, class Index>
std::vector<WorkRow> segment_rows(const Csr<Value, Index>& a, std::int64_t segsize) {
  std::vector<WorkRow> w;
  w.reserve(static_cast<std::size_t>(a.rows));
  for (std::int64_t r = 0; r < a.rows; ++r) {
    const std::int64_t b = a.row_ptr[r], e = a.row_ptr[r + 1];
    if (segsize <= 0 || e - b <= segsize) {
      w.push_back({r, b, e});
      continue;
    }
    for (std::int64_t s = b; s < e; s += segsize) w.push_back({r, s, std::min(e, s + segsize)});
  }
  return w;
}

template <class Value, class Index>
void sort_by_pattern(const Csr<Value, Index>& a, std::vector<WorkRow>& work) {
  const Index* ci = a.col_idx.data();
  std::stable_sort(work.begin(), work.end(), [ci](const WorkRow& x, const WorkRow& y) {
    std::int64_t i = x.begin, j = y.begin;
    for (; i < x.end && j < y.end; ++i, ++j)
      if (ci[i] != ci[j]) return ci[i] < ci[j];  // x holds the more significant column
    return i < x.end && j == y.end;              // x holds one more column than y
  });
}

std::int64_t stage_capacity(std::int64_t smem_bytes, int r, std::size_t value_bytes) {
  const std::int64_t cap = smem_bytes / (static_cast<std::int64_t>(r) * static_cast<std::int64_t>(value_bytes));
  return std::clamp<std::int64_t>(cap, 1, 65535);
}

template <class Value, class Index>
TilePlan<Index> plan_tiles(const Csr<Value, Index>& a, std::span<const WorkRow> work,
                           std::int64_t panel_rows, std::int64_t stage_cap) {
  TilePlan<Index> plan;
  plan.panel_rows = panel_rows;
  plan.stage_cap = stage_cap;
  const std::int64_t nw = static_cast<std::int64_t>(work.size());
  const std::int64_t np = (nw + panel_rows - 1) / panel_rows, wpp = panel_rows / 32;
  std::vector<std::vector<Index>> cols(static_cast<std::size_t>(np));
  std::vector<std::vector<std::int64_t>> lens(static_cast<std::size_t>(np));
#pragma omp parallel for schedule(dynamic, 1)
  for (std::int64_t p = 0; p < np; ++p) {
    const std::int64_t w0 = p * panel_rows, w1 = std::min(nw, w0 + panel_rows);
    auto& c = cols[p];
    for (std::int64_t w = w0; w < w1; ++w)
      c.insert(c.end(), a.col_idx.begin() + work[w].begin, a.col_idx.begin() + work[w].end);
    std::sort(c.begin(), c.end());
    c.erase(std::unique(c.begin(), c.end()), c.end());
    const std::int64_t d = static_cast<std::int64_t>(c.size()), ns = (d + stage_cap - 1) / stage_cap;
    auto& l = lens[p];
    l.assign(static_cast<std::size_t>(ns * wpp), 0);
    for (std::int64_t w = w0; w < w1; ++w) {
      const std::int64_t warp = (w - w0) / 32;
      std::int64_t cur = -1, cnt = 0;
      for (std::int64_t q = work[w].begin; q < work[w].end; ++q) {
        const std::int64_t pos = std::lower_bound(c.begin(), c.end(), a.col_idx[q]) - c.begin();
        const std::int64_t st = pos / stage_cap;
        if (st != cur) {
          if (cur >= 0) l[cur * wpp + warp] = std::max(l[cur * wpp + warp], cnt);
          cur = st;
          cnt = 0;
        }
        ++cnt;
      }
      if (cur >= 0) l[cur * wpp + warp] = std::max(l[cur * wpp + warp], cnt);
    }
  }
  for (std::int64_t p = 0; p < np; ++p) {
    const std::int64_t d = static_cast<std::int64_t>(cols[p].size());
    for (std::int64_t s = 0; s * stage_cap < d; ++s)
      plan.stage_map_ptr.push_back(plan.stage_map_ptr.back() + std::min(stage_cap, d - s * stage_cap));
    plan.panel_stage_ptr.push_back(static_cast<std::int64_t>(plan.stage_map_ptr.size()) - 1);
    plan.map.insert(plan.map.end(), cols[p].begin(), cols[p].end());
    plan.slab_len.insert(plan.slab_len.end(), lens[p].begin(), lens[p].end());
    std::vector<Index>().swap(cols[p]);
  }
  return plan;
}

template <class Value, class Index>
PatternStats pattern_stats(const Csr<Value, Index>& a, std::span<const WorkRow> work,
                           const TilePlan<Index>& plan, std::int64_t k, DenseLayout layout,
                           int r, std::size_t value_bytes, const DeviceModel& dev) {
  PatternStats s;
  s.m = a.rows;
  s.n = a.cols;
  s.nnz = a.nnz();
  s.work_rows = static_cast<std::int64_t>(work.size());
  s.panels = plan.panels();
  s.stages = plan.stages();
  const double bt = static_cast<double>(value_bytes), line = dev.line_bytes;
  const std::int64_t re = std::max<std::int64_t>(1, std::min<std::int64_t>(r, k));
  const std::int64_t tiles = k > 0 ? (k + re - 1) / re : 0;
  if (s.m > 0) {
    s.mu = static_cast<double>(s.nnz) / static_cast<double>(s.m);
    double var = 0;
    for (std::int64_t i = 0; i < s.m; ++i) {
      const double d = static_cast<double>(a.row_ptr[i + 1] - a.row_ptr[i]) - s.mu;
      var += d * d;
    }
    s.sigma = std::sqrt(var / static_cast<double>(s.m));
    s.cv = s.mu > 0 ? s.sigma / s.mu : 0;
  }
  if (s.work_rows > 0) s.mu_star = static_cast<double>(s.nnz) / static_cast<double>(s.work_rows);
  s.sum_d = static_cast<double>(plan.map.size());
  std::vector<char> touched(static_cast<std::size_t>(a.cols), 0);
  for (auto c : a.col_idx) touched[c] = 1;
  s.n_touched = static_cast<double>(std::count(touched.begin(), touched.end(), 1));
  for (auto l : plan.slab_len) s.padded += 32.0 * static_cast<double>(l);
  if (s.nnz > 0) {
    s.rho = static_cast<double>(s.nnz) / s.sum_d;
    s.z = s.padded / static_cast<double>(s.nnz);
    s.l = s.sum_d / s.n_touched;
  }
  // C_miss: DRAM lines moved per useful B value staged (spec §3.5, byte-weighted).
  double lines = 0, useful = 0;
  if (layout == DenseLayout::col_major) {
    // A warp stages 32 consecutive map entries of one dense column; columns assumed line-aligned.
    for (std::int64_t st = 0; st < s.stages; ++st)
      for (std::int64_t c0 = plan.stage_map_ptr[st]; c0 < plan.stage_map_ptr[st + 1]; c0 += 32) {
        const std::int64_t c1 = std::min(plan.stage_map_ptr[st + 1], c0 + 32);
        std::int64_t last = -1;
        for (std::int64_t q = c0; q < c1; ++q) {
          const std::int64_t ln = static_cast<std::int64_t>(static_cast<double>(plan.map[q]) * bt / line);
          if (ln != last) ++lines, last = ln;
        }
        useful += static_cast<double>(c1 - c0);
      }
  } else {
    // Each staged column reads a contiguous piece of a B row per tile (sampled over <= 64 tiles:
    // the alignment pattern repeats within 64 B / gcd).
    const std::int64_t vb = static_cast<std::int64_t>(value_bytes), lb = dev.line_bytes;
    const std::int64_t nt = std::min<std::int64_t>(tiles, 64);
    for (auto c : plan.map)
      for (std::int64_t t = 0; t < nt; ++t) {
        const std::int64_t w = std::min(re, k - t * re);
        const std::int64_t start = (static_cast<std::int64_t>(c) * k + t * re) * vb;
        lines += static_cast<double>((start + w * vb - 1) / lb - start / lb + 1);
        useful += static_cast<double>(w);
      }
  }
  if (useful > 0) s.c_miss = lines * line / (bt * useful);
  s.u = static_cast<double>(s.panels * tiles) / dev.sm_count;
  s.b_footprint = s.n_touched * static_cast<double>(re) * bt * s.c_miss;
  // Heaviest block (one panel × one tile), all-miss bytes: A stream + staged B + map + C.
  const std::int64_t wpp = plan.warps_per_panel();
  for (std::int64_t p = 0; p < s.panels; ++p) {
    double padded = 0, d = 0;
    for (std::int64_t st = plan.panel_stage_ptr[p]; st < plan.panel_stage_ptr[p + 1]; ++st) {
      d += static_cast<double>(plan.stage_map_ptr[st + 1] - plan.stage_map_ptr[st]);
      for (std::int64_t w = 0; w < wpp; ++w) padded += 32.0 * static_cast<double>(plan.slab_len[st * wpp + w]);
    }
    const double rows = static_cast<double>(std::min(plan.panel_rows, s.work_rows - p * plan.panel_rows));
    const double bytes = padded * (bt + 2) + d * (static_cast<double>(re) * bt * s.c_miss + sizeof(Index)) +
                         rows * 2 * static_cast<double>(re) * bt;
    s.max_block_bytes = std::max(s.max_block_bytes, bytes);
  }
  return s;
}

// ---- predictions -----------------------------------------------------------------------------

std::int64_t lb_segsize(const PatternStats& s, const LbThresholds& lb) {
  if (s.nnz == 0 || s.mu <= 0) return 0;
  if (s.u < lb.u_min) return std::max<std::int64_t>(1, static_cast<std::int64_t>(std::ceil(s.u * s.mu)));
  if (s.cv > lb.cv_max) return std::max<std::int64_t>(1, static_cast<std::int64_t>(std::ceil(s.mu)));
  return 0;
}

namespace {
Bound make_bound(double intensity, double flops, const DeviceModel& dev, double peak) {
  Bound b;
  b.intensity = intensity;
  b.gflops = roofline_gflops(intensity, dev.bandwidth_gbs, peak);
  b.seconds = b.gflops > 0 ? flops / (b.gflops * 1e9) : 0;
  return b;
}
}  // namespace

template <class Value, class Index>
VariantPrediction predict_variant(const Csr<Value, Index>& a, std::int64_t k, DenseLayout layout,
                                  const TileParams& tile, const DeviceModel& dev,
                                  std::int64_t segsize, bool reorder) {
  VariantPrediction v;
  v.segmented = segsize > 0;
  v.reordered = reorder;
  v.segsize = segsize;
  v.name = std::string(v.segmented ? "segmented" : "baseline") + (reorder ? "+reorder" : "");
  auto work = segment_rows(a, segsize);
  if (reorder) sort_by_pattern(a, work);
  const std::size_t vb = sizeof(Value);
  const auto plan = plan_tiles(a, std::span<const WorkRow>(work), tile.panel_rows,
                               stage_capacity(tile.smem_bytes, tile.r, vb));
  v.stats = pattern_stats(a, std::span<const WorkRow>(work), plan, k, layout, tile.r, vb, dev);
  const auto& s = v.stats;
  const double re = static_cast<double>(std::max<std::int64_t>(1, std::min<std::int64_t>(tile.r, k)));
  TiledTerms t;
  t.z = s.z;
  t.r = re;
  t.rho = s.rho;
  t.mu = s.mu_star;
  t.mu_orig = s.mu;
  t.bt = static_cast<double>(vb);
  t.bis = 2;
  t.bi = static_cast<double>(sizeof(Index));
  t.delta = 2 * re * t.bt + 8;  // C written twice (rule 8) + slab offsets
  const double flops = 2.0 * static_cast<double>(s.nnz) * static_cast<double>(k);
  const double peak = dev.peak_gflops * (vb == 8 ? 0.5 : 1.0);
  auto intensity = [&](double gamma) {
    t.gamma = gamma;
    return v.segmented ? segmented_intensity(t) : tiled_intensity(t);
  };
  const double g_all = s.c_miss, g_opt = s.c_miss / std::max(1.0, s.l);
  v.algorithmic = make_bound(intensity(1.0), flops, dev, peak);
  v.all_miss = make_bound(intensity(g_all), flops, dev, peak);
  v.optimistic = make_bound(intensity(g_opt), flops, dev, peak);
  // Point prediction: the share h of B re-reads that hit in L2 is 1 when one tile's B footprint
  // fits, else L2/footprint; the heaviest block cannot finish faster than its bytes at β/SMs.
  const double h = s.b_footprint <= dev.l2_bytes ? 1.0 : dev.l2_bytes / s.b_footprint;
  v.predicted = make_bound(intensity(h * g_opt + (1 - h) * g_all), flops, dev, peak);
  const double t_block = s.max_block_bytes / (dev.bandwidth_gbs * 1e9 / dev.sm_count);
  if (t_block > v.predicted.seconds && flops > 0) {
    v.predicted.seconds = t_block;
    v.predicted.gflops = flops / t_block / 1e9;
  }
  return v;
}

template <class Value, class Index>
ModelReport evaluate(const Csr<Value, Index>& a, std::int64_t k, DenseLayout layout,
                     const TileParams& tile, const DeviceModel& dev, const LbThresholds& lb) {
  ModelReport rep;
  rep.k = k;
  rep.layout = layout;
  rep.value_bytes = sizeof(Value);
  rep.index_bytes = sizeof(Index);
  const double mu = a.rows > 0 ? static_cast<double>(a.nnz()) / static_cast<double>(a.rows) : 0;
  const double flops = 2.0 * static_cast<double>(a.nnz()) * static_cast<double>(k);
  rep.naive = make_bound(naive_intensity(mu, sizeof(Value), sizeof(Index), 8), flops, dev,
                         dev.peak_gflops * (sizeof(Value) == 8 ? 0.5 : 1.0));
  rep.variants.reserve(4);
  rep.variants.push_back(predict_variant(a, k, layout, tile, dev, 0, false));
  rep.variants.push_back(predict_variant(a, k, layout, tile, dev, 0, true));
  const auto base = rep.variants[0].stats;  // a copy: the push_backs below may reallocate
  const std::int64_t lb_seg = lb_segsize(base, lb);
  const std::int64_t seg = lb_seg > 0 ? lb_seg : std::max<std::int64_t>(1, static_cast<std::int64_t>(std::ceil(base.mu)));
  rep.variants.push_back(predict_variant(a, k, layout, tile, dev, seg, false));
  rep.variants.push_back(predict_variant(a, k, layout, tile, dev, seg, true));
  const int first = lb_seg > 0 ? 2 : 0;
  if (lb_seg > 0)
    rep.reason = base.u < lb.u_min
                     ? "underutilized (U = " + std::to_string(base.u) + " < " + std::to_string(lb.u_min) + ")"
                     : "imbalanced (sigma/mu = " + std::to_string(base.cv) + " > " + std::to_string(lb.cv_max) + ")";
  else
    rep.reason = "balanced (U = " + std::to_string(base.u) + ", sigma/mu = " + std::to_string(base.cv) + ")";
  const bool keep = rep.variants[first + 1].all_miss.intensity > rep.variants[first].all_miss.intensity;
  rep.chosen = first + (keep ? 1 : 0);
  rep.reason += keep ? "; reordering raises the all-miss intensity" : "; reordering does not pay";
  return rep;
}

// ---- the row-wise kernel -----------------------------------------------------------------------

DeviceModel device_by_name(const std::string& name) {
  if (name == "h100") return DeviceModel::h100();
  if (name == "h200") return DeviceModel::h200();
  if (name == "a100") return DeviceModel::a100();
  throw ParseError("device '" + name + "' is not one of h100, h200, a100");
}

template <class Value, class Index>
ReuseProfile reuse_profile(const Csr<Value, Index>& a, std::span<const WorkRow> work,
                           std::int64_t panel_rows) {
  ReuseProfile p;
  p.rows = a.rows;
  p.cols = a.cols;
  p.nnz = a.nnz();
  p.work_rows = static_cast<std::int64_t>(work.size());
  p.panel_rows = std::max<std::int64_t>(1, panel_rows);
  p.panels = (p.work_rows + p.panel_rows - 1) / p.panel_rows;
  std::vector<std::int64_t> last(static_cast<std::size_t>(a.cols), -1);
  for (std::int64_t w = 0; w < p.work_rows; ++w) {
    const std::int64_t panel = w / p.panel_rows;
    const std::int64_t len = work[w].end - work[w].begin;
    p.max_work_row = std::max(p.max_work_row, len);
    p.sum_sq += static_cast<double>(len) * static_cast<double>(len);
    const std::int64_t r0 = static_cast<std::int64_t>(a.row_ptr[work[w].row]);
    const std::int64_t r1 = static_cast<std::int64_t>(a.row_ptr[work[w].row + 1]);
    if (work[w].begin != r0 || work[w].end != r1) {  // one segment of a split row
      ++p.split_work_rows;
      if (work[w].begin == r0) ++p.split_rows;
    }
    for (std::int64_t q = work[w].begin; q < work[w].end; ++q) {
      std::int64_t& l = last[static_cast<std::size_t>(a.col_idx[q])];
      if (l == panel) continue;  // same panel: an L1 hit
      p.sum_d += 1;
      if (l < 0) {
        p.cold += 1;
      } else {
        const std::int64_t d = panel - l;  // >= 1
        int b = 0;
        while (b + 1 < static_cast<int>(p.hist.size()) && (std::int64_t{2} << b) <= d) ++b;
        p.hist[static_cast<std::size_t>(b)] += 1;
      }
      l = panel;
    }
  }
  p.n_touched = p.cold;
  for (int g = 0; g < static_cast<int>(p.warp_nnz.size()); ++g) {
    const std::int64_t per_warp = 32 >> g;  // work rows per warp with groups of 2^g lanes
    double slots = 0;
    for (std::int64_t w0 = 0; w0 < p.work_rows; w0 += per_warp) {
      std::int64_t longest = 0;
      for (std::int64_t w = w0; w < std::min(p.work_rows, w0 + per_warp); ++w)
        longest = std::max(longest, work[w].end - work[w].begin);
      slots += static_cast<double>(per_warp * longest);
    }
    p.warp_nnz[static_cast<std::size_t>(g)] = slots;
  }
  return p;
}

int rows_group_lanes(std::int64_t kt, std::size_t value_bytes) {
  const std::int64_t v = static_cast<std::int64_t>(16 / std::max<std::size_t>(1, value_bytes));
  return static_cast<int>(std::clamp<std::int64_t>(kt / std::max<std::int64_t>(1, v), 1, 32));
}

namespace {
/// Re-touches whose distance exceeds `window` panels (linear within each log2 bucket).
double far_retouches(const ReuseProfile& p, double window) {
  double far = 0;
  for (std::size_t b = 0; b < p.hist.size(); ++b) {
    const double lo = std::ldexp(1.0, static_cast<int>(b)), hi = 2 * lo;
    if (window < lo) far += p.hist[b];
    else if (window < hi) far += p.hist[b] * (hi - window) / lo;
  }
  return far;
}
}  // namespace

namespace {
/// Bytes a B piece of `piece` useful bytes costs: whole granules.
double granule_factor(double piece, int granule) {
  const double g = std::max(1, granule);
  return piece > 0 ? std::ceil(piece / g) * g / piece : 1.0;
}

/// DRAM bytes (A, B, C) of one K-tiled sweep over the work rows of `p` (fields of t filled).
void dram_bytes(RowsTraffic& t, const ReuseProfile& p, std::int64_t k, std::size_t value_bytes,
                std::size_t index_bytes, bool segmented, const DeviceModel& dev, BMode mode,
                const RowsCalibration& cal) {
  const double vb = static_cast<double>(value_bytes), ib = static_cast<double>(index_bytes);
  const double kd = static_cast<double>(k), ktd = static_cast<double>(t.kt);
  // A once per tile: values + column ids + the two work-row bounds.
  const double a_once = static_cast<double>(p.nnz) * (vb + ib) + static_cast<double>(p.work_rows) * 2 * ib;
  t.a_bytes = static_cast<double>(t.tiles) * a_once;
  const double sector = granule_factor(ktd * vb, cal.granule_bytes);
  double fetches = 0;  // B-row pieces (per tile) moved from DRAM
  if (mode == BMode::optimistic) {
    fetches = p.n_touched;
  } else if (mode == BMode::all_miss) {
    fetches = p.sum_d;
  } else {
    const double panels = std::max<double>(1, static_cast<double>(p.panels));
    const double per_panel = p.sum_d / panels * ktd * vb * sector + a_once / panels +
                             static_cast<double>(p.panel_rows) * ktd * vb;
    const double l2 = cal.l2_fraction * dev.l2_bytes;
    const double window = l2 / std::max(1.0, per_panel);
    // Re-touches beyond the window: LRU would miss them all, but L2 keeps a share of any
    // footprint it cannot hold (random replacement of hashed sets): hit share l2 / footprint.
    const double footprint = p.n_touched * ktd * vb * sector;
    const double h_far = footprint > 0 ? std::min(1.0, l2 / footprint) : 1.0;
    fetches = p.cold + far_retouches(p, window) * (1 - h_far);
  }
  t.b_bytes = fetches * kd * vb * sector;
  t.c_bytes = static_cast<double>(p.rows) * kd * vb;
  if (segmented && p.split_work_rows > 0) t.c_bytes += 2 * static_cast<double>(p.split_work_rows) * kd * vb;
  t.total = t.a_bytes + t.b_bytes + t.c_bytes;
}

/// time = max(DRAM, L1 slots, L2 pieces, latency) + launches (predicted/all-miss, the latter at
/// rates / rate_spread, latency and launches · rate_spread); optimistic: full β, L1 and L2 at
/// the hardware's rates (l1_peak_gbs, l2_peak_gbs), no latency, no launches.
void finish_time(RowsTraffic& t, double walk, const DeviceModel& dev, BMode mode,
                 const RowsCalibration& cal, int launches) {
  const double beta = dev.bandwidth_gbs * 1e9;
  const double spread = mode == BMode::optimistic ? cal.rate_spread
                        : mode == BMode::all_miss ? 1.0 / cal.rate_spread
                                                  : 1.0;
  const double l1_gbs = mode == BMode::optimistic ? cal.l1_peak_gbs : cal.l1_gbs * spread;
  t.l1_seconds = t.l1_bytes / (l1_gbs * 1e9);
  t.l2_seconds = t.l2_bytes / ((mode == BMode::optimistic ? cal.l2_peak_gbs : cal.l2_gbs * spread) * 1e9);
  if (mode == BMode::optimistic) {
    t.dram_seconds = t.total / beta;
    t.seconds = std::max({t.dram_seconds, t.l1_seconds, t.l2_seconds});
    return;
  }
  // All-miss: every rate at its slow end of the spread (DRAM efficiency and the gather ceilings
  // divided by rate_spread, the walk's latency and the launches multiplied by it), so that the
  // bound holds for the matrices whose rates fall below the fit, not just for the fit itself.
  t.dram_seconds = t.total / (beta * cal.efficiency * spread);
  // The longest walk (work row, or panel's distinct columns) in batches of 4 dependent loads.
  t.latency_seconds = std::ceil(walk / 4.0) * cal.batch_latency_us * 1e-6 / spread;
  t.seconds = std::max({t.dram_seconds, t.l1_seconds, t.l2_seconds, t.latency_seconds}) +
              cal.launch_us * 1e-6 * launches / spread;
}
}  // namespace

namespace {
/// The K-tiling and DRAM bytes of one sweep (fields of t); returns the bytes of one B piece over
/// all tiles (k values, rounded up to the granule per tile) that the L1/L2 terms count.
double start_traffic(RowsTraffic& t, const ReuseProfile& p, std::int64_t k, std::int64_t kt,
                     std::size_t value_bytes, std::size_t index_bytes, bool segmented,
                     const DeviceModel& dev, BMode mode, const RowsCalibration& cal) {
  t.kt = std::max<std::int64_t>(1, std::min(kt, k));
  t.tiles = (k + t.kt - 1) / t.kt;
  dram_bytes(t, p, k, value_bytes, index_bytes, segmented, dev, mode, cal);
  const double vb = static_cast<double>(value_bytes);
  return static_cast<double>(k) * vb * granule_factor(static_cast<double>(t.kt) * vb, cal.granule_bytes);
}
}  // namespace

RowsTraffic rows_traffic(const ReuseProfile& p, std::int64_t k, std::int64_t kt,
                         std::size_t value_bytes, std::size_t index_bytes, bool segmented,
                         const DeviceModel& dev, BMode mode, const RowsCalibration& cal) {
  RowsTraffic t;
  if (k <= 0) return t;
  // Every nonzero slot of a warp gathers its B piece of each tile through L1 (a warp waits for
  // its longest row: warp_nnz; optimistic: nnz); panel-distinct pieces cross L2 → SM.
  const double piece = start_traffic(t, p, k, kt, value_bytes, index_bytes, segmented, dev, mode, cal);
  int g = 0;
  while ((2 << g) <= rows_group_lanes(t.kt, value_bytes)) ++g;
  const double slots = mode == BMode::optimistic ? static_cast<double>(p.nnz) : p.warp_nnz[static_cast<std::size_t>(g)];
  t.l1_bytes = slots * piece;
  t.l2_bytes = p.sum_d * piece;
  const bool split = segmented && p.split_work_rows > 0;
  finish_time(t, static_cast<double>(p.max_work_row), dev, mode, cal, split ? 2 : 1);
  return t;
}

template <class Value, class Index>
PanelColumns panel_columns(const Csr<Value, Index>& a, std::int64_t r) {
  return panel_columns(a, std::span<const WorkRow>(segment_rows(a, 0)), r);
}

template <class Value, class Index>
PanelColumns panel_columns(const Csr<Value, Index>& a, std::span<const WorkRow> work, std::int64_t r) {
  PanelColumns pc;
  pc.panel_rows = std::max<std::int64_t>(1, r);
  const auto nw = static_cast<std::int64_t>(work.size());
  pc.panels = (nw + pc.panel_rows - 1) / pc.panel_rows;
  std::vector<std::int64_t> seen(static_cast<std::size_t>(a.cols), -1);
  for (std::int64_t p = 0; p < pc.panels; ++p) {
    std::int64_t d = 0;
    const std::int64_t w1 = std::min<std::int64_t>(nw, (p + 1) * pc.panel_rows);
    for (std::int64_t w = p * pc.panel_rows; w < w1; ++w)
      for (std::int64_t q = work[static_cast<std::size_t>(w)].begin; q < work[static_cast<std::size_t>(w)].end; ++q) {
        std::int64_t& s = seen[static_cast<std::size_t>(a.col_idx[q])];
        if (s != p) s = p, ++d;
      }
    pc.sum_distinct += static_cast<double>(d);
    pc.max_panel_distinct = std::max(pc.max_panel_distinct, d);
  }
  return pc;
}

RowsTraffic panel_traffic(const ReuseProfile& p, const PanelColumns& pc, std::int64_t k, std::int64_t kt,
                          std::size_t value_bytes, std::size_t index_bytes, const DeviceModel& dev,
                          BMode mode, const RowsCalibration& cal) {
  RowsTraffic t;
  if (k <= 0) return t;
  // The warp loads each distinct column of its panel once (L1 slots = Σ distinct); L2 → SM as
  // the row-wise kernel (blocks of the same rows share L1 the same way).
  const double piece = start_traffic(t, p, k, kt, value_bytes, index_bytes, false, dev, mode, cal);
  t.l1_bytes = pc.sum_distinct * piece;
  t.l2_bytes = std::min(p.sum_d, pc.sum_distinct) * piece;
  RowsCalibration pcal = cal;
  pcal.efficiency = cal.panel_efficiency;
  pcal.l1_gbs = cal.panel_l1_gbs;
  finish_time(t, static_cast<double>(pc.max_panel_distinct), dev, mode, pcal, 1);
  return t;
}

std::int64_t rows_segsize(double bandwidth_seconds, const RowsCalibration& cal) {
  const double batches = cal.seg_latency_share * bandwidth_seconds / (cal.batch_latency_us * 1e-6);
  std::int64_t s = kRowsMinSegsize;
  while (s < (std::int64_t{1} << 20) && static_cast<double>(2 * s) / 4.0 <= batches) s *= 2;
  return s;
}

std::int64_t choose_k_tile(const ReuseProfile& p, std::int64_t k, std::size_t value_bytes,
                           std::size_t index_bytes, bool segmented, const DeviceModel& dev,
                           const RowsCalibration& cal) {
  const std::int64_t v = static_cast<std::int64_t>(16 / value_bytes);
  std::int64_t top = 1;
  while (top < k) top *= 2;
  top = std::min<std::int64_t>(top, 64 * v);
  std::int64_t best = top;
  double best_s = rows_traffic(p, k, top, value_bytes, index_bytes, segmented, dev, BMode::predicted, cal).seconds;
  for (std::int64_t kt = top / 2; kt >= 4 * v; kt /= 2) {
    const double s = rows_traffic(p, k, kt, value_bytes, index_bytes, segmented, dev, BMode::predicted, cal).seconds;
    if (s < best_s * 0.97) best = kt, best_s = s;  // narrower only for a clear gain (> 3%)
  }
  return best;
}

RowsChoice choose_rows_variant(const ReuseProfile& base, std::int64_t rows, std::int64_t k,
                               std::size_t vb, std::size_t ib, const DeviceModel& dev,
                               const RowsCalibration& cal,
                               const std::function<ReuseProfile(std::int64_t, bool)>& profile) {
  RowsChoice c;
  // The segment size: the paper's rule (ceil(U·mu) / ceil(mu)) is made for one thread per row
  // and whole-panel imbalance; in the row-wise kernel a group of lanes walks a row, so only rows
  // whose walk rivals the kernel's bandwidth time need cutting, and every cut costs a partial
  // write + read. So: the segment whose walk is seg_latency_share of the whole-row variant's
  // bandwidth time, never below 64 (on the H100, segsize ceil(mu) = 16 on gen:powerlaw made
  // 10.8 ms of a 1.5 ms problem).
  const std::int64_t kt0 = choose_k_tile(base, k, vb, ib, false, dev, cal);
  const auto bw = rows_traffic(base, k, kt0, vb, ib, false, dev, BMode::optimistic, cal);
  c.segsize = rows_segsize(bw.total / (dev.bandwidth_gbs * 1e9 * cal.efficiency), cal);
  // Groups of 16 lanes or fewer a row (fp32 K-tiles of up to 64 columns, fp64 of up to 32)
  // gather half a warp-wide group's bytes a nonzero or less, so a segment's walk weighs more
  // against the rest of the product: at the floor, segments of 32 instead of 64 where they cut
  // at most half of the rows (rows of 40–60 nonzeros, as in FEM matrices, would nearly all be
  // cut and summed again) and the rows they cut hold a tenth of the nonzeros or more, counted
  // as 32 per segment (a few rows just over 32 are not worth the kernel that sums the
  // segments). Measured on an H200,
  // segments of 32 against 64 (the variant forced), against the fastest cuSPARSE, fp32 K = 32:
  // wiki-Vote 0.84× -> 1.13×, ego-Facebook 1.17× -> 1.61×, ca-HepPh 1.19× -> 1.60×, HEP-th-new
  // 1.37× -> 1.65×, EAT_RS 1.24× -> 1.46×, email-Enron 1.46× -> 1.66×, gen:rmat:16:8 1.34× ->
  // 1.61×; fp32 K = 64 and fp64 K = 32: wiki-Vote 0.78× -> 0.95× and 0.92× -> 0.99×,
  // ego-Facebook 1.11× -> 1.36× and 1.26× -> 1.43×, vibrobox 1.30× -> 1.44× and 1.41× -> 1.49×;
  // but bcsstk17 2.10× -> 1.88× and s3rmq4m1 2.15× -> 2.06× at fp32 K = 32 (72% and 95% of
  // their rows longer than 32), nh2010 (its longest rows 33–74, 1% of the nonzeros) 1.39× ->
  // 1.30× at fp32 K = 64, and gen:powerlaw:200000:8 1.59× -> 1.47× and 1.43× -> 1.36×
  // (bench/results/2026-11-29-h200/tiled-short-segments).
  ReuseProfile short_profile;
  bool short_segments = false;
  if (c.segsize == kRowsMinSegsize && rows_group_lanes(kt0, vb) <= kShortSegmentLanes) {
    short_profile = profile(kShortSegsize, false);
    if (2 * short_profile.split_rows <= rows &&
        10 * kShortSegsize * short_profile.split_work_rows >= short_profile.nnz) {
      c.segsize = kShortSegsize;
      short_segments = true;
    }
  }
  for (int i = 0; i < 4; ++i) {
    const std::int64_t sg = i >= 2 ? c.segsize : 0;
    c.profiles[static_cast<std::size_t>(i)] = i == 0 ? base
                                              : i == 2 && short_segments ? short_profile
                                                                         : profile(sg, i % 2 != 0);
    const ReuseProfile& p = c.profiles[static_cast<std::size_t>(i)];
    const bool segmented = sg > 0 && p.work_rows != rows;
    c.kt[static_cast<std::size_t>(i)] = choose_k_tile(p, k, vb, ib, segmented, dev, cal);
    c.seconds[static_cast<std::size_t>(i)] =
        rows_traffic(p, k, c.kt[static_cast<std::size_t>(i)], vb, ib, segmented, dev, BMode::predicted, cal).seconds;
  }
  for (int i = 1; i < 4; ++i)
    if (c.seconds[static_cast<std::size_t>(i)] < c.seconds[static_cast<std::size_t>(c.chosen)] * 0.97) c.chosen = i;
  return c;
}

namespace {
RowsVariant predict_rows_from(const ReuseProfile& prof, std::int64_t rows, std::int64_t k,
                              const DeviceModel& dev, std::int64_t segsize, bool reorder, std::int64_t kt,
                              std::size_t vb, std::size_t ib, const RowsCalibration& cal) {
  RowsVariant v;
  v.segsize = segsize;
  v.reordered = reorder;
  v.name = std::string(segsize > 0 ? "segmented" : "baseline") + (reorder ? "+reorder" : "");
  v.profile = prof;
  const bool segmented = segsize > 0 && prof.work_rows != rows;
  if (kt <= 0) kt = choose_k_tile(v.profile, k, vb, ib, segmented, dev, cal);
  v.predicted = rows_traffic(v.profile, k, kt, vb, ib, segmented, dev, BMode::predicted, cal);
  v.all_miss = rows_traffic(v.profile, k, kt, vb, ib, segmented, dev, BMode::all_miss, cal);
  v.optimistic = rows_traffic(v.profile, k, kt, vb, ib, segmented, dev, BMode::optimistic, cal);
  return v;
}
}  // namespace

template <class Value, class Index>
RowsDecision decide_rows(const Csr<Value, Index>& a, std::int64_t k, const DeviceModel& dev,
                         const LbThresholds& lb, const RowsCalibration& cal,
                         std::int64_t panel_rows, std::int64_t panel_r) {
  RowsDecision d;
  const auto whole = segment_rows(a, 0);
  const auto base = reuse_profile(a, std::span<const WorkRow>(whole), panel_rows);
  // The paper's segment size, with U counted in blocks of the row-wise kernel at K = k.
  PatternStats ps;
  ps.nnz = a.nnz();
  ps.mu = a.rows > 0 ? static_cast<double>(a.nnz()) / static_cast<double>(a.rows) : 0;
  ps.cv = row_length_cv(a);
  ps.sigma = ps.cv * ps.mu;
  ps.u = static_cast<double>(base.panels) / dev.sm_count;
  const std::int64_t lb_seg = lb_segsize(ps, lb);
  const std::size_t vb = sizeof(Value), ib = sizeof(Index);
  const RowsChoice choice = choose_rows_variant(
      base, a.rows, k, vb, ib, dev, cal, [&](std::int64_t segsize, bool reorder) {
        auto work = segment_rows(a, segsize);
        if (reorder) sort_by_pattern(a, work);
        return reuse_profile(a, std::span<const WorkRow>(work), panel_rows);
      });
  const std::int64_t seg = choice.segsize;
  for (int i = 0; i < 4; ++i)
    d.variants.push_back(predict_rows_from(choice.profiles[static_cast<std::size_t>(i)], a.rows, k, dev,
                                           i >= 2 ? seg : 0, i % 2 != 0,
                                           choice.kt[static_cast<std::size_t>(i)], vb, ib, cal));
  d.chosen = choice.chosen;
  d.reason = "least predicted time of the row-wise kernel (" + d.variants[d.chosen].name + ", K-tile " +
             std::to_string(d.variants[d.chosen].predicted.kt) + "); paper flow: " +
             (lb_seg > 0 ? (ps.u < lb.u_min ? "underutilized" : "imbalanced") : std::string("balanced")) +
             " (paper segsize " + std::to_string(lb_seg) + "); row-wise segsize candidate " + std::to_string(seg) +
             " (longest row " + std::to_string(base.max_work_row) + ")";
  // The panel kernel: whole rows in order, R rows per warp, the same K-tile as the in-order
  // whole-row variant.
  // The panel kernel runs over the work rows of the chosen variant (segmented and/or reordered
  // as the format builds them), R of them per warp.
  {
    const auto& ch = d.variants[d.chosen];
    auto work = segment_rows(a, ch.segsize);
    if (ch.reordered) sort_by_pattern(a, work);
    d.panel.columns = panel_columns(a, std::span<const WorkRow>(work), panel_r);
  }
  // The panel kernel's K-tile: 128 fp32 / 64 fp64 columns per warp (tiled_cuda.cu).
  const std::int64_t pkt = std::min<std::int64_t>(k, static_cast<std::int64_t>(512 / vb));
  d.panel.predicted = panel_traffic(base, d.panel.columns, k, pkt, vb, ib, dev, BMode::predicted, cal);
  d.panel.all_miss = panel_traffic(base, d.panel.columns, k, pkt, vb, ib, dev, BMode::all_miss, cal);
  d.panel.optimistic = panel_traffic(base, d.panel.columns, k, pkt, vb, ib, dev, BMode::optimistic, cal);
  const double rows_s = d.variants[d.chosen].predicted.seconds;
  // kernel=auto's rule (RowsCalibration::panel_reuse / panel_slice_bytes, rows balanced by
  // lb.cv_max), so that the decision names the kernel the format runs for row-major B and C.
  const double reuse = d.panel.columns.sum_distinct > 0
                           ? static_cast<double>(a.nnz()) / d.panel.columns.sum_distinct : 0.0;
  const auto& chosen = d.variants[d.chosen];
  d.stride = rows_stride_runs(chosen.profile, chosen.predicted.kt, vb, dev.sm_count);
  d.kernel = reuse >= cal.panel_reuse && ps.cv <= lb.cv_max &&
                     static_cast<double>(k) * static_cast<double>(vb) >= cal.panel_slice_bytes &&
                     auto_runs_panel(k, vb, d.panel.columns.panels, cal.panel_per_sm, dev.sm_count) && !d.stride
                 ? "panel" : "rows";
  d.reason += "; kernel=" + d.kernel + (d.stride ? " (strided schedule)" : "") + " (panel R=" +
              std::to_string(d.panel.columns.panel_rows) + " " + std::to_string(d.panel.predicted.seconds * 1e3) +
              " ms vs rows " + std::to_string(rows_s * 1e3) + " ms)";
  return d;
}

template <class Value, class Index>
RowsVariant predict_rows(const Csr<Value, Index>& a, std::int64_t k, const DeviceModel& dev,
                         std::int64_t segsize, bool reorder, std::int64_t kt,
                         const RowsCalibration& cal, std::int64_t panel_rows) {
  auto work = segment_rows(a, segsize);
  if (reorder) sort_by_pattern(a, work);
  const auto prof = reuse_profile(a, std::span<const WorkRow>(work), panel_rows);
  return predict_rows_from(prof, a.rows, k, dev, segsize, reorder, kt, sizeof(Value), sizeof(Index), cal);
}

#define SPMAT_INSTANTIATE(V, I)                                                                   \
  template std::vector<WorkRow> segment_rows(const Csr<V, I>&, std::int64_t);                     \
  template void sort_by_pattern(const Csr<V, I>&, std::vector<WorkRow>&);                         \
  template TilePlan<I> plan_tiles(const Csr<V, I>&, std::span<const WorkRow>, std::int64_t,       \
                                  std::int64_t);                                                  \
  template PatternStats pattern_stats(const Csr<V, I>&, std::span<const WorkRow>,                 \
                                      const TilePlan<I>&, std::int64_t, DenseLayout, int,         \
                                      std::size_t, const DeviceModel&);                           \
  template VariantPrediction predict_variant(const Csr<V, I>&, std::int64_t, DenseLayout,         \
                                             const TileParams&, const DeviceModel&, std::int64_t, \
                                             bool);                                               \
  template ModelReport evaluate(const Csr<V, I>&, std::int64_t, DenseLayout, const TileParams&,   \
                                const DeviceModel&, const LbThresholds&);                         \
  template ReuseProfile reuse_profile(const Csr<V, I>&, std::span<const WorkRow>, std::int64_t);  \
  template RowsDecision decide_rows(const Csr<V, I>&, std::int64_t, const DeviceModel&,           \
                                    const LbThresholds&, const RowsCalibration&, std::int64_t,    \
                                    std::int64_t);                                                \
  template RowsVariant predict_rows(const Csr<V, I>&, std::int64_t, const DeviceModel&,           \
                                    std::int64_t, bool, std::int64_t, const RowsCalibration&,     \
                                    std::int64_t);                                                \
  template PanelColumns panel_columns(const Csr<V, I>&, std::int64_t);                           \
  template PanelColumns panel_columns(const Csr<V, I>&, std::span<const WorkRow>, std::int64_t);
SPMAT_FOR_EACH_TYPE_PAIR(SPMAT_INSTANTIATE)
#undef SPMAT_INSTANTIATE

}  // namespace spmat::model
