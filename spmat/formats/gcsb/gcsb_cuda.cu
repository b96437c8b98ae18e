// spmat/formats/gcsb/gcsb_cuda.cu — CUDA kernels of GCSB: thesis (atomics), fast (warp-reduced), deterministic (two-phase).
// SPDX-License-Identifier: MIT
//
// All three read the same storage; Transposed swaps the roles of the in-block row and column.
// Launch constants are untuned (no GPU measurement yet): the lead's H100 runs decide them.
#include <algorithm>

#include "spmat/cuda/buffer.hpp"
#include "spmat/cuda/device_impl.hpp"
#include "spmat/formats/csb/csb_cuda_common.cuh"
#include "spmat/formats/gcsb/gcsb.hpp"

namespace spmat {

namespace {
constexpr unsigned kFull = 0xffffffffu;
constexpr int kSmemBudget = 32 * 1024;  // bytes of shared memory per CTA (under the 48 KB default)

/// Threads per CTA of the fast kernel: β·V bytes of accumulator per thread within the budget,
/// a multiple of 32, at most 256; 0 when not even one warp fits (then the thesis kernel runs).
int fast_block_threads(int beta, std::size_t value_size) {
  const std::int64_t t = kSmemBudget / (static_cast<std::int64_t>(beta) * value_size);
  return static_cast<int>(std::min<std::int64_t>(256, t & ~std::int64_t{31}));
}
/// Warps per CTA of the deterministic item kernel (β·32·V bytes each), 1..8; 0 if none fits.
int det_block_warps(int beta, std::size_t value_size) {
  const std::int64_t w = kSmemBudget / (static_cast<std::int64_t>(beta) * 32 * value_size);
  return static_cast<int>(std::min<std::int64_t>(8, w));
}
}  // namespace

template <class Value, class Index>
struct GcsbDevice {
  struct Plan {
    cuda::DeviceBuffer<Index> list, item_ptr, window_item_ptr;
    mutable cuda::DeviceBuffer<Value> partial;  // n_items·β work buffer
    std::int64_t n_items = 0;
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

  static Plan upload_plan(const GcsbPlan<Index>& p, int beta) {
    Plan d;
    d.n_items = p.n_items();
    d.list = cuda::DeviceBuffer<Index>(p.list, "gcsb plan list");
    d.item_ptr = cuda::DeviceBuffer<Index>(p.item_ptr, "gcsb plan item_ptr");
    d.window_item_ptr = cuda::DeviceBuffer<Index>(p.window_item_ptr, "gcsb plan window_item_ptr");
    d.partial = cuda::DeviceBuffer<Value>(static_cast<std::size_t>(d.n_items) * beta,
                                          "gcsb deterministic work buffer");
    return d;
  }

  static GcsbDevice upload(const Gcsb<Value, Index>& s) {
    GcsbDevice d;
    d.rows = s.rows;
    d.cols = s.cols;
    d.nnz = s.nnz;
    d.n_block_cols = s.n_block_cols;
    d.n_sorted = s.n_sorted();
    d.beta_log2 = s.beta_log2;
    d.group_size = s.group_size;
    d.kernel = s.kernel;
    if (d.kernel == GcsbKernel::deterministic && det_block_warps(s.beta(), sizeof(Value)) < 1)
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
    if (s.has_plan()) {
      d.row_plan = upload_plan(s.row_plan, s.beta());
      d.col_plan = upload_plan(s.col_plan, s.beta());
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

// ---- fast ---------------------------------------------------------------------------------------
// Same thread ↔ sorted block mapping (coalesced value/comb loads), but each thread sums its
// block into a private β-entry window in shared memory (acc[r·blockDim + tid]: conflict-free),
// then the warp flushes: lanes whose output window (block row for spmv, block column for
// spmv_t) is unique in the warp add their own non-zero sums; lanes sharing a window are reduced
// together first (lane r sums row r over the peers, rotated so the reads are conflict-free), so
// a warp of blocks from one block row issues at most β atomics instead of one per entry.
// Skipping a zero sum changes nothing but the sign of a zero. blockDim is a multiple of 32 and
// the loop is CTA-uniform, so the warp intrinsics see full warps.
template <class Value, class Index, bool Transposed>
__global__ void gcsb_fast_kernel(View<Value, Index> v, const Value* __restrict__ x,
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

// ---- deterministic ------------------------------------------------------------------------------
// Phase 1: one warp per plan item (≤ 32 blocks of one output window, one per lane). Lane j sums
// its block, entries in slot order, into its column of a β×32 shared tile; then lane r sums row r
// over the 32 columns in the fixed order r, r+1, … (mod 32) and writes partial[item·β + r].
// Phase 2: output o sums the partials of its window's items in item order, then the epilogue
// y = alpha·s + beta·y (beta == 0: y not read). No atomics: bitwise identical from run to run.
template <class Value, class Index, bool Transposed>
__global__ void gcsb_det_items_kernel(View<Value, Index> v, std::int64_t n_items,
                                      const Index* __restrict__ list,
                                      const Index* __restrict__ item_ptr,
                                      const Value* __restrict__ x, Value* __restrict__ partial) {
  extern __shared__ __align__(16) unsigned char smem_raw[];
  const int warps = blockDim.x >> 5, warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const int beta = 1 << v.d;
  const std::int32_t mask = beta - 1;
  Value* acc = reinterpret_cast<Value*>(smem_raw) + static_cast<std::int64_t>(warp) * beta * 32;
  for (std::int64_t item = std::int64_t{blockIdx.x} * warps + warp; item < n_items;
       item += std::int64_t{gridDim.x} * warps) {
    for (int r = 0; r < beta; ++r) acc[r * 32 + lane] = Value(0);
    const std::int64_t e = std::int64_t{item_ptr[item]} + lane;
    if (e < item_ptr[item + 1]) {
      const std::int64_t i = list[e];
      const std::int64_t g = i / v.gs;
      std::int64_t br, bc;
      v.block_at(i, br, bc);
      const Value* xb = x + ((Transposed ? br : bc) << v.d);
      const std::int64_t end = v.group_offset[g + 1];
      for (std::int64_t k = v.group_offset[g] + (i - g * v.gs); k < end; k += v.gs) {
        const std::int32_t c = v.comb[k];
        if (c & csb_detail::kPad) break;
        const int r = (c >> v.d) & mask, cc = c & mask;
        if constexpr (Transposed)
          acc[cc * 32 + lane] += v.values[k] * xb[r];
        else
          acc[r * 32 + lane] += v.values[k] * xb[cc];
      }
    }
    __syncwarp();
    for (int r = lane; r < beta; r += 32) {
      Value s = 0;
      for (int j = 0; j < 32; ++j) s += acc[r * 32 + ((lane + j) & 31)];
      partial[item * beta + r] = s;
    }
    __syncwarp();
  }
}

template <class Value, class Index>
__global__ void gcsb_det_reduce_kernel(std::int64_t n_out, int d,
                                       const Index* __restrict__ window_item_ptr,
                                       const Value* __restrict__ partial, Value* __restrict__ y,
                                       Value alpha, Value beta) {
  const std::int64_t bsz = std::int64_t{1} << d;
  for (std::int64_t o = std::int64_t{blockIdx.x} * blockDim.x + threadIdx.x; o < n_out;
       o += std::int64_t{gridDim.x} * blockDim.x) {
    const std::int64_t w = o >> d, r = o & (bsz - 1);
    Value s = 0;
    for (std::int64_t it = window_item_ptr[w]; it < window_item_ptr[w + 1]; ++it)
      s += partial[it * bsz + r];
    y[o] = beta == Value(0) ? alpha * s : alpha * s + beta * y[o];
  }
}

// ---- dispatch -----------------------------------------------------------------------------------
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
  if (d.kernel == GcsbKernel::deterministic) {
    if (n_out == 0) return;
    const auto& plan = Transposed ? d.col_plan : d.row_plan;
    if (plan.n_items > 0) {
      const int warps = det_block_warps(bsz, sizeof(Value));
      const std::size_t smem = static_cast<std::size_t>(warps) * 32 * bsz * sizeof(Value);
      gcsb_det_items_kernel<Value, Index, Transposed>
          <<<csb_cuda::grid_for(plan.n_items, warps), warps * 32, smem>>>(
              v, plan.n_items, plan.list.data(), plan.item_ptr.data(), x, plan.partial.data());
      SPMAT_CUDA_CHECK_LAUNCH("gcsb_det_items_kernel");
    }
    gcsb_det_reduce_kernel<Value, Index><<<csb_cuda::grid_for(n_out, 256), 256>>>(
        n_out, d.beta_log2, plan.window_item_ptr.data(), plan.partial.data(), y, alpha, beta);
    SPMAT_CUDA_CHECK_LAUNCH("gcsb_det_reduce_kernel");
    return;
  }
  csb_cuda::scale(y, n_out, beta);
  if (d.nnz == 0 || d.n_sorted == 0) return;
  const int threads = fast_block_threads(bsz, sizeof(Value));
  if (d.kernel == GcsbKernel::fast && threads >= 32) {
    const std::size_t smem = static_cast<std::size_t>(threads) * bsz * sizeof(Value);
    gcsb_fast_kernel<Value, Index, Transposed>
        <<<csb_cuda::grid_for(d.n_sorted, threads), threads, smem>>>(v, x, y, alpha);
    SPMAT_CUDA_CHECK_LAUNCH("gcsb_fast_kernel");
    return;
  }
  // kernel=thesis, or fast with a β too large for the shared-memory window.
  gcsb_thesis_kernel<Value, Index, Transposed>
      <<<csb_cuda::grid_for(d.n_sorted, 256), 256>>>(v, x, y, alpha);
  SPMAT_CUDA_CHECK_LAUNCH("gcsb_thesis_kernel");
}

}  // namespace

// Contract: x, y device arrays (spmv: x cols, y rows; spmv_t: swapped), caller-allocated;
// beta == 0 never reads y. thesis/fast: not deterministic (float atomics into y pre-scaled by
// beta); deterministic: bitwise reproducible, uses the plan's work buffer (so concurrent calls
// on one matrix from several streams are not allowed).
template <class Value, class Index>
void spmv(const GcsbDevice<Value, Index>& d, const Value* x, Value* y, Value alpha, Value beta) {
  launch<false>(d, x, y, alpha, beta);
}
template <class Value, class Index>
void spmv_t(const GcsbDevice<Value, Index>& d, const Value* x, Value* y, Value alpha, Value beta) {
  launch<true>(d, x, y, alpha, beta);
}

template <class Value, class Index>
std::unique_ptr<MatrixImpl<Value>> make_cuda_impl(Gcsb<Value, Index>&& host) {
  return std::make_unique<cuda::DeviceImpl<Gcsb<Value, Index>, GcsbDevice<Value, Index>>>(
      std::move(host));
}

#define SPMAT_INSTANTIATE(V, I) \
  template std::unique_ptr<MatrixImpl<V>> make_cuda_impl(Gcsb<V, I>&&);
SPMAT_FOR_EACH_TYPE_PAIR(SPMAT_INSTANTIATE)
#undef SPMAT_INSTANTIATE

}  // namespace spmat
