// spmat/formats/gcsb/gcsb.cpp — GCSB: build (swizzle, grouping, padding), plans, to_csr, traffic, registry.
// SPDX-License-Identifier: MIT
#include "spmat/formats/gcsb/gcsb.hpp"

#include <algorithm>
#include <new>
#include <numeric>
#include <string>

#include "spmat/core/typed_options.hpp"
#include "spmat/model/traffic.hpp"

namespace spmat {

namespace {

/// Shape of the window plans: 0 = choose from the matrix.
struct PlanShape {
  int lanes = 0;
  std::int64_t blocks_per_lane = 0;
  int block_lanes = 0;  // 0 = auto (resolved in build before make_plan)
  int form = 0;         // 0 auto (the smaller), 1 list, 2 runs
};

/// Auto block lanes: double while the mean entries per non-empty block stay ≥ 12 per lane and
/// n_nonempty·lanes ≤ 2^18 (at most 4). fp32 β = 32 on gen:ideal / random_p p ≥ 0.05 (~52 entries
/// per block, 65536 blocks): 4; fp64 β = 16 (262144 blocks): 1, i.e. unchanged.
int auto_block_lanes(std::int64_t nnz, std::int64_t n_nonempty) {
  if (n_nonempty <= 0) return 1;
  const std::int64_t mean = nnz / n_nonempty;
  int s = 1;
  while (s < 4 && mean >= 12 * (2 * s) && n_nonempty * (2 * s) <= (std::int64_t{1} << 18)) s *= 2;
  return s;
}

/// Plan over the first n_nonempty sorted positions (the empty blocks, if kept, come last);
/// window(i) = block row (spmv) or block column (spmv_t) of sorted position i.
/// lanes: the largest power of two ≤ the mean blocks per non-empty window (≤ 32), so short windows
/// (banded matrices: ~5 blocks) share a warp and long ones (ideal: 512) get a whole warp.
/// blocks_per_lane: ⌈n_nonempty / 2^17⌉ clamped to 2 … 64: about 2^17 busy lanes (one wave on a
/// 132-SM GPU at half occupancy) before a long window is split. Untuned (no GPU run yet).
template <class Index, class Window>
GcsbPlan<Index> make_plan(std::int64_t n_nonempty, std::int64_t n_windows, PlanShape shape,
                          Window&& window) {
  GcsbPlan<Index> p;
  std::vector<std::int64_t> start(static_cast<std::size_t>(n_windows + 1), 0);
  for (std::int64_t i = 0; i < n_nonempty; ++i) ++start[window(i) + 1];
  std::int64_t busy = 0;
  for (std::int64_t w = 0; w < n_windows; ++w) busy += start[w + 1] > 0 ? 1 : 0;
  for (std::int64_t w = 0; w < n_windows; ++w) start[w + 1] += start[w];
  p.list.resize(static_cast<std::size_t>(start[n_windows]));
  std::vector<std::int64_t> cursor(start.begin(), start.end() - 1);
  for (std::int64_t i = 0; i < n_nonempty; ++i)  // ascending sorted position
    p.list[cursor[window(i)]++] = static_cast<Index>(i);
  int lanes = shape.lanes;
  if (lanes == 0) {
    const std::int64_t mean = busy > 0 ? n_nonempty / busy : 1;
    lanes = 1;
    while (lanes < 32 && 2 * lanes <= mean) lanes *= 2;
  }
  while ((1 << p.lanes_log2) < lanes) ++p.lanes_log2;
  const int block_lanes = std::min(lanes, std::max(1, shape.block_lanes));
  while ((1 << p.block_lanes_log2) < block_lanes) ++p.block_lanes_log2;
  const std::int64_t units = n_nonempty * block_lanes;  // GPU lanes needed at one block each
  p.blocks_per_lane = static_cast<int>(
      shape.blocks_per_lane > 0
          ? shape.blocks_per_lane
          : std::clamp<std::int64_t>((units + (1 << 17) - 1) >> 17, block_lanes > 1 ? 1 : 2, 64));
  const std::int64_t cap = std::int64_t{lanes / block_lanes} * p.blocks_per_lane;
  p.item_ptr.assign(1, 0);
  p.window_item_ptr.assign(1, 0);
  for (std::int64_t w = 0; w < n_windows; ++w) {
    const std::int64_t len = start[w + 1] - start[w];
    const std::int64_t n = std::max<std::int64_t>(1, (len + cap - 1) / cap);
    for (std::int64_t j = 1; j <= n; ++j) {  // n near-equal items
      p.item_ptr.push_back(static_cast<Index>(start[w] + len * j / n));
      p.item_window.push_back(static_cast<Index>(w));
    }
    p.window_item_ptr.push_back(static_cast<Index>(p.item_ptr.size() - 1));
  }
  if (static_cast<std::int64_t>(p.item_window.size()) == n_windows) {  // no split: item = window
    p.item_window.clear();
    p.window_item_ptr.clear();
  }
  // Runs form: maximal runs of consecutive sorted positions inside one window.
  std::vector<Index> run_start, run_ptr;
  for (std::int64_t w = 0; w < n_windows; ++w)
    for (std::int64_t e = start[w]; e < start[w + 1]; ++e)
      if (e == start[w] || p.list[e] != p.list[e - 1] + 1) {
        run_start.push_back(p.list[e]);
        run_ptr.push_back(static_cast<Index>(e));
      }
  run_ptr.push_back(static_cast<Index>(start[n_windows]));
  const std::int64_t n_items = p.n_items();
  const bool runs = shape.form == 2 ||
                    (shape.form == 0 && static_cast<std::int64_t>(run_start.size() + run_ptr.size()) +
                                                n_items < n_nonempty);
  if (runs) {
    p.item_run.resize(static_cast<std::size_t>(n_items));
    std::int64_t j = 0;
    const std::int64_t n_runs = static_cast<std::int64_t>(run_start.size());
    for (std::int64_t it = 0; it < n_items; ++it) {  // item_ptr ascending
      while (j < n_runs && run_ptr[j + 1] <= p.item_ptr[it]) ++j;
      p.item_run[it] = static_cast<Index>(std::min(j, std::max<std::int64_t>(n_runs - 1, 0)));
    }
    p.list.clear();
    p.list.shrink_to_fit();
    p.run_start = std::move(run_start);
    p.run_ptr = std::move(run_ptr);
    if (p.run_start.empty()) {  // no block at all: keep a valid one-entry run_ptr, item_run = 0
      p.run_start.push_back(0);
      p.run_ptr.push_back(0);
    }
  }
  return p;
}

PlanShape plan_shape(const GcsbOptions& o) {
  PlanShape s;
  s.lanes = o.lanes.value_or(0);
  s.blocks_per_lane = o.blocks_per_lane.value_or(0);
  s.block_lanes = o.block_lanes;
  s.form = o.plan_form == "auto" ? 0 : (o.plan_form == "list" ? 1 : 2);
  return s;
}

}  // namespace

const OptionTable<GcsbOptions>& GcsbOptions::fields() {
  using O = GcsbOptions;
  static const OptionTable<O> t = [] {
    OptionTable<O> v = block_fields<O>(
        true, "keep: empty blocks stay in block_indices (thesis); drop: left out; auto: keep only "
              "when the grid has at most 4096 blocks");
    v.push_back(int_choice_option("lanes", &O::lanes, {1, 2, 4, 8, 16, 32},
                                  "GPU lanes sharing one window item (window plan; auto: mean blocks per "
                                  "window, as a power of two <= 32)"));
    v.push_back(int_option("blocks_per_lane", &O::blocks_per_lane, 1, 4096,
                           "item size cap = lanes * blocks_per_lane blocks (window plan; auto: "
                           "ceil(n_nonempty / 2^17) in 2..64)"));
    v.push_back(int_choice_option("block_lanes", &O::block_lanes, {0, 1, 2, 4},
                                  "GPU lanes sharing one block, each taking every block_lanes-th slot "
                                  "(0 = auto: 4 or 2 for few blocks of many entries, else 1)"));
    v.push_back(choice_option("plan_form", &O::plan_form, {"auto", "list", "runs"},
                              "window plan list stored as list (one index per block), runs (runs of "
                              "consecutive sorted positions) or auto (the smaller)"));
    v.push_back(enum_option("kernel", &O::kernel,
                            {{"thesis", GcsbKernel::thesis},
                             {"atomic", GcsbKernel::atomic},
                             {"fast", GcsbKernel::fast},
                             {"deterministic", GcsbKernel::deterministic}},
                            "GPU kernel: thesis, atomic, fast, deterministic"));
    v.push_back(choice_option("dense", &O::dense, {"auto", "off", "both"},
                              "kernel=fast: auto runs spmv_t, both runs spmv and spmv_t, with the "
                              "dense-output kernel (natural-order reads, y in shared memory, no plan) "
                              "when n_out*sizeof(value) <= 96 KB; off: window plans for both"));
    v.push_back(int_option("dense_parts", &O::dense_parts, 0, 4096,
                           "kernel=fast: CTAs of the dense-output kernel (0 = min(SMs, n_sorted / 1024))"));
    v.push_back(choice_option("flush", &O::flush, {"partial", "atomic"},
                              "kernel=fast, split windows: partial (work buffer + fixed-order pass) or atomic"));
    return v;
  }();
  return t;
}

template <class Value, class Index>
Gcsb<Value, Index> Gcsb<Value, Index>::build(const Csr<Value, Index>& a, const FormatOptions& o) {
  using csb_detail::EmptyBlocks;
  const auto opt = parse_options<GcsbOptions>(o);
  const BlockParams p = block_params(opt, sizeof(Value));
  Gcsb s;
  s.kernel = opt.kernel;
  PlanShape shape = plan_shape(opt);
  const std::string& dense = opt.dense;
  s.flush_partial = opt.flush == "partial";
  s.dense_parts = opt.dense_parts;
  if (s.kernel == GcsbKernel::fast && dense != "off") {
    auto fits = [](std::int64_t n) {
      return n > 0 && n * static_cast<std::int64_t>(sizeof(Value)) <= kDenseMaxBytes;
    };
    s.dense_t = fits(a.cols);
    s.dense_n = dense == "both" && fits(a.rows);
  }
  const auto empty = opt.empty;
  s.rows = a.rows;
  s.cols = a.cols;
  s.nnz = a.nnz();
  s.beta_log2 = p.beta_log2;
  s.group_size = p.group_size;
  const std::int64_t beta = p.beta(), gs = p.group_size;
  const std::int64_t nbr = (std::int64_t{a.rows} + beta - 1) / beta;
  const std::int64_t nbc = (std::int64_t{a.cols} + beta - 1) / beta;
  const std::int64_t n_blocks = csb_detail::grid_blocks(nbr, nbc);  // −1: overflows int64
  s.keep_empty = empty == EmptyBlocks::keep ||
                 (empty == EmptyBlocks::automatic && n_blocks >= 0 && n_blocks <= kKeepEmptyMaxBlocks);
  if (s.keep_empty)
    csb_detail::check_block_count(n_blocks, index_max<Index>() - 1, sizeof(Index), "gcsb", p.beta());
  s.n_block_rows = static_cast<Index>(nbr);
  s.n_block_cols = static_cast<Index>(nbc);
  try {
    const auto b = csb_detail::block_csr(a, p.beta_log2);
    const std::int64_t n_nonempty = b.n_stored();
    auto count = [&](std::int64_t j) { return b.block_offset[j + 1] - b.block_offset[j]; };
    std::vector<std::int64_t> row_of(static_cast<std::size_t>(n_nonempty));
    for (std::int64_t br = 0; br < nbr; ++br)
      for (std::int64_t j = b.block_row_ptr[br]; j < b.block_row_ptr[br + 1]; ++j) row_of[j] = br;
    // Block swizzle: nnz descending, ties by ascending row-major id. Stored blocks are in
    // row-major order, so a stable sort of their positions does it; the empty blocks (kept or
    // not) all have 0 entries and come last in ascending id order.
    std::vector<std::int64_t> order(static_cast<std::size_t>(n_nonempty));
    std::iota(order.begin(), order.end(), std::int64_t{0});
    std::stable_sort(order.begin(), order.end(),
                     [&](std::int64_t x, std::int64_t y) { return count(x) > count(y); });
    std::vector<std::int64_t> empty_ids;  // row-major ids of the empty blocks, if kept
    if (s.keep_empty)
      for (std::int64_t br = 0, j = 0; br < nbr; ++br)
        for (std::int64_t bc = 0; bc < nbc; ++bc) {
          if (j < b.block_row_ptr[br + 1] && b.block_col[j] == bc) ++j;
          else empty_ids.push_back(br * nbc + bc);
        }
    const std::int64_t n_sorted = n_nonempty + static_cast<std::int64_t>(empty_ids.size());
    auto br_at = [&](std::int64_t i) {
      return i < n_nonempty ? row_of[order[i]] : empty_ids[i - n_nonempty] / nbc;
    };
    auto bc_at = [&](std::int64_t i) {
      return i < n_nonempty ? b.block_col[order[i]] : empty_ids[i - n_nonempty] % nbc;
    };
    const std::int64_t n_groups = (n_sorted + gs - 1) / gs;
    std::vector<std::int64_t> go(static_cast<std::size_t>(n_groups + 1), 0);
    for (std::int64_t g = 0; g < n_groups; ++g)
      go[g + 1] = go[g] + gs * (g * gs < n_nonempty ? count(order[g * gs]) : 0);
    const std::int64_t len = go[n_groups];
    if (len > index_max<Index>())
      throw IndexOverflowError("gcsb: the padded length " + std::to_string(len) +
                               " does not fit the " + std::string(index_name<Index>()) +
                               " index type; use int64 indices");
    s.values.assign(static_cast<std::size_t>(len), Value(0));
    s.comb.assign(static_cast<std::size_t>(len), csb_detail::kPad);
#pragma omp parallel for schedule(dynamic, 16)
    for (std::int64_t g = 0; g < n_groups; ++g)
      for (std::int64_t lane = 0; lane < gs && g * gs + lane < n_nonempty; ++lane) {
        const std::int64_t j = order[g * gs + lane], src = b.block_offset[j];
        for (std::int64_t slot = 0; slot < count(j); ++slot) {
          s.values[go[g] + slot * gs + lane] = b.values[src + slot];
          s.comb[go[g] + slot * gs + lane] = b.comb[src + slot];
        }
      }
    // Row-major ids when they fit Index (the thesis layout), else block row and column apart.
    if (n_blocks >= 0 && n_blocks <= index_max<Index>()) {
      s.block_indices.resize(static_cast<std::size_t>(n_sorted));
      for (std::int64_t i = 0; i < n_sorted; ++i)
        s.block_indices[i] = static_cast<Index>(br_at(i) * nbc + bc_at(i));
    } else {
      s.block_row.resize(static_cast<std::size_t>(n_sorted));
      s.block_col.resize(static_cast<std::size_t>(n_sorted));
      for (std::int64_t i = 0; i < n_sorted; ++i) {
        s.block_row[i] = static_cast<Index>(br_at(i));
        s.block_col[i] = static_cast<Index>(bc_at(i));
      }
    }
    s.group_offset.assign(go.begin(), go.end());
    if (shape.block_lanes == 0) shape.block_lanes = auto_block_lanes(s.nnz, n_nonempty);
    while ((1 << s.block_lanes_log2) < shape.block_lanes) ++s.block_lanes_log2;
    if (s.has_plan(Op::spmv)) s.row_plan = make_plan<Index>(n_nonempty, nbr, shape, br_at);
    if (s.has_plan(Op::spmv_t)) s.col_plan = make_plan<Index>(n_nonempty, nbc, shape, bc_at);
  } catch (const std::bad_alloc&) {
    throw OutOfMemoryError("gcsb: out of host memory building the blocks of beta=" +
                           std::to_string(beta) + " (try a larger beta= or empty=drop)");
  }
  return s;
}

template <class Value, class Index>
Csr<Value, Index> Gcsb<Value, Index>::to_csr() const {
  Coo<Value, Index> c = reserved_coo<Value, Index>(rows, cols, nnz);
  const int d = beta_log2;
  const std::int32_t mask = (1 << d) - 1;
  for (std::int64_t i = 0; i < n_sorted(); ++i) {
    const std::int64_t g = i / group_size, br = block_row_at(i), bc = block_col_at(i);
    for (std::int64_t k = group_offset[g] + i % group_size; k < group_offset[g + 1]; k += group_size) {
      if (comb[k] & csb_detail::kPad) continue;  // padding is not part of the matrix
      c.row_idx.push_back(static_cast<Index>((br << d) + ((comb[k] >> d) & mask)));
      c.col_idx.push_back(static_cast<Index>((bc << d) + (comb[k] & mask)));
      c.values.push_back(values[k]);
    }
  }
  return spmat::to_csr(c);
}

template <class Value, class Index>
std::size_t traffic_bytes(const Gcsb<Value, Index>& s, Op op, std::int64_t k) {
  std::size_t bytes = s.storage_bytes() - s.row_plan.bytes() - s.col_plan.bytes();
  if ((op == Op::spmv || op == Op::spmv_t) && s.has_plan(op))
    bytes += (op == Op::spmv ? s.row_plan.bytes() : s.col_plan.bytes()) + 2 * s.det_workspace_bytes(op);
  return default_traffic(bytes, op, s.shape(), k, sizeof(Value));
}

#define SPMAT_INSTANTIATE(V, I) \
  template struct Gcsb<V, I>;   \
  template std::size_t traffic_bytes(const Gcsb<V, I>&, Op, std::int64_t);
SPMAT_FOR_EACH_TYPE_PAIR(SPMAT_INSTANTIATE)
#undef SPMAT_INSTANTIATE

}  // namespace spmat
