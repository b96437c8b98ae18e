// spmat/formats/tiled/tiled.cpp — tiled format: build (with the model's variant choice), to_csr,
// storage and traffic bytes, registry entry.
// SPDX-License-Identifier: MIT
#include "spmat/formats/tiled/tiled.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "spmat/core/typed_options.hpp"
#include "spmat/model/traffic.hpp"

namespace spmat {

namespace {
model::DeviceModel device_from(const std::string& name) {
  if (name == "h100" || name == "h200" || name == "a100") return model::device_by_name(name);
  throw ParseError("tiled: device=" + name + " is not one of h100, h200, a100");
}

/// out_row / seg_ptr / seg_list of a non-identity work-row order (empty for the identity).
template <class Value, class Index>
void set_output_map(TiledStorage<Value, Index>& s, const Csr<Value, Index>& a,
                    const std::vector<model::WorkRow>& work) {
  const std::int64_t nw = static_cast<std::int64_t>(work.size());
  bool identity = nw == static_cast<std::int64_t>(a.rows);
  for (std::int64_t w = 0; identity && w < nw; ++w) identity = work[w].row == w;
  if (identity) return;
  s.out_row.resize(work.size());
  s.seg_ptr.assign(static_cast<std::size_t>(a.rows) + 1, 0);
  for (std::int64_t w = 0; w < nw; ++w) {
    s.out_row[w] = static_cast<Index>(work[w].row);
    ++s.seg_ptr[work[w].row + 1];
  }
  for (std::int64_t i = 0; i < a.rows; ++i) s.seg_ptr[i + 1] += s.seg_ptr[i];
  s.seg_list.resize(work.size());
  std::vector<std::int64_t> fill(s.seg_ptr.begin(), s.seg_ptr.end() - 1);
  for (std::int64_t w = 0; w < nw; ++w) s.seg_list[fill[work[w].row]++] = static_cast<Index>(w);
  // Segments of a row in column order (reordering may have moved them apart).
  for (std::int64_t i = 0; i < a.rows; ++i)
    std::sort(s.seg_list.begin() + s.seg_ptr[i], s.seg_list.begin() + s.seg_ptr[i + 1],
              [&](Index x, Index y) { return work[x].begin < work[y].begin; });
}

/// Column ids of panel p (work rows p·R ..) with their row in the panel and value, sorted by
/// (column, row).
template <class Value, class Index>
void panel_entries(const Csr<Value, Index>& a, const std::vector<model::WorkRow>& work, std::int64_t p,
                   int R, std::vector<std::pair<std::int64_t, std::int64_t>>& e) {
  e.clear();
  const std::int64_t nw = static_cast<std::int64_t>(work.size());
  for (std::int64_t r = 0; r < R && p * R + r < nw; ++r) {
    const auto& w = work[p * R + r];
    for (std::int64_t q = w.begin; q < w.end; ++q)
      e.emplace_back(static_cast<std::int64_t>(a.col_idx[q]) * 64 + r, q);  // r < 32 < 64
  }
  std::sort(e.begin(), e.end());
}

/// The panel kernel's arrays (pn_*) over the work rows, R rows per panel. min_reuse > 0: build
/// nothing when nnz / Σ_p D_p < min_reuse (kernel=auto).
template <class Value, class Index>
void build_panels(TiledStorage<Value, Index>& s, const Csr<Value, Index>& a,
                  const std::vector<model::WorkRow>& work, int R, double min_reuse) {
  const std::int64_t nw = static_cast<std::int64_t>(work.size()), np = (nw + R - 1) / R;
  std::vector<std::int64_t> dptr(static_cast<std::size_t>(np) + 1, 0), vptr(static_cast<std::size_t>(np) + 1, 0);
  // Pass 1: distinct columns and nonzeros per panel.
#pragma omp parallel
  {
    std::vector<std::pair<std::int64_t, std::int64_t>> e;
#pragma omp for schedule(dynamic, 256)
    for (std::int64_t p = 0; p < np; ++p) {
      panel_entries(a, work, p, R, e);
      std::int64_t d = 0;
      for (std::size_t i = 0; i < e.size(); ++i) d += i == 0 || (e[i].first >> 6) != (e[i - 1].first >> 6);
      dptr[p + 1] = d;
      vptr[p + 1] = static_cast<std::int64_t>(e.size());
    }
  }
  for (std::int64_t p = 0; p < np; ++p) dptr[p + 1] += dptr[p], vptr[p + 1] += vptr[p];
  const double reuse = dptr[np] > 0 ? static_cast<double>(vptr[np]) / static_cast<double>(dptr[np]) : 0.0;
  if (min_reuse > 0 && reuse < min_reuse) return;
  const std::int64_t lim = index_max<Index>();
  if (dptr[np] > lim || vptr[np] > lim || np + 1 > lim)
    throw IndexOverflowError("tiled: kernel=panel: " + std::to_string(dptr[np]) + " panel-distinct columns and " +
                             std::to_string(vptr[np]) + " nonzeros do not fit the " +
                             std::string(index_name<Index>()) + " offsets; use int64 indices");
  s.panel_r = R;
  s.panel_reuse = reuse;
  s.pn_col_ptr.resize(dptr.size());
  s.pn_val_ptr.resize(vptr.size());
  for (std::size_t i = 0; i < dptr.size(); ++i) {
    s.pn_col_ptr[i] = static_cast<Index>(dptr[i]);
    s.pn_val_ptr[i] = static_cast<Index>(vptr[i]);
  }
  s.pn_col.resize(static_cast<std::size_t>(dptr[np]));
  s.pn_mask.assign(static_cast<std::size_t>(dptr[np]), 0u);
  s.pn_val.resize(static_cast<std::size_t>(vptr[np]));
  // Pass 2: fill.
#pragma omp parallel
  {
    std::vector<std::pair<std::int64_t, std::int64_t>> e;
#pragma omp for schedule(dynamic, 256)
    for (std::int64_t p = 0; p < np; ++p) {
      panel_entries(a, work, p, R, e);
      std::int64_t d = dptr[p] - 1, v = vptr[p];
      for (std::size_t i = 0; i < e.size(); ++i) {
        if (i == 0 || (e[i].first >> 6) != (e[i - 1].first >> 6)) s.pn_col[++d] = static_cast<Index>(e[i].first >> 6);
        s.pn_mask[d] |= 1u << (e[i].first & 63);
        s.pn_val[v++] = a.values[e[i].second];
      }
    }
  }
}

/// The work rows of both layouts (row kernels and S-ELL): rows cut into segments of segsize
/// entries (0: whole rows), optionally sorted by column pattern. Work rows are addressed with
/// Index, so their count must fit it.
template <class Value, class Index>
std::vector<model::WorkRow> segmented_work(const Csr<Value, Index>& a, std::int64_t segsize,
                                           bool reorder) {
  auto work = model::segment_rows(a, segsize);
  if (static_cast<std::int64_t>(work.size()) > index_max<Index>())
    throw IndexOverflowError("tiled: " + std::to_string(work.size()) + " work rows (segsize " +
                             std::to_string(segsize) + ") do not fit the " +
                             std::string(index_name<Index>()) + " index type; use int64 indices "
                             "or a larger segsize");
  if (reorder) model::sort_by_pattern(a, work);
  return work;
}
}  // namespace

TiledRowsLayout tiled_rows_layout(const TiledOptions& opt, std::int64_t rows, std::size_t vb,
                                  std::size_t ib, const TiledProfileFn& profile) {
  TiledRowsLayout out;
  out.segsize = opt.variant == "baseline" ? 0 : opt.segsize;
  out.reorder = opt.reorder == "on";
  if (!((opt.variant != "baseline" && out.segsize == 0) || opt.reorder == "auto")) return out;
  const auto dev = device_from(opt.device);
  const model::RowsCalibration cal;
  const std::int64_t k = opt.k;
  constexpr std::int64_t kPanelRows = 256;  // the reuse granularity of the predictions
  const model::ReuseProfile base = profile(0, false, kPanelRows);
  const model::RowsChoice choice = model::choose_rows_variant(
      base, rows, k, vb, ib, dev, cal,
      [&](std::int64_t segsize, bool reorder) { return profile(segsize, reorder, kPanelRows); });
  const std::int64_t seg = choice.segsize;
  const int chosen = choice.chosen;
  const auto& seconds = choice.seconds;
  const auto& kts = choice.kt;
  if (opt.variant == "auto" && out.segsize == 0) out.segsize = chosen >= 2 ? seg : 0;
  if (opt.variant == "segmented" && out.segsize == 0) out.segsize = seg;
  if (opt.reorder == "auto") {
    // With the segmentation decided above: reorder iff the model predicts it faster.
    const int b = out.segsize > 0 ? 2 : 0;
    out.reorder = seconds[b + 1] < seconds[b] * 0.97;
  }
  static constexpr const char* kNames[4] = {"baseline", "baseline+reorder", "segmented", "segmented+reorder"};
  out.reason = std::string("least predicted time of the row-wise kernel (") + kNames[chosen] + ", K-tile " +
               std::to_string(kts[chosen]) + "); row-wise segsize candidate " + std::to_string(seg) +
               " (longest row " + std::to_string(base.max_work_row) + ")";
  return out;
}

const OptionTable<TiledOptions>& TiledOptions::fields() {
  using O = TiledOptions;
  constexpr auto no_max = std::numeric_limits<std::int64_t>::max();
  static const OptionTable<O> t{
      choice_option("kernel", &O::kernel, {"auto", "rows", "panel", "sell"},
                    "GPU kernel: auto (rows; panel for row-major K*sizeof(value) >= 256 B when the panel reuse >= panel_reuse, the rows "
                    "are balanced (sigma/mu <= cv_max) and there are panel_per_sm panels per SM), "
                    "rows (row-wise, vector loads along K, K-tiled for L2), panel (each B row slice loaded once per panel of "
                    "panel_rows rows, row-major; column-major runs rows), sell (the paper's staged 16-bit S-ELL)"),
      double_option("panel_reuse", &O::panel_reuse, 0.0, true,
                    "kernel=auto: build the panel kernel's arrays (R = 4) iff nnz / sum of panel-distinct columns >= this"),
      int_option("panel_per_sm", &O::panel_per_sm, 0, no_max,
                 "kernel=auto: run the panel kernel only with at least this many panels (of 4 work rows) per SM, "
                 "else the row kernel (0 = no minimum)"),
      int_choice_option("kt", &O::kt, {0, 1, 2, 4, 8, 16, 32, 64, 128, 256},
                        "kernel=rows: K-tile, dense columns per pass (0 = the model's choice per call; else a power of two <= 256)"),
      int_choice_option("batch", &O::batch, {0, 4, 8},
                        "B-row loads per batch: kernel=rows 4 (+ dependent tail), 8 (predicated), 0 = auto (4 if mean work row < 8 nonzeros or half a warp or more per row slice, else 8); "
                        "kernel=panel (fp32): distinct columns in flight per panel, 4 or 8 (auto: 4)"),
      choice_option("cstore", &O::cstore, {"auto", "plain", "stream"},
                    "kernel=rows: C stores: plain, stream (st.global.cs, evict-first), auto (stream with batch 8 or 16+ lanes a row)"),
      choice_option("schedule", &O::schedule, {"auto", "grid", "stride"},
                    "row kernel at a warp a row (fp32, K-tiles of 128 columns; elsewhere grid): grid (one warp a work row, "
                    "blocks scheduled by the hardware), stride (one resident grid, each warp walking work rows w, w+S, ... "
                    "and loading the next row's column ids while it gathers this row's B rows), auto (stride for short, "
                    "balanced work rows: mean <= 12 nonzeros, sigma/mu <= 0.7, >= 4 rows per resident warp)"),
      choice_option("variant", &O::variant, {"auto", "baseline", "segmented"},
                    "auto (model decides), baseline, segmented (load balancing, §5.1)"),
      int_option("segsize", &O::segsize, 0, no_max,
                 "nonzeros per segment (0 = the model's: ceil(U*mu) if underutilized, else ceil(mu))"),
      choice_option("reorder", &O::reorder, {"auto", "on", "off"},
                    "sort rows on their bit-pattern (§5.2): auto (iff the model predicts a gain), on, off"),
      int_choice_option("r", &O::r, {1, 2, 4, 8, 16, 32},
                        "register tile R: dense columns per GPU thread (1,2,4,8,16,32)"),
      int_option("panel_rows", &O::panel_rows, 1, 1024,
                 "work rows per panel (sell: = GPU threads per block; rows: the model's reuse granularity), a multiple "
                 "of 32 in 32..1024 (auto: 256); kernel=panel: R, rows per panel = per warp (4, 8, 16, 32; auto: 4)"),
      int_option("smem", &O::smem, 1, 227 * 1024,
                 "shared-memory bytes per block for staged B (stage slots = smem/(r*sizeof(value)))"),
      int_option("k", &O::k, 1, no_max, "the K the model plans for (variant/reorder = auto)"),
      layout_option("layout", &O::layout, "the dense layout the model plans for (row, col)"),
      choice_option("device", &O::device, {"h100", "h200", "a100"},
                    "device numbers of the model: h100, h200, a100"),
      double_option("u_min", &O::u_min, 0.0, false, "underutilized when U = blocks/SMs < u_min"),
      double_option("cv_max", &O::cv_max, 0.0, false, "imbalanced when sigma/mu of the row lengths > cv_max (the paper flow segments; kernel=auto keeps the row kernel)")};
  return t;
}

template <class Value, class Index>
TiledStorage<Value, Index> TiledStorage<Value, Index>::build(const Csr<Value, Index>& a,
                                                             const FormatOptions& o) {
  TiledStorage s;
  s.rows = a.rows;
  s.cols = a.cols;
  s.nnz = a.nnz();
  const auto opt = parse_options<TiledOptions>(o);
  const std::int64_t r = opt.r;
  s.r = opt.r;
  const std::string& kernel = opt.kernel;
  int panel_r = 0;
  if (kernel == "panel") {
    // kernel=panel: panel_rows is R, the work rows of one panel (one warp's register tile).
    const std::int64_t pr = opt.panel_rows.value_or(4);
    if (pr != 4 && pr != 8 && pr != 16 && pr != 32)
      throw ParseError("tiled: kernel=panel: panel_rows=" + std::to_string(pr) + " is not one of 4, 8, 16, 32");
    panel_r = static_cast<int>(pr);
    s.panel_rows = 256;
  } else {
    s.panel_rows = opt.panel_rows.value_or(256);
    if (s.panel_rows < 32 || s.panel_rows > 1024 || s.panel_rows % 32 != 0)
      throw ParseError("tiled: panel_rows=" + std::to_string(s.panel_rows) +
                       " must be a multiple of 32 in [32, 1024] (it is the GPU block size)");
  }
  const double panel_reuse_min = opt.panel_reuse;
  s.smem_bytes = opt.smem;
  if (s.smem_bytes < static_cast<std::int64_t>(r * sizeof(Value)))
    throw ParseError("tiled: smem=" + std::to_string(s.smem_bytes) +
                     " bytes must hold one slot of r values and be at most 232448 (227 KiB)");
  s.stage_cap = model::stage_capacity(s.smem_bytes, s.r, sizeof(Value));

  s.sell = kernel == "sell";
  s.kt = opt.kt;
  s.panel_per_sm = opt.panel_per_sm;
  s.batch = opt.batch;
  s.cstore = opt.cstore == "auto" ? 0 : (opt.cstore == "plain" ? 1 : 2);
  s.schedule = opt.schedule == "auto" ? 0 : (opt.schedule == "grid" ? 1 : 2);
  s.device = opt.device;
  const std::string& variant = opt.variant;
  const std::string& reorder = opt.reorder;
  std::int64_t segsize = opt.segsize;
  bool do_reorder = reorder == "on";
  if (variant == "baseline") segsize = 0;
  const std::int64_t plan_k = opt.k;
  const model::LbThresholds lbt{opt.u_min, opt.cv_max};

  if (!s.sell) {
    // Row-wise kernel: the model predicts the four variants and picks the fastest for what the
    // user left open; a fixed variant/segsize/reorder is taken as given.
    const auto layout = tiled_rows_layout(opt, a.rows, sizeof(Value), sizeof(Index),
                                          [&](std::int64_t seg, bool sorted, std::int64_t pr) {
      auto w = model::segment_rows(a, seg);
      if (sorted) model::sort_by_pattern(a, w);
      return model::reuse_profile(a, std::span<const model::WorkRow>(w), pr);
    });
    segsize = layout.segsize;
    do_reorder = layout.reorder;
    s.plan_reason = layout.reason;
    s.segsize = segsize;
    s.reordered = do_reorder;
    auto work = segmented_work(a, segsize, do_reorder);
    s.reuse = model::reuse_profile(a, std::span<const model::WorkRow>(work), s.panel_rows);
    s.col_idx = a.col_idx;
    s.values = a.values;
    s.wr_begin.resize(work.size());
    s.wr_end.resize(work.size());
    for (std::size_t w = 0; w < work.size(); ++w) {
      s.wr_begin[w] = static_cast<Index>(work[w].begin);
      s.wr_end[w] = static_cast<Index>(work[w].end);
    }
    s.panel_stage_ptr.clear();
    s.stage_map_ptr.clear();
    s.slab_ptr.clear();
    if (kernel == "panel") build_panels(s, a, work, panel_r, 0.0);
    // kernel=auto: the panel kernel walks the union of a panel's rows with one group, so rows of
    // very unequal lengths (σ/μ > cv_max, the imbalance bound of the paper flow) leave it one
    // long panel per hub row; they keep the row kernel, which splits long rows.
    if (kernel == "auto" && model::row_length_cv(a) <= opt.cv_max) build_panels(s, a, work, 4, panel_reuse_min);
    s.panel_forced = kernel == "panel";
    set_output_map(s, a, work);
    return s;
  }

  // The model decides what the user left open (variant=auto, segsize=0, reorder=auto).
  if ((variant != "baseline" && segsize == 0) || reorder == "auto") {
    const std::int64_t k = plan_k;
    const DenseLayout layout = opt.layout;
    const model::TileParams tile{s.r, s.panel_rows, s.smem_bytes};
    const auto dev = device_from(s.device);
    const model::LbThresholds lb = lbt;
    const auto base = model::predict_variant(a, k, layout, tile, dev, 0, false);
    if (variant != "baseline" && segsize == 0) {
      segsize = model::lb_segsize(base.stats, lb);
      if (variant == "segmented" && segsize == 0)
        segsize = std::max<std::int64_t>(1, static_cast<std::int64_t>(std::ceil(base.stats.mu)));
      s.plan_reason = segsize > 0 ? "segsize " + std::to_string(segsize) : "no segmentation";
    }
    if (reorder == "auto") {
      const auto plain = segsize == 0 ? base : model::predict_variant(a, k, layout, tile, dev, segsize, false);
      const auto sorted = model::predict_variant(a, k, layout, tile, dev, segsize, true);
      do_reorder = sorted.all_miss.intensity > plain.all_miss.intensity;
      s.plan_reason += std::string(s.plan_reason.empty() ? "" : "; ") +
                       (do_reorder ? "reordered (all-miss intensity " : "not reordered (all-miss intensity ") +
                       std::to_string(plain.all_miss.intensity) + " -> " +
                       std::to_string(sorted.all_miss.intensity) + ")";
    }
  }
  s.segsize = segsize;
  s.reordered = do_reorder;

  auto work = segmented_work(a, segsize, do_reorder);
  auto plan = model::plan_tiles(a, std::span<const model::WorkRow>(work), s.panel_rows, s.stage_cap);

  const std::int64_t wpp = s.warps_per_panel(), nw = static_cast<std::int64_t>(work.size());
  s.slab_ptr.assign(plan.slab_len.size() + 1, 0);
  for (std::size_t i = 0; i < plan.slab_len.size(); ++i)
    s.slab_ptr[i + 1] = s.slab_ptr[i] + 32 * plan.slab_len[i];
  s.ell_idx.assign(static_cast<std::size_t>(s.slab_ptr.back()), kPad);
  s.ell_val.assign(static_cast<std::size_t>(s.slab_ptr.back()), Value(0));
  const std::int64_t np = plan.panels();
#pragma omp parallel for schedule(dynamic, 4)
  for (std::int64_t p = 0; p < np; ++p) {
    const std::int64_t s0 = plan.panel_stage_ptr[p];
    const Index* m0 = plan.map.data() + plan.stage_map_ptr[s0];
    const Index* m1 = plan.map.data() + plan.stage_map_ptr[plan.panel_stage_ptr[p + 1]];
    for (std::int64_t w = p * s.panel_rows; w < std::min(nw, (p + 1) * s.panel_rows); ++w) {
      const std::int64_t local = w - p * s.panel_rows, warp = local / 32, lane = local % 32;
      std::int64_t cur = -1, j = 0;
      for (std::int64_t q = work[w].begin; q < work[w].end; ++q) {
        const std::int64_t pos = std::lower_bound(m0, m1, a.col_idx[q]) - m0;
        const std::int64_t st = s0 + pos / s.stage_cap;
        if (st != cur) cur = st, j = 0;
        const std::int64_t at = s.slab_ptr[st * wpp + warp] + 32 * j++ + lane;
        s.ell_idx[at] = static_cast<std::uint16_t>(pos % s.stage_cap);
        s.ell_val[at] = a.values[q];
      }
    }
  }
  s.panel_stage_ptr = std::move(plan.panel_stage_ptr);
  s.stage_map_ptr = std::move(plan.stage_map_ptr);
  s.map = std::move(plan.map);

  set_output_map(s, a, work);
  return s;
}

template <class Value, class Index>
Csr<Value, Index> TiledStorage<Value, Index>::to_csr() const {
  Csr<Value, Index> c;
  c.rows = rows;
  c.cols = cols;
  c.row_ptr.assign(static_cast<std::size_t>(rows) + 1, 0);
  c.col_idx.resize(static_cast<std::size_t>(nnz));
  c.values.resize(static_cast<std::size_t>(nnz));
  auto for_row = [&](std::int64_t i, auto&& f) {
    if (out_row.empty()) return for_each_in_work_row(i, f);
    for (std::int64_t q = seg_ptr[i]; q < seg_ptr[i + 1]; ++q) for_each_in_work_row(seg_list[q], f);
  };
#pragma omp parallel for schedule(dynamic, 256)
  for (std::int64_t i = 0; i < rows; ++i) {
    Index n = 0;
    for_row(i, [&](std::int64_t, Value) { ++n; });
    c.row_ptr[i + 1] = n;
  }
  for (std::int64_t i = 0; i < rows; ++i) c.row_ptr[i + 1] += c.row_ptr[i];
#pragma omp parallel for schedule(dynamic, 256)
  for (std::int64_t i = 0; i < rows; ++i) {
    std::int64_t at = c.row_ptr[i];
    for_row(i, [&](std::int64_t col, Value v) {
      c.col_idx[at] = static_cast<Index>(col);
      c.values[at++] = v;
    });
  }
  return c;
}

// The structure stays; the values go where the build put them: kernel=rows/panel/auto keep
// A's values as given (CSR order) and pn_val in (panel, distinct column, row) order; sell keeps
// them in its S-ELL slots. One slot per entry everywhere, so no rebuild is needed.
template <class Value, class Index>
void update_values(TiledStorage<Value, Index>& s, const Value* values) {
  if (!s.sell) {
    std::copy(values, values + s.nnz, s.values.begin());
    // Panel p's nonzeros in (distinct column, row) order: the columns of each of its work rows
    // ascend, as do the panel's distinct columns, so one cursor per row meets its entries in
    // that order.
    const std::int64_t R = s.panel_r, np = s.panel_count(), nw = s.work_rows();
#pragma omp parallel for schedule(dynamic, 256)
    for (std::int64_t p = 0; p < np; ++p) {
      std::int64_t cur[32] = {};
      for (std::int64_t r = 0; r < R && p * R + r < nw; ++r) cur[r] = s.wr_begin[p * R + r];
      std::int64_t v = s.pn_val_ptr[p];
      for (std::int64_t d = s.pn_col_ptr[p]; d < s.pn_col_ptr[p + 1]; ++d)
        for (std::int64_t r = 0; r < R; ++r)
          if ((s.pn_mask[d] >> r) & 1u) s.pn_val[v++] = values[cur[r]++];
    }
    return;
  }
  // S-ELL: each output row's work rows in column order (to_csr's walk), each work row's slots
  // in column order (stages ascend, and so do the slots of a slab).
  const std::int64_t wpp = s.warps_per_panel();
  std::int64_t q = 0;
  auto walk = [&](std::int64_t w) {
    const std::int64_t p = w / s.panel_rows, local = w % s.panel_rows, warp = local / 32, lane = local % 32;
    for (std::int64_t st = s.panel_stage_ptr[p]; st < s.panel_stage_ptr[p + 1]; ++st)
      for (std::int64_t at = s.slab_ptr[st * wpp + warp] + lane; at < s.slab_ptr[st * wpp + warp + 1]; at += 32)
        if (s.ell_idx[at] != TiledStorage<Value, Index>::kPad) s.ell_val[at] = values[q++];
  };
  for (std::int64_t i = 0; i < s.rows; ++i) {
    if (s.out_row.empty()) {
      walk(i);
      continue;
    }
    for (std::int64_t x = s.seg_ptr[i]; x < s.seg_ptr[i + 1]; ++x) walk(s.seg_list[x]);
  }
}

template <class Value, class Index>
std::size_t TiledStorage<Value, Index>::storage_bytes() const {
  return (panel_stage_ptr.size() + stage_map_ptr.size() + slab_ptr.size() + seg_ptr.size()) *
             sizeof(std::int64_t) +
         (map.size() + out_row.size() + seg_list.size() + wr_begin.size() + wr_end.size() + col_idx.size()) *
             sizeof(Index) +
         values.size() * sizeof(Value) +
         (pn_col_ptr.size() + pn_val_ptr.size() + pn_col.size()) * sizeof(Index) +
         pn_mask.size() * sizeof(std::uint32_t) + pn_val.size() * sizeof(Value) +
         ell_idx.size() * sizeof(std::uint16_t) + ell_val.size() * sizeof(Value);
}

template <class Value, class Index>
std::size_t traffic_bytes(const TiledStorage<Value, Index>& s, Op op, std::int64_t k) {
  return tiled_traffic<Value, Index>(s, s.storage_bytes(), s.segmented(), s.work_rows(), op, k);
}

#define SPMAT_INSTANTIATE(V, I)                                                  \
  template struct TiledStorage<V, I>;                                            \
  template void update_values(TiledStorage<V, I>&, const V*);                     \
  template std::size_t traffic_bytes(const TiledStorage<V, I>&, Op, std::int64_t);
SPMAT_FOR_EACH_TYPE_PAIR(SPMAT_INSTANTIATE)
#undef SPMAT_INSTANTIATE

}  // namespace spmat
