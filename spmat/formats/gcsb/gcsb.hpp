// spmat/formats/gcsb/gcsb.hpp — GCSB: CSB blocks sorted by nnz (block swizzle), grouped and interleaved with zero padding.
// SPDX-License-Identifier: MIT
//
// Izawa's Grouped Compressed Sparse Blocks (JAIST 2023, §3.3). One
// storage serves y = A·x and y = Aᵀ·x. Construction from canonical CSR:
//   1. split into β×β blocks (row-major id br·n_block_cols + bc), Morton order inside a block;
//   2. block swizzle: sort the blocks by nnz, descending, ties by ascending id → block_indices;
//   3. consecutive runs of group_size sorted blocks form a group (the last one may be partial:
//      its missing lanes are padding);
//   4. per group, slot s = 0 .. max_nnz−1, lane p = 0 .. group_size−1: element s of the group's
//      p-th block, or a pad (value 0, comb kPad) → values, comb (length L, pads included).
// Arrays:
//   values        (L)             entries and pads, group by group, slot-major inside a group
//   comb          (L, int32)      (row_in_block << d) | col_in_block, or csb_detail::kPad
//   block_indices (n_sorted)      row-major id of the i-th sorted block
//   group_offset  (n_groups + 1)  start of each group in values/comb, in ELEMENTS (spec OQ1):
//                                 the block at sorted position i reads k = group_offset[g] +
//                                 (i mod group_size) + s·group_size, g = i / group_size
// A lane's real entries come first, then its pads, so kernels stop at the first pad.
// n_sorted = n_blocks (empty=keep, the thesis) or the number of non-empty blocks (empty=drop).
// empty=auto (default) keeps the empty blocks only on small grids (n_blocks ≤ kKeepEmptyMaxBlocks
// = 4096: the thesis examples, hand-checkable cases), else drops them: dropping never makes the
// storage larger, and real sparse matrices have almost only empty blocks (lap2d 4M×4M, β = 16:
// 6.25·10^10 blocks, 7.5·10^5 non-empty). The build never materialises the n_blocks grid.
// Block ids: when the row-major ids (< n_blocks) do not fit Index (int32 and n_blocks > 2^31,
// e.g. that lap2d), block_indices stays empty and two arrays of n_sorted Index hold the block row
// and block column instead (block_row, block_col); kernels read whichever is stored.
// 8×8 example of the spec (β = 2, group_size = 4, pads *):
//   block_indices = 0 9 2 3 | 14 1 4 11 | 5 12 13 6 | 7 8 10 15,  group_offset = 0 16 28 32 32
//   values = a p c e b q d f g s k l h t * * | x i m r y j n u z * * * | o v w *
// Memory (thesis Eq. 3.2 with pads): L·(V + 4) + n_sorted·I (2·n_sorted·I with split ids)
// + (n_groups + 1)·I, plus the window plans below (counted in storage_bytes():
// (n_nonempty + n_windows + 1)·I per operation, plus (2·n_items − n_windows + 1)·I when long
// windows are split): kernel=deterministic stores both; kernel=fast only those of operations not
// run by the dense-output kernel (option dense=: by default spmv_t whenever cols·V ≤ 96 KB).
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "spmat/formats/csb/csb.hpp"
#include "spmat/format_options.hpp"
#include "spmat/formats/format_common.hpp"

namespace spmat {

/// Window plan of one operation (spmv: windows are block rows; spmv_t: block columns). The
/// non-empty blocks of a window are listed by sorted position (ascending); a window's list is cut
/// into items of at most lanes·blocks_per_lane blocks (near-equal sizes; an empty window still
/// gets one empty item, so every output has an owner). On the GPU `lanes` lanes of a warp share
/// an item (lane t takes its blocks t, t + lanes, …) and a warp holds 32 / lanes items.
/// When no window is split, item w is window w and item_window / window_item_ptr stay empty (the
/// plan is then a CSR over blocks: (n_nonempty + n_windows + 1)·I).
/// Two stored forms of the list (same meaning, same results bit for bit):
///   list: list[e] for every e (n_nonempty Index);
///   runs (when smaller; option plan_form=): the list cut into maximal runs of consecutive sorted
///   positions inside one window, list[e] = run_start[j] + (e − run_ptr[j]) for run_ptr[j] ≤ e <
///   run_ptr[j + 1], and item_run[it] = the run holding item_ptr[it] (where a lane starts its
///   walk). The row plan is short in this form because the swizzle sorts ties by row-major id:
///   the blocks of one block row with equal nnz are consecutive sorted positions, so a block row
///   has one run per distinct block nnz (gen:ideal: 1; random_p: a handful) instead of one entry
///   per block. Column windows rarely have runs, so the column plan usually keeps the list.
template <class Index>
struct GcsbPlan {
  std::vector<Index> list;             ///< n_nonempty: sorted positions, window by window, ascending
  std::vector<Index> item_ptr;         ///< n_items + 1 ranges into list
  std::vector<Index> item_window;      ///< split only: n_items, window of each item
  std::vector<Index> window_item_ptr;  ///< split only: n_windows + 1 ranges into the items
  std::vector<Index> run_start;        ///< runs form only (list empty): n_runs first sorted positions
  std::vector<Index> run_ptr;          ///< runs form only: n_runs + 1 list offsets of the runs
  std::vector<Index> item_run;         ///< runs form only: n_items, run holding item_ptr[item]
  int lanes_log2 = 0;                  ///< lanes per item = 2^lanes_log2 (1 … 32)
  int block_lanes_log2 = 0;            ///< GPU lanes per block = 2^block_lanes_log2 (≤ lanes)
  int blocks_per_lane = 2;             ///< item size cap = (lanes / block lanes) · blocks_per_lane blocks
  bool runs() const { return list.empty() && !run_ptr.empty(); }
  /// Sorted position of list entry e (either form; walks from the item's first run).
  std::int64_t at(std::int64_t item, std::int64_t e) const {
    if (!runs()) return list[e];
    std::int64_t j = item_run[item];
    while (e >= std::int64_t{run_ptr[j + 1]}) ++j;
    return std::int64_t{run_start[j]} + (e - std::int64_t{run_ptr[j]});
  }
  std::int64_t n_items() const {
    return item_ptr.empty() ? 0 : static_cast<std::int64_t>(item_ptr.size()) - 1;
  }
  /// True when some window is split over several items (then fast needs atomics and
  /// deterministic a second pass).
  bool has_split() const { return !window_item_ptr.empty(); }
  std::int64_t n_windows() const {
    return has_split() ? static_cast<std::int64_t>(window_item_ptr.size()) - 1 : n_items();
  }
  /// Items of window w: [window_item_begin(w), window_item_begin(w + 1)).
  std::int64_t window_item_begin(std::int64_t w) const {
    return has_split() ? std::int64_t{window_item_ptr[w]} : w;
  }
  std::size_t bytes() const {
    return (list.size() + item_ptr.size() + item_window.size() + window_item_ptr.size() +
            run_start.size() + run_ptr.size() + item_run.size()) *
           sizeof(Index);
  }
};

template <class Value, class Index>
struct Gcsb {
  Index rows = 0, cols = 0, nnz = 0;
  int beta_log2 = 5;
  int group_size = 32;
  Index n_block_rows = 0, n_block_cols = 0;
  bool keep_empty = true;
  GcsbKernel kernel = GcsbKernel::fast;
  std::vector<Value> values;          // L
  std::vector<std::int32_t> comb;     // L
  std::vector<Index> block_indices;   // n_sorted (empty when the ids do not fit Index)
  std::vector<Index> block_row, block_col;  // n_sorted each, only when block_indices is empty
  std::vector<Index> group_offset;    // n_groups + 1
  GcsbPlan<Index> row_plan, col_plan;  // kernel=fast|deterministic only (else empty)
  /// kernel=fast only: operations run by the dense-output GPU kernel (no plan stored for them).
  bool dense_n = false, dense_t = false;
  /// kernel=fast only: split windows are flushed through the work buffer (true, default: no
  /// prescale launch, no same-address atomics) or with atomicAdd into a pre-scaled y (flush=atomic).
  bool flush_partial = true;
  /// dense_parts= (kernel=fast, dense ops): CTAs of the dense-output kernel, each writing one
  /// n_out copy to the work buffer; 0 (default) = auto on upload: min(n_SM, ⌈n_sorted/1024⌉).
  int dense_parts = 0;
  /// block_lanes= (kernel=fast|deterministic, GPU): lanes sharing one block, each taking every
  /// 2^block_lanes_log2-th slot (1, 2 or 4; 0 in the option = auto: 4 or 2 when blocks hold many
  /// entries and there are few of them — fp32 β = 32 on gen:ideal: 65536 blocks of ~52 entries,
  /// one lane each left the GPU at ~8 busy warps per SM). Used by the window kernel (capped at
  /// the plan's lanes) and the dense-output kernel; the CPU ignores it.
  int block_lanes_log2 = 0;

  /// Options (GcsbOptions): beta=, group_size=, l1_line_bytes= (block_params),
  /// kernel=thesis|atomic|fast|deterministic (default fast), empty=keep|drop|auto (default auto),
  /// lanes= (1, 2, 4, …, 32; default: the largest power of two ≤ the mean number of blocks per
  /// non-empty window, at most 32) and blocks_per_lane= (1 … 4096; default ⌈n_nonempty / 2^17⌉
  /// clamped to 2 … 64; with block lanes > 1: ⌈n_nonempty·block_lanes / 2^17⌉ clamped to 1 … 64)
  /// shape the plans; block_lanes= (1, 2, 4; default auto) see block_lanes_log2; plan_form=
  /// auto|list|runs: how the plans store their list (GcsbPlan; auto: the smaller).
  /// dense=auto|off|both (kernel=fast only): an operation whose whole output fits
  /// kDenseMaxBytes (n_out·V ≤ 96 KB: 8192 doubles, 24576 floats) is run by the dense-output
  /// kernel, which reads the storage in its natural order (coalesced) into a CTA-private copy of
  /// y in shared memory, and stores no plan for it. auto (default): spmv_t only; both: spmv too;
  /// off: plans for both. flush=partial|atomic: see flush_partial.
  static constexpr std::int64_t kDenseMaxBytes = 96 * 1024;
  static constexpr std::int64_t kKeepEmptyMaxBlocks = 4096;
  static Gcsb build(const Csr<Value, Index>& a, const FormatOptions& o);
  Csr<Value, Index> to_csr() const;
  std::size_t storage_bytes() const {
    return values.size() * sizeof(Value) + comb.size() * sizeof(std::int32_t) +
           (block_indices.size() + block_row.size() + block_col.size() + group_offset.size()) *
               sizeof(Index) +
           row_plan.bytes() + col_plan.bytes();
  }
  Shape shape() const { return {rows, cols, nnz}; }
  int beta() const { return 1 << beta_log2; }
  bool split_ids() const { return block_indices.empty() && !block_row.empty(); }
  std::int64_t n_sorted() const {
    return static_cast<std::int64_t>(split_ids() ? block_row.size() : block_indices.size());
  }
  /// Block row and column of the block at sorted position i.
  std::int64_t block_row_at(std::int64_t i) const {
    return split_ids() ? std::int64_t{block_row[i]} : std::int64_t{block_indices[i]} / n_block_cols;
  }
  std::int64_t block_col_at(std::int64_t i) const {
    return split_ids() ? std::int64_t{block_col[i]} : std::int64_t{block_indices[i]} % n_block_cols;
  }
  std::int64_t n_groups() const { return static_cast<std::int64_t>(group_offset.size()) - 1; }
  bool has_plan() const { return kernel == GcsbKernel::fast || kernel == GcsbKernel::deterministic; }
  /// True when operation op (spmv or spmv_t) runs from a window plan (else: no plan stored).
  bool has_plan(Op op) const { return has_plan() && !dense(op); }
  bool dense(Op op) const { return op == Op::spmv_t ? dense_t : dense_n; }
  /// Work buffer of the window kernel (deterministic, or fast with flush=partial; not stored data,
  /// not in storage_bytes): n_items·β values per operation whose plan splits a window, else none.
  /// The dense-output kernel's buffer (n_SM·n_out values) is not counted here either.
  std::size_t det_workspace_bytes(Op op) const {
    const auto& p = op == Op::spmv ? row_plan : col_plan;
    return (kernel == GcsbKernel::deterministic || (kernel == GcsbKernel::fast && flush_partial)) &&
                   p.has_split()
               ? static_cast<std::size_t>(p.n_items()) * beta() * sizeof(Value)
               : 0;
  }
};

/// Arrays read once (pads included; with a plan only this op's plan, plus for kernel=deterministic
/// the work buffer written and read once) + x + y.
template <class Value, class Index>
std::size_t traffic_bytes(const Gcsb<Value, Index>& s, Op op, std::int64_t k);

// CPU kernels (gcsb_cpu.cpp). Contract: x, y caller-allocated (spmv: x cols, y rows; spmv_t:
// swapped); beta == 0 never reads y; pads are skipped, explicit zeros multiplied. Without a plan
// (thesis, atomic) both operations scatter over the sorted blocks with scatter_reduce
// (deterministic for a fixed thread count); with a plan (fast, deterministic) they reduce per
// item, then per window in item order (deterministic for any thread count). Work 2·nnz flops.
SPMAT_DECLARE_CPU_KERNELS(Gcsb);

SPMAT_DECLARE_CUDA_IMPL(Gcsb);  // gcsb_cuda.cu

}  // namespace spmat
