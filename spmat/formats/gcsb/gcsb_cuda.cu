// spmat/formats/gcsb/gcsb_cuda.cu — CUDA kernels of GCSB: thesis, atomic (warp-reduced), window (fast / deterministic).
// SPDX-License-Identifier: MIT
//
// All read the same storage; Transposed swaps the roles of the in-block row and column, and the
// window kernel reads the row plan (spmv) or the column plan (spmv_t), so both operations run
// the same code at the same cost. Launch constants are untuned (no GPU measurement of this
// version yet).
#include <algorithm>

#include "spmat/core/transposed_kernels.hpp"
#include "spmat/cuda/buffer.hpp"
#include "spmat/cuda/device_impl.hpp"
#include "spmat/cuda/primitives.cuh"
#include "spmat/formats/gcsb/gcsb.hpp"

namespace spmat {

namespace {
constexpr unsigned kFull = 0xffffffffu;
constexpr int kSmemBudget = 32 * 1024;  // bytes of shared memory per CTA (under the 48 KB default)
constexpr int kDenseThreads = 1024;     // threads per CTA of the dense-output kernel (one CTA per SM)

/// Threads per CTA of the atomic kernel: β·V bytes of accumulator per thread within the budget,
/// a multiple of 32, at most 256; 0 when not even one warp fits (then the thesis kernel runs).
int fast_block_threads(int beta, std::size_t value_size) {
  const std::int64_t t = kSmemBudget / (static_cast<std::int64_t>(beta) * value_size);
  return static_cast<int>(std::min<std::int64_t>(256, t & ~std::int64_t{31}));
}
/// Warps per CTA of the window kernel (a β×32 tile of V each), 1..8; 0 if none fits.
int window_block_warps(int beta, std::size_t value_size) {
  const std::int64_t w = kSmemBudget / (static_cast<std::int64_t>(beta) * 32 * value_size);
  return static_cast<int>(std::min<std::int64_t>(8, w));
}
}  // namespace

template <class Value, class Index>
struct GcsbDevice {
  struct Plan {
    cuda::DeviceBuffer<Index> list, item_ptr, item_window, window_item_ptr;
    cuda::DeviceBuffer<Index> run_start, run_ptr, item_run;  // runs form (list empty)
    mutable cuda::DeviceBuffer<Value> partial;  // n_items·β work buffer (deterministic, split only)
    std::int64_t n_items = 0, n_windows = 0;
    int lanes_log2 = 0, block_lanes_log2 = 0;
    bool split = false, runs = false;
    std::size_t bytes() const {
      return list.bytes() + item_ptr.bytes() + item_window.bytes() + window_item_ptr.bytes() +
             run_start.bytes() + run_ptr.bytes() + item_run.bytes() + partial.bytes();
    }
  };
  std::int64_t rows = 0, cols = 0, nnz = 0, n_block_cols = 0, n_sorted = 0;
  int beta_log2 = 5, group_size = 32;
  GcsbKernel kernel = GcsbKernel::fast;
  cuda::DeviceBuffer<Value> values;
  cuda::DeviceBuffer<std::int32_t> comb;
  cuda::DeviceBuffer<Index> block_indices, group_offset;
  cuda::DeviceBuffer<Index> block_row, block_col;  // split ids (block_indices empty)
  bool split_ids = false;
  Plan row_plan, col_plan;
  bool dense_n = false, dense_t = false, flush_partial = true;
  int dense_parts = 0;                        // CTAs of the dense-output kernel
  int block_lanes_log2 = 0;                   // dense-output kernel: threads per block (log2)
  mutable cuda::DeviceBuffer<Value> dense_partial;  // dense_parts · n_out work buffer

  /// Every device byte held: the arrays, both window plans and the work buffers
  /// (spmat/cuda/device_impl.hpp).
  std::size_t storage_bytes() const {
    return values.bytes() + comb.bytes() + block_indices.bytes() + group_offset.bytes() +
           block_row.bytes() + block_col.bytes() + row_plan.bytes() + col_plan.bytes() +
           dense_partial.bytes();
  }

  static Plan upload_plan(const GcsbPlan<Index>& p, int beta, bool det) {
    Plan d;
    d.n_items = p.n_items();
    d.n_windows = p.n_windows();
    d.lanes_log2 = p.lanes_log2;
    d.block_lanes_log2 = p.block_lanes_log2;
    d.split = p.has_split();
    d.runs = p.runs();
    if (d.runs) {
      d.run_start = cuda::DeviceBuffer<Index>(p.run_start, "gcsb plan run_start");
      d.run_ptr = cuda::DeviceBuffer<Index>(p.run_ptr, "gcsb plan run_ptr");
      d.item_run = cuda::DeviceBuffer<Index>(p.item_run, "gcsb plan item_run");
    } else {
      d.list = cuda::DeviceBuffer<Index>(p.list, "gcsb plan list");
    }
    d.item_ptr = cuda::DeviceBuffer<Index>(p.item_ptr, "gcsb plan item_ptr");
    if (d.split) {
      d.item_window = cuda::DeviceBuffer<Index>(p.item_window, "gcsb plan item_window");
      d.window_item_ptr = cuda::DeviceBuffer<Index>(p.window_item_ptr, "gcsb plan window_item_ptr");
    }
    if (det && d.split)
      d.partial = cuda::DeviceBuffer<Value>(static_cast<std::size_t>(d.n_items) * beta,
                                            "gcsb deterministic work buffer");
    return d;
  }

  static GcsbDevice upload(const Gcsb<Value, Index>& s) {
    GcsbDevice d;
    cuda::copy_shape(d, s);
    d.n_block_cols = s.n_block_cols;
    d.n_sorted = s.n_sorted();
    d.beta_log2 = s.beta_log2;
    d.group_size = s.group_size;
    d.kernel = s.kernel;
    if (d.kernel == GcsbKernel::deterministic && window_block_warps(s.beta(), sizeof(Value)) < 1)
      throw UnsupportedError("gcsb: kernel=deterministic on CUDA needs beta*sizeof(value) <= 1024 "
                             "(beta=" + std::to_string(s.beta()) + "); use a smaller beta=");
    d.values = cuda::DeviceBuffer<Value>(s.values, "gcsb values");
    d.comb = cuda::DeviceBuffer<std::int32_t>(s.comb, "gcsb comb_row_col_indices");
    d.split_ids = s.split_ids();
    if (d.split_ids) {
      d.block_row = cuda::DeviceBuffer<Index>(s.block_row, "gcsb block_row");
      d.block_col = cuda::DeviceBuffer<Index>(s.block_col, "gcsb block_col");
    } else {
      d.block_indices = cuda::DeviceBuffer<Index>(s.block_indices, "gcsb block_indices");
    }
    d.group_offset = cuda::DeviceBuffer<Index>(s.group_offset, "gcsb group_offset");
    const bool partial = s.kernel == GcsbKernel::deterministic || s.flush_partial;
    if (s.has_plan(Op::spmv)) d.row_plan = upload_plan(s.row_plan, s.beta(), partial);
    if (s.has_plan(Op::spmv_t)) d.col_plan = upload_plan(s.col_plan, s.beta(), partial);
    d.dense_n = s.has_plan() && s.dense(Op::spmv);
    d.dense_t = s.has_plan() && s.dense(Op::spmv_t);
    d.flush_partial = s.flush_partial;
    if (d.dense_n || d.dense_t) {
      const std::int64_t n_out = std::max(d.dense_n ? d.rows : 0, d.dense_t ? d.cols : 0);
      // Auto: one CTA per SM, fewer only when there are fewer sorted blocks than threads. Not
      // fewer to save copies: a thread's blocks are a chain of dependent loads (block id, group
      // offset, comb, x), so parallelism, not the copies (L2-resident, written and read once),
      // bounds the kernel on sparse matrices.
      d.block_lanes_log2 = s.block_lanes_log2;
      const std::int64_t units = d.n_sorted << d.block_lanes_log2;  // threads with work
      const std::int64_t cap = std::min<std::int64_t>(
          cuda::sm_count(), (units + kDenseThreads - 1) / kDenseThreads);
      d.dense_parts = s.dense_parts > 0 ? s.dense_parts
                                        : static_cast<int>(std::max<std::int64_t>(1, cap));
      d.dense_partial = cuda::DeviceBuffer<Value>(static_cast<std::size_t>(d.dense_parts * n_out),
                                                  "gcsb dense-output work buffer");
    }
    return d;
  }
};

namespace {

/// The arrays every kernel reads, passed by value. The block of sorted position i is either
/// block_indices[i] (row-major id) or, with split ids (block_indices == nullptr), (block_row[i],
/// block_col[i]): a uniform branch.
template <class Value, class Index>
struct View {
  std::int64_t n_sorted, n_block_cols, n_out;
  int d, gs;
  const Value* __restrict__ values;
  const std::int32_t* __restrict__ comb;
  const Index* __restrict__ block_indices;
  const Index* __restrict__ group_offset;
  const Index* __restrict__ block_row;
  const Index* __restrict__ block_col;

  __device__ void block_at(std::int64_t i, std::int64_t& br, std::int64_t& bc) const {
    if (block_indices) {
      const std::int64_t id = block_indices[i];
      br = id / n_block_cols;
      bc = id - br * n_block_cols;
    } else {
      br = block_row[i];
      bc = block_col[i];
    }
  }
};

// ---- thesis (Figs. 3.8/3.9) ---------------------------------------------------------------------
// Thread i handles sorted block i; k = group_offset[g] + lane + s·group_size (element offsets,
// spec OQ1); bc = id % n_block_cols (OQ2). Pads are loaded like the thesis does, but their
// atomicAdd is skipped (the print adds 0·x, which turns an Inf in x into NaN). One atomic per entry.
template <class Value, class Index, bool Transposed>
__global__ void gcsb_thesis_kernel(View<Value, Index> v, const Value* __restrict__ x,
                                   Value* __restrict__ y, Value alpha) {
  const std::int32_t mask = (1 << v.d) - 1;
  for (std::int64_t i = std::int64_t{blockIdx.x} * blockDim.x + threadIdx.x; i < v.n_sorted;
       i += std::int64_t{gridDim.x} * blockDim.x) {
    const std::int64_t g = i / v.gs;
    std::int64_t br, bc;
    v.block_at(i, br, bc);
    const std::int64_t row0 = br << v.d, col0 = bc << v.d;
    const std::int64_t end = v.group_offset[g + 1];
    for (std::int64_t k = v.group_offset[g] + (i - g * v.gs); k < end; k += v.gs) {
      const std::int32_t c = v.comb[k];
      if (c & csb_detail::kPad) continue;
      const std::int64_t r = row0 + ((c >> v.d) & mask), cc = col0 + (c & mask);
      if constexpr (Transposed)
        atomicAdd(&y[cc], alpha * (v.values[k] * x[r]));
      else
        atomicAdd(&y[r], alpha * (v.values[k] * x[cc]));
    }
  }
}

// ---- atomic --------------------------------------------------------------------------------------
// Same thread ↔ sorted block mapping (coalesced value/comb loads), but each thread sums its
// block into a private β-entry window in shared memory (acc[r·blockDim + tid]: conflict-free),
// then the warp flushes: lanes whose output window (block row for spmv, block column for
// spmv_t) is unique in the warp add their own non-zero sums; lanes sharing a window are reduced
// together first (lane r sums row r over the peers, rotated so the reads are conflict-free), so
// a warp of blocks from one block row issues at most β atomics instead of one per entry.
// Skipping a zero sum changes nothing but the sign of a zero. blockDim is a multiple of 32 and
// the loop is CTA-uniform, so the warp intrinsics see full warps.
template <class Value, class Index, bool Transposed>
__global__ void gcsb_atomic_kernel(View<Value, Index> v, const Value* __restrict__ x,
                                 Value* __restrict__ y, Value alpha) {
  extern __shared__ __align__(16) unsigned char smem_raw[];
  Value* acc = reinterpret_cast<Value*>(smem_raw);
  const int bd = blockDim.x, tid = threadIdx.x, lane = tid & 31, wb = tid - lane;
  const int beta = 1 << v.d;
  const std::int32_t mask = beta - 1;
  for (std::int64_t base = std::int64_t{blockIdx.x} * bd; base < v.n_sorted;
       base += std::int64_t{gridDim.x} * bd) {
    const std::int64_t i = base + tid;
    const bool active = i < v.n_sorted;
    long long key = -1 - lane;  // inactive lanes get unique keys: they never group
    if (active) {
      for (int r = 0; r < beta; ++r) acc[r * bd + tid] = Value(0);
      const std::int64_t g = i / v.gs;
      std::int64_t br, bc;
      v.block_at(i, br, bc);
      const Value* xb = x + ((Transposed ? br : bc) << v.d);
      const std::int64_t end = v.group_offset[g + 1];
      for (std::int64_t k = v.group_offset[g] + (i - g * v.gs); k < end; k += v.gs) {
        const std::int32_t c = v.comb[k];
        if (c & csb_detail::kPad) break;  // a lane's pads trail its entries
        const int r = (c >> v.d) & mask, cc = c & mask;
        if constexpr (Transposed)
          acc[cc * bd + tid] += v.values[k] * xb[r];
        else
          acc[r * bd + tid] += v.values[k] * xb[cc];
      }
      key = Transposed ? bc : br;
    }
    const unsigned peers = __match_any_sync(kFull, static_cast<unsigned long long>(key));
    if (active && __popc(peers) == 1) {
      for (int r = 0; r < beta; ++r) {
        const Value s = acc[r * bd + tid];
        const std::int64_t o = (key << v.d) + r;
        if (s != Value(0) && o < v.n_out) atomicAdd(&y[o], alpha * s);
      }
    }
    unsigned multi = __ballot_sync(kFull, active && __popc(peers) > 1);
    __syncwarp();
    while (multi) {
      const int leader = __ffs(multi) - 1;
      const unsigned group = __shfl_sync(kFull, peers, leader);
      const long long wkey = __shfl_sync(kFull, key, leader);
      for (int r = lane; r < beta; r += 32) {
        Value s = 0;
        for (int j = 0; j < 32; ++j) {
          const int p = (lane + j) & 31;
          if ((group >> p) & 1u) s += acc[r * bd + wb + p];
        }
        const std::int64_t o = (wkey << v.d) + r;
        if (s != Value(0) && o < v.n_out) atomicAdd(&y[o], alpha * s);
      }
      multi &= ~group;
    }
    __syncwarp();
  }
}

// ---- window kernel (fast / deterministic) ------------------------------------------------------
/// The plan of one operation, passed by value.
template <class Index>
struct PlanView {
  std::int64_t n_items;
  int lanes_log2, block_lanes_log2;
  const Index* __restrict__ list;  // nullptr: runs form
  const Index* __restrict__ item_ptr;
  const Index* __restrict__ item_window;
  const Index* __restrict__ window_item_ptr;
  const Index* __restrict__ run_start;
  const Index* __restrict__ run_ptr;
  const Index* __restrict__ item_run;
};

/// The four-slots-at-a-time part of a lane's walk over a block's slots k, k + step, … < end
/// (window_block and gcsb_dense_kernel): the comb words and values of four slots loaded at once,
/// then x for the non-pad ones (xb: the block's x segment), then add(o, value, x) for each non-pad
/// slot in slot order (o: the in-block output). Leaves k at the first slot of the remainder.
template <bool Transposed, class Value, class Index, class Add>
__device__ __forceinline__ void slots_by_four(const View<Value, Index>& v, std::int64_t& k,
                                              std::int64_t end, std::int64_t step,
                                              const Value* xb, std::int32_t mask, Add&& add) {
  for (; k + 3 * step < end; k += 4 * step) {
    std::int32_t c[4];
    Value val[4], xv[4];
#pragma unroll
    for (int u = 0; u < 4; ++u) {
      c[u] = __ldg(v.comb + k + u * step);
      val[u] = __ldg(v.values + k + u * step);
    }
#pragma unroll
    for (int u = 0; u < 4; ++u) {
      const int xi = Transposed ? (c[u] >> v.d) & mask : c[u] & mask;
      xv[u] = (c[u] & csb_detail::kPad) ? Value(0) : __ldg(xb + xi);
    }
#pragma unroll
    for (int u = 0; u < 4; ++u)
      if (!(c[u] & csb_detail::kPad)) {
        const int o = Transposed ? c[u] & mask : (c[u] >> v.d) & mask;
        add(o, val[u], xv[u]);
      }
  }
}

/// Adds the entries of the block at sorted position i into this lane's column of the warp tile
/// (acc[r·32 + lane], r = in-block row for spmv, in-block column for spmv_t). The trip count is the
/// group width, known before the loop, so four slots are loaded at once; pads (value 0, comb kPad)
/// are loaded with the group but neither multiply x nor add (0·Inf would be NaN).
/// With block lanes (bl_log2 > 0) this lane takes only the slots phase, phase + 2^bl_log2, ….
template <bool Transposed, class Value, class Index>
__device__ __forceinline__ void window_block(const View<Value, Index>& v, std::int64_t i,
                                             const Value* __restrict__ x, Value* acc, int lane,
                                             int phase, int bl_log2) {
  const std::int32_t mask = (1 << v.d) - 1;
  const std::int64_t g = i / v.gs;
  std::int64_t br, bc;
  v.block_at(i, br, bc);
  const Value* xb = x + ((Transposed ? br : bc) << v.d);
  const std::int64_t end = v.group_offset[g + 1];
  std::int64_t k = std::int64_t{v.group_offset[g]} + (i - g * v.gs) + std::int64_t{phase} * v.gs;
  const std::int64_t step = std::int64_t{v.gs} << bl_log2;
  slots_by_four<Transposed>(v, k, end, step, xb, mask,
                            [&](int o, Value a, Value b) { acc[o * 32 + lane] += a * b; });
  for (; k < end; k += step) {
    const std::int32_t c = __ldg(v.comb + k);
    if (c & csb_detail::kPad) continue;
    const int r = (c >> v.d) & mask, cc = c & mask;
    if constexpr (Transposed)
      acc[cc * 32 + lane] += __ldg(v.values + k) * __ldg(xb + r);
    else
      acc[r * 32 + lane] += __ldg(v.values + k) * __ldg(xb + cc);
  }
}

// A warp holds 32 / lanes items; the `lanes` lanes of an item take its blocks t, t + lanes, …
// (consecutive list entries side by side: for a long block row of equal-nnz blocks those are
// consecutive sorted positions, so the loads coalesce as in the thesis kernel). Each lane sums
// into its own column of a β×32 shared tile (no conflicts, no atomics), then the item's lanes sum
// the tile rows over the item's columns in a fixed order. An item that is its window's only one
// writes y directly (y = alpha·s + beta·y, or y += alpha·s when y was pre-scaled); a split window
// gets atomicAdd (Det = false, y pre-scaled) or partial[item·β + r] (Det = true, summed in item
// order by gcsb_det_reduce_kernel). The item loop is warp-uniform, so __syncwarp sees full warps.
template <class Value, class Index, bool Transposed, bool Det>
__global__ void gcsb_window_kernel(View<Value, Index> v, PlanView<Index> p,
                                   const Value* __restrict__ x, Value* __restrict__ y, Value alpha,
                                   Value beta, bool prescaled, Value* __restrict__ partial) {
  extern __shared__ __align__(16) unsigned char smem_raw[];
  const int warps = blockDim.x >> 5, warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const int bsz = 1 << v.d;
  const int lanes = 1 << p.lanes_log2, sub = lane & (lanes - 1), first = lane - sub;
  Value* acc = reinterpret_cast<Value*>(smem_raw) + static_cast<std::int64_t>(warp) * bsz * 32;
  const int per_warp = 32 >> p.lanes_log2;
  for (std::int64_t base = (std::int64_t{blockIdx.x} * warps + warp) * per_warp; base < p.n_items;
       base += std::int64_t{gridDim.x} * warps * per_warp) {
    const std::int64_t item = base + (lane >> p.lanes_log2);
    for (int r = 0; r < bsz; ++r) acc[r * 32 + lane] = Value(0);
    if (item < p.n_items) {
      // Block lanes: lanes sub, sub ^ 1, … (same sub >> bl) share a block, slot phases apart.
      const int bl = p.block_lanes_log2, phase = sub & ((1 << bl) - 1), stride = lanes >> bl;
      const std::int64_t e1 = p.item_ptr[item + 1];
      std::int64_t e = std::int64_t{p.item_ptr[item]} + (sub >> bl);
      if (p.list) {
        for (; e < e1; e += stride) window_block<Transposed>(v, p.list[e], x, acc, lane, phase, bl);
      } else if (e < e1) {  // runs form: list[e] = run_start[j] + e − run_ptr[j], j from item_run
        std::int64_t j = p.item_run[item];
        for (; e < e1; e += stride) {
          while (e >= std::int64_t{p.run_ptr[j + 1]}) ++j;
          window_block<Transposed>(v, std::int64_t{p.run_start[j]} + (e - p.run_ptr[j]), x, acc,
                                   lane, phase, bl);
        }
      }
    }
    __syncwarp();
    if (item < p.n_items) {
      // Unsplit plan (item_window == nullptr): item = window, its only item.
      const std::int64_t w = p.item_window ? std::int64_t{p.item_window[item]} : item;
      const bool sole = !p.item_window || p.window_item_ptr[w + 1] - p.window_item_ptr[w] == 1;
      for (int r = sub; r < bsz; r += lanes) {
        Value s = 0;
        for (int q = 0; q < lanes; ++q) s += acc[r * 32 + first + ((q + sub) & (lanes - 1))];
        const std::int64_t o = (w << v.d) + r;
        if (o >= v.n_out) continue;
        if (sole) {
          if (prescaled) y[o] += alpha * s;
          else cuda::axpby_store(&y[o], alpha, s, beta);
        } else if constexpr (Det) {
          partial[item * bsz + r] = s;
        } else {
          atomicAdd(&y[o], alpha * s);
        }
      }
    }
    __syncwarp();
  }
}

/// Outputs of split windows: y = alpha·(Σ partials in item order) + beta·y (beta == 0: y not
/// read). Outputs of one-item windows were written by the window kernel and are skipped.
template <class Value, class Index>
__global__ void gcsb_det_reduce_kernel(std::int64_t n_out, int d,
                                       const Index* __restrict__ window_item_ptr,
                                       const Value* __restrict__ partial, Value* __restrict__ y,
                                       Value alpha, Value beta) {
  const std::int64_t bsz = std::int64_t{1} << d;
  for (std::int64_t o = std::int64_t{blockIdx.x} * blockDim.x + threadIdx.x; o < n_out;
       o += std::int64_t{gridDim.x} * blockDim.x) {
    const std::int64_t w = o >> d, r = o & (bsz - 1);
    const std::int64_t it0 = window_item_ptr[w], it1 = window_item_ptr[w + 1];
    if (it1 - it0 <= 1) continue;
    Value s = 0;
    for (std::int64_t it = it0; it < it1; ++it) s += partial[it * bsz + r];
    cuda::axpby_store(&y[o], alpha, s, beta);
  }
}


// ---- dense-output kernel (fast, spmv_t by default) ------------------------------------------------
// For outputs that fit shared memory (n_out·V ≤ Gcsb::kDenseMaxBytes). The window kernel gathers
// a window's blocks from wherever the swizzle put them; for spmv_t of matrices whose block rows
// have different counts (random_p) or one block per row per column (ideal), that is one 32-B
// sector per lane per load. This kernel instead reads the storage in its natural order, as the
// thesis kernel does (thread ↔ sorted block, a warp reads one slot of 32 consecutive sorted
// blocks: 1–2 full 128-B lines of values and of comb), and adds each product into a CTA-private
// copy of the whole output in shared memory (shared atomics; the blocks of a warp are mostly
// neighbours in one block row, i.e. distinct block columns: distinct addresses for spmv_t).
// One CTA per SM (grid-stride over sorted blocks, sorted by nnz so the load spreads evenly);
// each CTA writes its copy to partial[cta·n_out + o] and gcsb_dense_reduce_kernel sums the
// copies in CTA order. Not bitwise deterministic (shared-memory atomic order).
template <class Value, class Index, bool Transposed>
__global__ void __launch_bounds__(kDenseThreads)
    gcsb_dense_kernel(View<Value, Index> v, int v_block_lanes_log2, const Value* __restrict__ x,
                      Value* __restrict__ partial) {
  extern __shared__ __align__(16) unsigned char smem_raw[];
  Value* ys = reinterpret_cast<Value*>(smem_raw);
  const int n_out = static_cast<int>(v.n_out);
  for (int o = threadIdx.x; o < n_out; o += blockDim.x) ys[o] = Value(0);
  __syncthreads();
  const std::int32_t mask = (1 << v.d) - 1;
  // Work unit u = (sorted block u >> bl, slot phase u & (2^bl − 1)): with block lanes (bl > 0)
  // 2^bl neighbouring threads share a block, each taking every 2^bl-th slot.
  const int bl = v_block_lanes_log2;
  const std::int64_t step = std::int64_t{v.gs} << bl;
  const std::int64_t n_units = v.n_sorted << bl;
  for (std::int64_t u0 = std::int64_t{blockIdx.x} * blockDim.x + threadIdx.x; u0 < n_units;
       u0 += std::int64_t{gridDim.x} * blockDim.x) {
    const std::int64_t i = u0 >> bl;
    const std::int64_t g = i / v.gs;
    std::int64_t br, bc;
    v.block_at(i, br, bc);
    const Value* xb = x + ((Transposed ? br : bc) << v.d);
    Value* yb = ys + ((Transposed ? bc : br) << v.d);  // real entries stay below n_out
    const std::int64_t end = v.group_offset[g + 1];
    std::int64_t k = std::int64_t{v.group_offset[g]} + (i - g * v.gs) +
                     (u0 & ((std::int64_t{1} << bl) - 1)) * v.gs;
    slots_by_four<Transposed>(v, k, end, step, xb, mask,
                              [&](int o, Value a, Value b) { atomicAdd(yb + o, a * b); });
    for (; k < end; k += step) {
      const std::int32_t c = __ldg(v.comb + k);
      if (c & csb_detail::kPad) break;  // a lane's pads trail its entries
      const int r = (c >> v.d) & mask, cc = c & mask;
      if constexpr (Transposed)
        atomicAdd(yb + cc, __ldg(v.values + k) * __ldg(xb + r));
      else
        atomicAdd(yb + r, __ldg(v.values + k) * __ldg(xb + cc));
    }
  }
  __syncthreads();
  Value* out = partial + std::int64_t{blockIdx.x} * n_out;
  for (int o = threadIdx.x; o < n_out; o += blockDim.x) out[o] = ys[o];
}

/// y[o] = alpha·Σ_p partial[p·n_out + o] + beta·y[o] (beta == 0: y not read). A CTA of 8 warps
/// takes 32 outputs; warp w sums the copies p ≡ w (mod 8) in order, then warp 0 adds the eight
/// sums in order: a fixed order.
template <class Value>
__global__ void __launch_bounds__(256)
    gcsb_dense_reduce_kernel(std::int64_t n_out, int parts, const Value* __restrict__ partial,
                             Value* __restrict__ y, Value alpha, Value beta) {
  __shared__ Value sums[8][32];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  for (std::int64_t o0 = std::int64_t{blockIdx.x} * 32; o0 < n_out;
       o0 += std::int64_t{gridDim.x} * 32) {
    const std::int64_t o = o0 + lane;
    Value s = 0;
    if (o < n_out)
      for (int p = warp; p < parts; p += 8) s += partial[p * n_out + o];
    sums[warp][lane] = s;
    __syncthreads();
    if (warp == 0 && o < n_out) {
      Value t = 0;
      for (int w = 0; w < 8; ++w) t += sums[w][lane];
      cuda::axpby_store(&y[o], alpha, t, beta);
    }
    __syncthreads();
  }
}

// ---- dispatch -----------------------------------------------------------------------------------
/// Lets the dense-output kernel of this instantiation use up to kDenseMaxBytes of dynamic shared
/// memory when `smem` bytes exceed the default 48 KiB (the build caps smem there): a function
/// attribute, set once per process. prepare sets it, so that a prepared product only launches.
template <bool Transposed, class Value, class Index>
void allow_dense_smem(std::size_t smem) {
  if (smem <= 48 * 1024) return;
  static const bool raised = [] {
    SPMAT_CUDA_CHECK(cudaFuncSetAttribute(gcsb_dense_kernel<Value, Index, Transposed>,
                                          cudaFuncAttributeMaxDynamicSharedMemorySize,
                                          static_cast<int>(Gcsb<Value, Index>::kDenseMaxBytes)));
    return true;
  }();
  (void)raised;
}

template <bool Transposed, class Value, class Index>
void launch(const GcsbDevice<Value, Index>& d, const Value* x, Value* y, Value alpha, Value beta) {
  const std::int64_t n_out = Transposed ? d.cols : d.rows;
  const int bsz = 1 << d.beta_log2;
  const View<Value, Index> v{d.n_sorted,
                             d.n_block_cols,
                             n_out,
                             d.beta_log2,
                             d.group_size,
                             d.values.data(),
                             d.comb.data(),
                             d.split_ids ? nullptr : d.block_indices.data(),
                             d.group_offset.data(),
                             d.block_row.data(),
                             d.block_col.data()};
  if (n_out == 0) return;
  if (Transposed ? d.dense_t : d.dense_n) {
    const std::size_t smem = static_cast<std::size_t>(n_out) * sizeof(Value);
    allow_dense_smem<Transposed, Value, Index>(smem);
    gcsb_dense_kernel<Value, Index, Transposed>
        <<<d.dense_parts, kDenseThreads, smem, cuda::stream()>>>(v, d.block_lanes_log2, x,
            d.dense_partial.data());
    SPMAT_CUDA_CHECK_LAUNCH("gcsb_dense_kernel");
    gcsb_dense_reduce_kernel<Value><<<cuda::grid_cover(n_out, 32), 256, 0, cuda::stream()>>>(
        n_out, d.dense_parts, d.dense_partial.data(), y, alpha, beta);
    SPMAT_CUDA_CHECK_LAUNCH("gcsb_dense_reduce_kernel");
    return;
  }
  const int warps = window_block_warps(bsz, sizeof(Value));
  const bool window = (d.kernel == GcsbKernel::fast || d.kernel == GcsbKernel::deterministic) &&
                      warps >= 1;
  if (window) {
    const auto& plan = Transposed ? d.col_plan : d.row_plan;
    // deterministic, and fast with flush=partial (default): split windows go through the work
    // buffer and a fixed-order pass. fast with flush=atomic: y is pre-scaled and the split windows
    // add atomically (slower on the H100: same-address atomics of adjacent items serialise).
    const bool det = d.kernel == GcsbKernel::deterministic || d.flush_partial;
    const bool prescaled = !det && plan.split;
    if (prescaled) cuda::scale_async(y, n_out, beta);
    const PlanView<Index> pv{plan.n_items,
                             plan.lanes_log2,
                             plan.block_lanes_log2,
                             plan.runs ? nullptr : plan.list.data(),
                             plan.item_ptr.data(),
                             plan.split ? plan.item_window.data() : nullptr,
                             plan.window_item_ptr.data(),
                             plan.run_start.data(),
                             plan.run_ptr.data(),
                             plan.item_run.data()};
    const std::int64_t warps_needed = (plan.n_items + (32 >> plan.lanes_log2) - 1) >> (5 - plan.lanes_log2);
    const std::size_t smem = static_cast<std::size_t>(warps) * 32 * bsz * sizeof(Value);
    const unsigned grid = cuda::grid_cover(warps_needed, warps);
    if (det)
      gcsb_window_kernel<Value, Index, Transposed, true><<<grid, warps * 32, smem,
          cuda::stream()>>>(v, pv, x, y, alpha, beta, false, plan.partial.data());
    else
      gcsb_window_kernel<Value, Index, Transposed, false><<<grid, warps * 32, smem,
          cuda::stream()>>>(v, pv, x, y, alpha, beta, prescaled, nullptr);
    SPMAT_CUDA_CHECK_LAUNCH("gcsb_window_kernel");
    if (det && plan.split) {
      gcsb_det_reduce_kernel<Value, Index><<<cuda::grid_cover(n_out, 256), 256, 0,
          cuda::stream()>>>(n_out, d.beta_log2, plan.window_item_ptr.data(), plan.partial.data(), y,
          alpha, beta);
      SPMAT_CUDA_CHECK_LAUNCH("gcsb_det_reduce_kernel");
    }
    return;
  }
  cuda::scale_async(y, n_out, beta);
  if (d.nnz == 0 || d.n_sorted == 0) return;
  const int threads = fast_block_threads(bsz, sizeof(Value));
  if ((d.kernel == GcsbKernel::atomic || d.kernel == GcsbKernel::fast) && threads >= 32) {
    const std::size_t smem = static_cast<std::size_t>(threads) * bsz * sizeof(Value);
    gcsb_atomic_kernel<Value, Index, Transposed>
        <<<cuda::grid_cover(d.n_sorted, threads), threads, smem, cuda::stream()>>>(v, x, y, alpha);
    SPMAT_CUDA_CHECK_LAUNCH("gcsb_atomic_kernel");
    return;
  }
  // kernel=thesis, or a β too large for any shared-memory tile.
  cuda::launch_grid_cover("gcsb_thesis_kernel", gcsb_thesis_kernel<Value, Index, Transposed>,
                          d.n_sorted, 256, v, x, y, alpha);
}

}  // namespace

// Contract: x, y device arrays (spmv: x cols, y rows; spmv_t: swapped), caller-allocated;
// beta == 0 never reads y. thesis/atomic: not deterministic (float atomics into y pre-scaled by
// beta); fast: deterministic unless the plan splits a window (then atomics for those windows);
// deterministic: bitwise reproducible, uses the plan's work buffer when a window is split (so
// concurrent calls on one matrix from several streams are not allowed). Work 2·nnz flops; bytes:
// the padded arrays once, this op's plan once, x gathered, y written once (plus, for split
// windows, y pre-scaled (fast) or n_items·β partials written and read (deterministic)).
SPMAT_DEFINE_KERNELS_BY_DIRECTION(GcsbDevice, launch)
/// Matrix::prepare: the dense-output kernel's shared-memory limit (the work buffers are
/// allocated by upload).
template <class Value, class Index>
void prepare(const GcsbDevice<Value, Index>& d, Op op, std::int64_t, DenseLayout) {
  if (op == Op::spmv && d.dense_n)
    allow_dense_smem<false, Value, Index>(static_cast<std::size_t>(d.rows) * sizeof(Value));
  if (op == Op::spmv_t && d.dense_t)
    allow_dense_smem<true, Value, Index>(static_cast<std::size_t>(d.cols) * sizeof(Value));
}

SPMAT_DEFINE_CUDA_IMPL(Gcsb, GcsbDevice)

}  // namespace spmat
