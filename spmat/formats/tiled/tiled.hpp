// spmat/formats/tiled/tiled.hpp — Tiled SpMM storage: row panels, staged column maps,
// warp-sliced ELL with 16-bit shared-memory indices; optional segmentation and row reordering.
// SPDX-License-Identifier: MIT
//
// The matrix is a list of work rows (whole rows, or segments of at most `segsize` nonzeros when
// load balancing is on), optionally sorted on their sparsity bit-pattern, cut into panels of
// `panel_rows` work rows (one GPU block, one thread per work row). Each panel's sorted distinct
// columns are cut into stages of at most `stage_cap` columns (the shared-memory slots of one
// stage: smem / (R·sizeof(Value))). For each (stage, warp of 32 work rows) an S-ELL slab of
// L_w × 32 entries holds (uint16 slot in the stage, value), column-major within the slab (entry
// (j, lane) at slab_ptr + 32·j + lane), padding = (0xFFFF, 0).
//
// Example: 4×4 [[1,0,2,0],[0,0,0,0],[3,4,0,5],[0,0,0,6]], panel_rows = 32, stage_cap = 2, no
// segmentation, no reorder: one panel (4 work rows; lanes 4..31 are padding), distinct columns
// {0,1,2,3} cut into stages {0,1} and {2,3}:
//   panel_stage_ptr = {0, 2}, stage_map_ptr = {0, 2, 4}, map = {0, 1, 2, 3}
//   slab_ptr = {0, 64, 96}   (stage 0: L = 2, row 2 holds cols 0 and 1; stage 1: L = 1)
//   ell_idx (lanes 0..3 shown, P = 0xFFFF): stage 0 j=0 {0,P,0,P}, j=1 {P,P,1,P};
//                                           stage 1 j=0 {0,P,1,1}
//   ell_val:                                stage 0 j=0 {1,0,3,0}, j=1 {0,0,4,0};
//                                           stage 1 j=0 {2,0,5,6}
//   out_row, seg_ptr, seg_list empty (identity order).
// kernel=rows (the default GPU kernel, beyond the paper): no panels/stages/slabs are built; the
// work rows are ranges [wr_begin[w], wr_end[w]) of col_idx/values (A's CSR arrays, copied), in
// work-row order (segmented and/or reordered), and `reuse` holds the B-row reuse profile from
// which the model picks the K-tile at spmm time. Example above, kernel=rows: wr_begin = {0,2,2,5},
// wr_end = {2,2,5,6}, col_idx = {0,2,0,1,3,3}.
// kernel=panel (beyond the paper): on top of the kernel=rows arrays, the work rows are
// cut into panels of R = panel_rows consecutive work rows (4, 8, 16 or 32); for panel p,
// pn_col[pn_col_ptr[p] .. pn_col_ptr[p+1]) lists the distinct columns of the panel in ascending
// order (the staged column map), pn_mask[d] has bit r set iff work row p·R + r has a nonzero in
// column pn_col[d], and pn_val[pn_val_ptr[p] ..) holds the panel's nonzeros in (distinct
// column, row) order, no padding. The GPU kernel loads each B row slice once per panel and
// applies it to the rows of its mask. Example above, kernel=panel,panel_rows=4: one panel,
// pn_col_ptr = {0, 4}, pn_col = {0, 1, 2, 3}, pn_mask = {0b0101, 0b0100, 0b0001, 0b1100},
// pn_val_ptr = {0, 6}, pn_val = {1, 3, 4, 2, 5, 6}. kernel=auto (default) builds these arrays
// (R = 4) only when the row lengths are balanced (σ/μ <= cv_max) and the reuse nnz / Σ_p D_p >=
// panel_reuse, and then uses the panel kernel for row-major calls with K·sizeof(Value) >= 256
// bytes (fp32 K >= 64, fp64 K >= 32) when there are panel_per_sm panels per SM.
// Traffic (spmm, k columns, tile R): per R-column tile the S-ELL stream (V+2 per slot), the staged
// B values and map ids, the C block; see tiled_traffic below.
// From a CSR in device memory, kernel = auto, rows and panel build on the GPU
// (tiled_device_build.cu: the same arrays, the layout chosen by tiled_rows_layout on profiles
// counted on the device); kernel=sell builds on the host from a downloaded copy. update_values
// keeps the structure: every layout holds one slot per entry.
#pragma once
#include <algorithm>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "spmat/core/csr.hpp"
#include "spmat/core/options.hpp"
#include "spmat/core/typed_options.hpp"
#include "spmat/formats/format_common.hpp"
#include "spmat/matrix_impl.hpp"
#include "spmat/model/intensity.hpp"
#include "spmat/model/traffic.hpp"
#include "spmat/format_options.hpp"

namespace spmat {

template <class Value, class Index>
struct TiledStorage {
  static constexpr std::uint16_t kPad = 0xFFFF;

  Index rows = 0, cols = 0;
  std::int64_t nnz = 0;
  int r = 16;                           ///< register tile of the GPU kernel (dense columns/thread)
  std::int64_t panel_rows = 256;        ///< work rows per panel = threads per block
  std::int64_t stage_cap = 768;         ///< slots per stage (= smem_bytes / (r·sizeof(Value)))
  std::int64_t smem_bytes = 48 * 1024;
  std::int64_t segsize = 0;             ///< 0 = rows not segmented
  bool reordered = false;
  std::string plan_reason;              ///< why variant=auto chose this layout (empty otherwise)
  bool sell = false;                    ///< kernel=sell: the paper's staged S-ELL kernel
  std::int64_t kt = 0;                  ///< kernel=rows: K-tile (0 = the model's, per spmm call)
  std::string device = "h200";          ///< device numbers of the model (kt choice)
  int batch = 0;   ///< kernel=rows: B loads per batch, 4 (+ dependent tail) or 8 (predicated); 0 = auto
  int cstore = 0;  ///< kernel=rows: C stores 0 = auto (streaming with batch 8 or >= 16 lanes a row), 1 = plain, 2 = streaming
  /// kernel=rows, fp32 K-tiles of 128 columns: 0 = auto (model::rows_stride_runs), 1 = grid (a
  /// warp a work row, blocks scheduled by the hardware), 2 = stride (resident warps stride over
  /// the work rows, the next row's ids loaded during this row's gathers)
  int schedule = 0;
  /// kernel=panel / auto: 0 = no panel arrays; else R, the work rows per panel of the panel kernel.
  int panel_r = 0;
  bool panel_forced = false;  ///< kernel=panel: row-major calls always use the panel kernel
  std::int64_t panel_per_sm = 60;  ///< kernel=auto: fewest panels per SM for the panel kernel
  double panel_reuse = 0;     ///< nnz / Σ_p D_p of the panel arrays (0 when not built)

  // kernel=rows: work rows as ranges of A's arrays (work_rows each), and the reuse profile.
  std::vector<Index> wr_begin, wr_end, col_idx;
  std::vector<Value> values;
  model::ReuseProfile reuse;

  // kernel=panel (and auto when the reuse is high enough): see the header comment.
  std::vector<Index> pn_col_ptr, pn_val_ptr;  ///< panel_count()+1 each (empty: no panel arrays)
  std::vector<Index> pn_col;                  ///< Σ_p D_p distinct columns, ascending per panel
  std::vector<std::uint32_t> pn_mask;         ///< Σ_p D_p R-bit row masks
  std::vector<Value> pn_val;                  ///< nnz values in (distinct column, row) order

  std::vector<std::int64_t> panel_stage_ptr{0};  ///< panels+1
  std::vector<std::int64_t> stage_map_ptr{0};    ///< stages+1
  std::vector<Index> map;                        ///< Σ D_p column ids
  std::vector<std::int64_t> slab_ptr{0};         ///< stages·(panel_rows/32)+1, offsets into ell_*
  std::vector<std::uint16_t> ell_idx;            ///< slot in the stage, kPad for padding
  std::vector<Value> ell_val;
  /// Work row → output row (empty: identity, work row w is row w). When non-empty, seg_ptr
  /// (rows+1) / seg_list (work rows) list each output row's work rows in column order.
  std::vector<Index> out_row;
  std::vector<std::int64_t> seg_ptr;
  std::vector<Index> seg_list;

  static TiledStorage build(const Csr<Value, Index>& a, const FormatOptions& o);
  Csr<Value, Index> to_csr() const;
  std::size_t storage_bytes() const;
  Shape shape() const { return {rows, cols, nnz}; }

  std::int64_t work_rows() const {
    return out_row.empty() ? static_cast<std::int64_t>(rows) : static_cast<std::int64_t>(out_row.size());
  }
  /// Panels of the staged S-ELL layout (kernel=sell; 0 for kernel=rows).
  std::int64_t panels() const {
    return panel_stage_ptr.empty() ? 0 : static_cast<std::int64_t>(panel_stage_ptr.size()) - 1;
  }
  std::int64_t warps_per_panel() const { return panel_rows / 32; }
  /// Panels of the panel kernel (0 when its arrays are not built).
  std::int64_t panel_count() const {
    return pn_col_ptr.empty() ? 0 : static_cast<std::int64_t>(pn_col_ptr.size()) - 1;
  }
  /// More work rows than rows: partial results must be summed per output row.
  bool segmented() const { return work_rows() != static_cast<std::int64_t>(rows); }

  /// Visits the stored entries of work row w in column order: f(column, value).
  template <class F>
  void for_each_in_work_row(std::int64_t w, F&& f) const {
    if (!sell) {
      for (std::int64_t q = wr_begin[w]; q < wr_end[w]; ++q) f(static_cast<std::int64_t>(col_idx[q]), values[q]);
      return;
    }
    const std::int64_t p = w / panel_rows, local = w % panel_rows;
    const std::int64_t warp = local / 32, lane = local % 32, wpp = warps_per_panel();
    for (std::int64_t s = panel_stage_ptr[p]; s < panel_stage_ptr[p + 1]; ++s) {
      const Index* m = map.data() + stage_map_ptr[s];
      const std::int64_t b = slab_ptr[s * wpp + warp], e = slab_ptr[s * wpp + warp + 1];
      for (std::int64_t q = b + lane; q < e; q += 32) {
        const std::uint16_t idx = ell_idx[q];
        if (idx != kPad) f(static_cast<std::int64_t>(m[idx]), ell_val[q]);
      }
    }
  }
};

template <class Value, class Index>
std::size_t traffic_bytes(const TiledStorage<Value, Index>& s, Op op, std::int64_t k);

/// Whether the row kernel at K-tile kt (16-byte packs) runs the strided schedule on a device of
/// `sms` SMs; `s`: the host storage or its device mirror (fields schedule, reuse). Only the fp32
/// kernel at a warp a row (kt = 128, one float4 a lane) has the strided walk; there
/// schedule=stride / grid is taken as given and auto follows model::rows_stride_runs.
template <class Value, class S>
bool tiled_rows_stride(const S& s, std::int64_t kt, std::int64_t sms) {
  if (sizeof(Value) != 4 || kt != 128 || s.schedule == 1) return false;
  return s.schedule == 2 || model::rows_stride_runs(s.reuse, kt, sizeof(Value), sms);
}

// spmm with k columns, tile re = min(r, pow2 >= k): per tile the kernel reads the S-ELL stream,
// the pointers and the staged map ids, and stages Σ D_p·re values of B (counted no lower than
// B itself); C is written once (beta = 0), segmented matrices write and re-read W×k partials.
// `s`: the host storage or its device mirror (arrays and scalars of the same names); `stored`:
// the bytes of its stored arrays, `segmented` / `work_rows` as TiledStorage's.
template <class Value, class Index, class S>
std::size_t tiled_traffic(const S& s, std::size_t stored, bool segmented, std::int64_t work_rows, Op op,
                          std::int64_t k) {
  if (op != Op::spmm) return default_traffic(stored, op, s.shape(), k, sizeof(Value));
  const auto dev = model::device_by_name(s.device);
  // The row kernel's K-tile, and whether it would run the strided schedule (which kernel=auto
  // prefers to the panel kernel, as the CUDA dispatch does).
  const std::int64_t kt = s.sell ? 0
                         : s.kt > 0 ? s.kt
                                    : model::choose_k_tile(s.reuse, k, sizeof(Value), sizeof(Index), segmented, dev);
  const bool stride = !s.sell && tiled_rows_stride<Value>(s, kt, dev.sm_count);
  if (s.panel_r > 0 && (s.panel_forced || (model::auto_runs_panel(k, sizeof(Value), s.panel_count(),
                                                                   s.panel_per_sm, dev.sm_count) && !stride))) {
    // Panel kernel (row-major): the panel arrays once per K-tile of 32·V columns (128 fp32, 64
    // fp64), B once (each slice is read once per panel from L2; DRAM sees it once at best), C once.
    const std::int64_t tile = 32 * static_cast<std::int64_t>(16 / sizeof(Value));
    const std::size_t tiles = static_cast<std::size_t>((k + tile - 1) / tile);
    const std::size_t a_bytes = (s.pn_col_ptr.size() + s.pn_val_ptr.size() + s.pn_col.size()) * sizeof(Index) +
                                s.pn_mask.size() * 4 + s.pn_val.size() * sizeof(Value);
    const std::size_t b = static_cast<std::size_t>(s.cols) * static_cast<std::size_t>(k) * sizeof(Value);
    const std::size_t c = static_cast<std::size_t>(s.rows) * static_cast<std::size_t>(k) * sizeof(Value);
    const std::size_t perm = (s.out_row.size() + s.seg_list.size()) * sizeof(Index) + s.seg_ptr.size() * 8;
    return tiles * a_bytes + b + c + perm;
  }
  if (!s.sell) {
    // Row-wise kernel: A once per K-tile, B (all of it, the operand floor) and C once, and the
    // work_rows×k partials written and read when rows are segmented.
    const auto t = model::rows_traffic(s.reuse, k, kt, sizeof(Value), sizeof(Index), segmented, dev,
                                       model::BMode::optimistic);
    const double b_all = static_cast<double>(s.cols) * static_cast<double>(k) * sizeof(Value);
    const std::size_t perm = (s.out_row.size() + s.seg_list.size()) * sizeof(Index) + s.seg_ptr.size() * 8;
    return static_cast<std::size_t>(t.a_bytes + std::max(b_all, t.b_bytes) + t.c_bytes) + perm;
  }
  int re = 1;
  while (re < s.r && re < k) re *= 2;
  const std::size_t tiles = static_cast<std::size_t>(k > 0 ? (k + re - 1) / re : 0);
  const std::size_t per_tile = s.ell_idx.size() * sizeof(std::uint16_t) + s.ell_val.size() * sizeof(Value) +
                               s.map.size() * sizeof(Index) +
                               (s.panel_stage_ptr.size() + s.stage_map_ptr.size() + s.slab_ptr.size()) * 8;
  const std::size_t b = std::max<std::size_t>(s.map.size(), static_cast<std::size_t>(s.cols)) *
                        static_cast<std::size_t>(k) * sizeof(Value);
  std::size_t c = static_cast<std::size_t>(s.rows) * static_cast<std::size_t>(k) * sizeof(Value);
  if (segmented) c += 2 * static_cast<std::size_t>(work_rows) * static_cast<std::size_t>(k) * sizeof(Value);
  const std::size_t perm = (s.out_row.size() + s.seg_list.size()) * sizeof(Index) + s.seg_ptr.size() * 8;
  return tiles * per_tile + b + c + perm;
}


/// The layout of the row-wise kernels (kernel = auto, rows, panel) that the options leave to the
/// model: segment size (0 = whole rows) and reordering. Both builders (tiled.cpp on the host,
/// tiled_device_build.cu on the GPU) call it, so one rule decides from the same statistics.
struct TiledRowsLayout {
  std::int64_t segsize = 0;
  bool reorder = false;
  std::string reason;  ///< empty when the options fixed both
};
/// The reuse profile of the work rows cut at `segsize` (0: whole rows), sorted on their pattern
/// when `reorder`, over panels of `panel_rows` work rows (model::reuse_profile of those rows).
using TiledProfileFn = std::function<model::ReuseProfile(std::int64_t segsize, bool reorder,
                                                         std::int64_t panel_rows)>;
/// The row-wise kernel's four variants ({whole rows, segments of the model's size} × {in order,
/// reordered}) predicted from their reuse profiles (model::rows_traffic at the model's K-tile);
/// the fastest (by more than 3 %) fills what the options leave open. `rows`: the matrix rows.
TiledRowsLayout tiled_rows_layout(const TiledOptions& opt, std::int64_t rows, std::size_t value_bytes,
                                  std::size_t index_bytes, const TiledProfileFn& profile);

// CPU kernels (tiled_cpu.cpp). Deterministic (per output row, segments summed in column order).
SPMAT_DECLARE_CPU_KERNELS(TiledStorage);
template <class Value, class Index>
void spmm(const TiledStorage<Value, Index>& s, const Value* b, Value* c, std::int64_t k,
          DenseLayout layout, Value alpha, Value beta);

SPMAT_DECLARE_CUDA_IMPL(TiledStorage);  // tiled_cuda.cu
/// update_values (tiled.cpp: the values in CSR order into values / pn_val / ell_val) and
/// build_cuda_from_device (tiled_device_build.cu).
SPMAT_DECLARE_VALUE_UPDATE_AND_DEVICE_BUILD(TiledStorage);

}  // namespace spmat
