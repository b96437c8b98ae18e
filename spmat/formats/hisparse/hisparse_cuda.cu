// spmat/formats/hisparse/hisparse_cuda.cu — CUDA SpMV and SpMVᵀ of HiSparse: a leaf plan built
// once at setup (default), or the level-by-level top-down traversal on every call (spmv=levels).
// SPDX-License-Identifier: MIT
//
// Default path, spmv=plan (hisparse.hpp, "The SpMV plan"): the top-down traversal runs ONCE, on
// the host, when the matrix is uploaded: its result — which leaves exist and at which block
// offsets — is static for a given pool, so recomputing it on every product only costs time
// (the per-call traversal, spmv=levels, took 23.6 ms for random_k 2M×16 on an H200, almost all
// of it in the per-level inner kernels pushing ~32M one-entry leaves through a single atomic
// queue counter). The leaves are
// bucketed by output block and cut into items of bounded cost; a product is then ONE kernel
// launch (two when an output block is split over items: y = beta·y first).
//
// plan_warp_kernel (the default): one WARP per item, 8 items per 256-thread block, no
// block-wide barrier. One 256-thread block per item (spmv=plan1) reaches ~15 % of the H100's
// bandwidth on lap2d (0.31 ms for 158 MB): an item there is one block row of ~640 entries in ~7
// leaves, so each block did 2–3 entries per thread behind two __syncthreads, a dependent chain
// item → leaf record → node header → bytes → x, one-byte coordinate loads and one warp per leaf
// (the 382-entry diagonal leaf takes 12 serial steps while 7 warps idle). The warp kernel:
//   * COO leaves of every size go through one path: 32 leaf records and their headers are
//     loaded at once (one per lane), a warp scan numbers their groups of 4 entries, and the lanes
//     walk the groups flat (binary search over the scan with shuffles), two per lane per step.
//     A group is one 8-byte load of 4 coordinate pairs and one 16-byte load of 4 entries (fp64:
//     two, the second only when entries 2..3 exist; COO1/COO2 nodes hold 16 value bytes). Pads
//     are masked by the count (x may hold Inf/NaN).
//   * runs of one output index inside a group (row-major entries: a row's entries, for S·x) are
//     summed in a register before the shared atomic.
//   * dense leaves: the warp per leaf (rows: lanes over columns + shuffle sum; columns: lanes
//     over columns, register sum down the rows).
//   * item cost: min(item_cost, max(512, plan cost of the matrix / 8192)), so a small matrix
//     still gives ≥ 8k warps (ideal: 3.4M entries → ~6.6k warp items instead of ~450).
// spmv=plan1 runs plan_kernel (one block per item, item_cost as given).
// The transposed product uses its own plan (bucketed by block column) built the same way, so
// spmv and spmv_t do the same work; the state flag only picks which plan runs.
// Leaves are plain 8-byte {pointer, input block} records (plan bytes: 8 per leaf + 24 per item
// per direction; not part of storage_bytes, which is the pool as the format defines it).
//
// Fallback path, spmv=levels (kept for comparison): host launches per
// inner level and per non-empty leaf queue. CUDA 13 has no device-side cudaDeviceSynchronize,
// so the Whippetree controller with dynamic parallelism is replaced by host launches, one per
// inner level and one per non-empty leaf queue (at most depth − 1 + 4 launches, no read-back).
// Queue lengths come from the build statistics (LevelStats). Inner node → one warp; leaf with
// 1 entry → one thread; ≤ 32 → one warp; > 32 → a 128-thread block; dense leaf → one thread
// per row (per column for the transposed product); every entry adds to y with an atomic.
//
// Contract (both paths): x has cols entries, y rows entries (spmv_t: swapped), device memory of
// the caller; beta == 0 never reads y. Floating-point atomics (shared memory in the plan path,
// global in the levels path): NOT deterministic (caps say so). Transposition (the op and the
// state flag) swaps the roles of row and column at the leaves. Explicit zeros are multiplied
// like any entry. Offsets into the pool and row/column indices are 64-bit.
#include <algorithm>
#include <array>
#include <cstdint>
#include <vector>

#include "spmat/cuda/buffer.hpp"
#include "spmat/cuda/device_impl.hpp"
#include "spmat/cuda/primitives.cuh"
#include "spmat/formats/hisparse/hisparse.hpp"
#include "spmat/formats/hisparse/hisparse_device_proto.cuh"
#include "spmat/model/traffic.hpp"

namespace spmat {

namespace hisparse_gpu {
struct Item {
  std::uint32_t ptr;
  std::uint32_t unused;
  long long brow, bcol;
};
constexpr int kInnerBlock = 128;  ///< 4 warps, one inner node per warp
constexpr int kLeafBlock = 128;   ///< > 32-entry leaves: one block each (spec §5)
constexpr int kPlanBlock = 256;   ///< plan path: threads per item (≥ d: one column per thread)
constexpr int kWarpPlanBlock = 256;  ///< warp plan path: 8 warps per block, one item per warp
constexpr int kWarpPlanWarps = kWarpPlanBlock / 32;
/// Warp plan: the item cost is lowered to (plan cost of the matrix) / kTargetItems, but not
/// below kMinItemCost, so that small matrices still give enough warps to fill the device
/// (H100/H200: 132 SMs × 64 resident warps ≈ 8.4k). Not lower: a split bucket costs a y = beta·y
/// pass and atomics on its outputs (G3_circuit's ~1.1k-cost block rows stay whole at 8192).
constexpr std::int64_t kTargetItems = 8192;
constexpr std::int64_t kMinItemCost = 512;

__device__ __forceinline__ std::uint64_t offset_of(std::uint32_t p) {
  return static_cast<std::uint64_t>(p >> 2) << 4;
}
__device__ __forceinline__ std::uint64_t coo_entries_offset(std::uint32_t n) {
  const std::uint32_t x = n == 1 ? 1 : n == 2 ? 2 : 4;
  const std::uint64_t padded = (n + x - 1) / x * x;
  return (8 + 2 * padded + 15) & ~std::uint64_t{15};
}
}  // namespace hisparse_gpu

template <class Value, class Index>
struct HiSparseDevice {
  using Item = hisparse_gpu::Item;
  std::int64_t rows = 0, cols = 0;
  int log2d = 7, depth = 1;
  bool transposed = false;
  Value scale = 1;
  std::uint32_t root = hisparse::kNull;
  cuda::DeviceBuffer<hisparse::Chunk> pool;
  std::vector<std::int64_t> inner_count;         ///< nodes of each inner level
  std::array<std::int64_t, 4> leaf_count{};      ///< leaves per size class
  mutable std::vector<cuda::DeviceBuffer<Item>> inner_q;
  mutable std::array<cuda::DeviceBuffer<Item>, 4> leaf_q;
  mutable cuda::DeviceBuffer<unsigned long long> counters;  ///< 4 per inner level
  struct PlanDev {
    cuda::DeviceBuffer<hisparse::PlanLeaf> leaves;
    cuda::DeviceBuffer<hisparse::PlanItem> items;
    bool has_split = false;
  };
  bool use_plan = true;
  bool plan_block = false;  ///< spmv=plan1: one 256-thread block per item
  bool plan_occ6 = false;   ///< spmv=plan6: the warp kernel compiled for 6 blocks per SM
  bool plan_tlanes = false; ///< spmv=plan_tl: y = Sᵀ·x atomics by entry lanes (apply_group_lanes)
  std::array<PlanDev, 2> plan;  ///< [0]: y = S·x (by rows), [1]: y = Sᵀ·x (by columns)

  /// Every device byte held: pool, plans, traversal queues and counters.
  std::size_t storage_bytes() const {
    std::size_t b = pool.bytes() + counters.bytes();
    for (const auto& q : inner_q) b += q.bytes();
    for (const auto& q : leaf_q) b += q.bytes();
    for (const auto& p : plan) b += p.leaves.bytes() + p.items.bytes();
    return b;
  }

  static HiSparseDevice upload(const HiSparse<Value, Index>& h) {
    HiSparseDevice dv;
    dv.rows = h.rows;
    dv.cols = h.cols;
    dv.log2d = h.log2d;
    dv.depth = h.depth;
    dv.transposed = h.transposed;
    dv.scale = h.scale;
    dv.root = h.root;
    dv.pool = cuda::DeviceBuffer<hisparse::Chunk>(h.pool, "hisparse pool");
    dv.use_plan = !h.gpu_levels;
    dv.plan_block = h.gpu_plan_block;
    dv.plan_occ6 = h.gpu_plan_occ6;
    dv.plan_tlanes = h.gpu_plan_tlanes;
    if (dv.use_plan) {
      std::int64_t cost = h.plan_item_cost;
      if (!dv.plan_block && h.root != hisparse::kNull) {
        // Plan cost of the whole matrix ≈ stored entries + 8 per leaf (dense leaves: their
        // out-of-matrix positions are not counted; an estimate is enough here).
        const std::int64_t total = h.nnz + 8 * h.levels[h.depth - 1].nodes();
        cost = std::min(cost, std::max(hisparse_gpu::kMinItemCost, total / hisparse_gpu::kTargetItems));
      }
      for (int dir = 0; dir < 2; ++dir) {
        const hisparse::Plan p = hisparse::build_plan(h, dir == 1, cost);
        dv.plan[dir].leaves = cuda::DeviceBuffer<hisparse::PlanLeaf>(p.leaves, "hisparse plan leaves");
        dv.plan[dir].items = cuda::DeviceBuffer<hisparse::PlanItem>(p.items, "hisparse plan items");
        dv.plan[dir].has_split = p.has_split;
      }
      return dv;
    }
    if (h.root == hisparse::kNull) return dv;
    for (int l = 0; l + 1 < h.depth; ++l) {
      dv.inner_count.push_back(h.levels[l].nodes());
      dv.inner_q.emplace_back(static_cast<std::size_t>(h.levels[l].nodes()), "hisparse queue");
    }
    for (int c = 0; c < 4; ++c) {
      dv.leaf_count[c] = h.levels[h.depth - 1].nodes_by_class[c];
      dv.leaf_q[c] = cuda::DeviceBuffer<Item>(static_cast<std::size_t>(dv.leaf_count[c]),
                                              "hisparse leaf queue");
    }
    const std::vector<Item> root_item{Item{h.root, 0, 0, 0}};
    if (h.depth > 1) {
      dv.inner_q[0].upload(root_item);
    } else {
      for (int c = 0; c < 4; ++c)
        if (dv.leaf_count[c] == 1) dv.leaf_q[c].upload(root_item);
    }
    dv.counters = cuda::DeviceBuffer<unsigned long long>(
        static_cast<std::size_t>(4 * std::max(1, h.depth - 1)), "hisparse counters");
    return dv;
  }
};

namespace {

using hisparse_gpu::Item;

struct LeafQueues {
  Item* q[4];
};

/// One warp per inner node: every non-null child is pushed to the next level's queue (or, when
/// the next level is the leaf level, to the queue of its size class).
template <bool NextIsLeaf>
__global__ void __launch_bounds__(hisparse_gpu::kInnerBlock)
    inner_kernel(const std::uint8_t* __restrict__ pool, const Item* __restrict__ q, long long n,
                 Item* __restrict__ next, LeafQueues leaves, unsigned long long* counters,
                 int log2d) {
  const int lane = threadIdx.x & 31;
  const long long warps = static_cast<long long>(gridDim.x) * (blockDim.x / 32);
  const long long d = 1ll << log2d;
  for (long long w = (static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x) / 32; w < n;
       w += warps) {
    const Item it = q[w];
    const std::uint8_t* node = pool + hisparse_gpu::offset_of(it.ptr);
    auto emit = [&](std::uint32_t p, long long r, long long c) {
      const Item child{p, 0, it.brow * d + r, it.bcol * d + c};
      if constexpr (NextIsLeaf) {
        int cls = 0;
        if ((p & 3u) != 0) {
          const std::uint32_t cn =
              *reinterpret_cast<const std::uint32_t*>(pool + hisparse_gpu::offset_of(p));
          cls = cn == 1 ? 1 : cn <= 32 ? 2 : 3;
        }
        leaves.q[cls][atomicAdd(counters + cls, 1ull)] = child;
      } else {
        next[atomicAdd(counters, 1ull)] = child;
      }
    };
    if ((it.ptr & 3u) == 0) {
      const std::uint32_t* slots = reinterpret_cast<const std::uint32_t*>(node);
      for (long long s = lane; s < d * d; s += 32) {
        const std::uint32_t p = slots[s];
        if (p != 0) emit(p, s >> log2d, s & (d - 1));
      }
    } else {
      const std::uint32_t cnt = *reinterpret_cast<const std::uint32_t*>(node);
      const std::uint32_t* ent =
          reinterpret_cast<const std::uint32_t*>(node + hisparse_gpu::coo_entries_offset(cnt));
      for (long long k = lane; k < cnt; k += 32) emit(ent[k], node[8 + 2 * k], node[9 + 2 * k]);
    }
  }
}

/// COO leaves; G threads per leaf (1, 32 or a whole block of kLeafBlock).
template <int G, class Value>
__global__ void __launch_bounds__(hisparse_gpu::kLeafBlock)
    coo_leaf_kernel(const std::uint8_t* __restrict__ pool, const Item* __restrict__ q, long long n,
                    const Value* __restrict__ x, Value* __restrict__ y, Value alpha, bool by_col,
                    int log2d) {
  const int sub = threadIdx.x % G;
  const long long groups = static_cast<long long>(gridDim.x) * (blockDim.x / G);
  for (long long w = (static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x) / G; w < n;
       w += groups) {
    const Item it = q[w];
    const std::uint8_t* node = pool + hisparse_gpu::offset_of(it.ptr);
    const std::uint32_t cnt = *reinterpret_cast<const std::uint32_t*>(node);
    const Value* val = reinterpret_cast<const Value*>(node + hisparse_gpu::coo_entries_offset(cnt));
    const long long r0 = it.brow << log2d, c0 = it.bcol << log2d;
    for (long long k = sub; k < cnt; k += G) {
      const long long r = r0 + node[8 + 2 * k], c = c0 + node[9 + 2 * k];
      const Value v = val[k];
      if (by_col) atomicAdd(y + c, alpha * (v * cuda::ldg(x + r)));
      else atomicAdd(y + r, alpha * (v * cuda::ldg(x + c)));
    }
  }
}

/// Dense leaves: one block per leaf, one thread per output row (column when by_col) of the leaf,
/// summing in a register, then one atomic.
template <class Value>
__global__ void dense_leaf_kernel(const std::uint8_t* __restrict__ pool,
                                  const Item* __restrict__ q, long long n,
                                  const Value* __restrict__ x, Value* __restrict__ y, Value alpha,
                                  bool by_col, int log2d, long long rows, long long cols) {
  const long long d = 1ll << log2d;
  for (long long w = blockIdx.x; w < n; w += gridDim.x) {
    const Item it = q[w];
    const Value* val = reinterpret_cast<const Value*>(pool + hisparse_gpu::offset_of(it.ptr));
    const long long r0 = it.brow << log2d, c0 = it.bcol << log2d;
    const long long rin = rows - r0 < d ? rows - r0 : d, cin = cols - c0 < d ? cols - c0 : d;
    for (long long j = threadIdx.x; j < d; j += blockDim.x) {
      Value s = 0;
      if (by_col) {
        if (j >= cin) continue;
        for (long long r = 0; r < rin; ++r) s += val[r * d + j] * cuda::ldg(x + r0 + r);
        atomicAdd(y + c0 + j, alpha * s);
      } else {
        if (j >= rin) continue;
        for (long long c = 0; c < cin; ++c) s += val[j * d + c] * cuda::ldg(x + c0 + c);
        atomicAdd(y + r0 + j, alpha * s);
      }
    }
  }
}

/// Plan path: one block per item (see the file comment). Shared accumulators: d ≤ 256 values.
template <class Value>
__global__ void __launch_bounds__(hisparse_gpu::kPlanBlock)
    plan_kernel(const std::uint8_t* __restrict__ pool, const hisparse::PlanLeaf* __restrict__ leaves,
                const hisparse::PlanItem* __restrict__ items, const Value* __restrict__ x,
                Value* __restrict__ y, Value alpha, Value beta, bool by_col, int log2d,
                long long rows, long long cols) {
  constexpr int NT = hisparse_gpu::kPlanBlock;
  __shared__ Value acc[256];
  const hisparse::PlanItem it = items[blockIdx.x];
  const int d = 1 << log2d;
  const int tid = static_cast<int>(threadIdx.x), lane = tid & 31, warp = tid >> 5;
  for (int o = tid; o < d; o += NT) acc[o] = Value(0);
  __syncthreads();
  const long long out0 = static_cast<long long>(it.out_block) << log2d;
  // 1. Small COO leaves: one thread per leaf.
  for (unsigned j = it.begin + tid; j < it.warp_begin; j += NT) {
    const hisparse::PlanLeaf lf = leaves[j];
    const std::uint8_t* node = pool + hisparse_gpu::offset_of(lf.ptr);
    const std::uint32_t n = *reinterpret_cast<const std::uint32_t*>(node);
    const Value* val = reinterpret_cast<const Value*>(node + hisparse_gpu::coo_entries_offset(n));
    const Value* xin = x + (static_cast<long long>(lf.in_block) << log2d);
    for (std::uint32_t k = 0; k < n; ++k) {
      const int r = node[8 + 2 * k], c = node[9 + 2 * k];
      atomicAdd(&acc[by_col ? c : r], val[k] * cuda::ldg(xin + (by_col ? r : c)));
    }
  }
  // 2. Larger COO leaves: one warp per leaf.
  for (unsigned j = it.warp_begin + warp; j < it.dense_begin; j += NT / 32) {
    const hisparse::PlanLeaf lf = leaves[j];
    const std::uint8_t* node = pool + hisparse_gpu::offset_of(lf.ptr);
    const std::uint32_t n = *reinterpret_cast<const std::uint32_t*>(node);
    const Value* val = reinterpret_cast<const Value*>(node + hisparse_gpu::coo_entries_offset(n));
    const Value* xin = x + (static_cast<long long>(lf.in_block) << log2d);
    for (std::uint32_t k = lane; k < n; k += 32) {
      const int r = node[8 + 2 * k], c = node[9 + 2 * k];
      atomicAdd(&acc[by_col ? c : r], val[k] * cuda::ldg(xin + (by_col ? r : c)));
    }
  }
  // 3. Dense leaves: the whole block per leaf, entry e = tid + i·NT (coalesced). Entries outside
  // the matrix hold 0 and are skipped (their x index would be out of range).
  const int dd = d * d;
  for (unsigned j = it.dense_begin; j < it.end; ++j) {
    const hisparse::PlanLeaf lf = leaves[j];
    const Value* val = reinterpret_cast<const Value*>(pool + hisparse_gpu::offset_of(lf.ptr));
    const long long in0 = static_cast<long long>(lf.in_block) << log2d;
    const long long r0 = by_col ? in0 : out0, c0 = by_col ? out0 : in0;
    if (by_col) {
      // NT is a multiple of d, so this thread's column e & (d − 1) = tid & (d − 1) is fixed.
      Value s = 0;
      for (int e = tid; e < dd; e += NT) {
        const int r = e >> log2d, c = e & (d - 1);
        if (r0 + r < rows && c0 + c < cols) s += val[e] * cuda::ldg(x + r0 + r);
      }
      atomicAdd(&acc[tid & (d - 1)], s);
    } else if (d >= 32) {
      // dd is a multiple of NT (uniform trip count) and a warp's 32 entries share one row.
      for (int e = tid; e < dd; e += NT) {
        const int r = e >> log2d, c = e & (d - 1);
        Value p = (r0 + r < rows && c0 + c < cols) ? val[e] * cuda::ldg(x + c0 + c) : Value(0);
        p = cuda::warp_sum(p);
        if (lane == 0) atomicAdd(&acc[r], p);
      }
    } else {
      for (int e = tid; e < dd; e += NT) {
        const int r = e >> log2d, c = e & (d - 1);
        if (r0 + r < rows && c0 + c < cols) atomicAdd(&acc[r], val[e] * cuda::ldg(x + c0 + c));
      }
    }
    __syncthreads();  // keep the block together across dense leaves (bounded divergence)
  }
  __syncthreads();
  const long long n_out = by_col ? cols : rows;
  for (int o = tid; o < d; o += NT) {
    const long long g = out0 + o;
    if (g >= n_out) break;
    if (it.split) atomicAdd(y + g, alpha * acc[o]);
    else cuda::axpby_store(y + g, alpha, acc[o], beta);
  }
}

/// Four consecutive entries of a COO node (16-byte aligned address).
__device__ __forceinline__ void load4(const float* p, float v[4]) {
  const float4 t = __ldg(reinterpret_cast<const float4*>(p));
  v[0] = t.x;
  v[1] = t.y;
  v[2] = t.z;
  v[3] = t.w;
}
/// fp64: entries 2, 3 only when they exist (`upper`): a COO1/COO2 node holds 16 value bytes.
__device__ __forceinline__ void load4(const double* p, double v[4], bool upper) {
  const double2 a = __ldg(reinterpret_cast<const double2*>(p));
  v[0] = a.x;
  v[1] = a.y;
  v[2] = 0;
  v[3] = 0;
  if (upper) {
    const double2 b = __ldg(reinterpret_cast<const double2*>(p) + 1);
    v[2] = b.x;
    v[3] = b.y;
  }
}
__device__ __forceinline__ void load4(const float* p, float v[4], bool) { load4(p, v); }

/// One group of 4 entries of a COO leaf, fetched (coordinates, values; x not yet read).
template <class Value>
struct Group {
  uint2 rc;         ///< 4 (row, col) byte pairs, little-endian: byte 2k = row k, 2k+1 = col k
  Value v[4];
  const Value* xin;  ///< x of the leaf's input block
  int count;         ///< valid entries in the group, 0..4 (0: no group for this lane)
};

/// Group g of the COO leaf at pointer p with n entries: coordinates at node + 8 + 8g (8-byte
/// aligned, inside the node for every X since the first 16 bytes hold up to 4 pairs), entries
/// at node + coo_entries_offset(n) + 4g·sizeof(Value) (16-byte aligned). The pads of a node
/// (coordinates (0,0), entry 0) are never used: count masks them.
template <class Value>
__device__ __forceinline__ Group<Value> fetch_group(const std::uint8_t* __restrict__ pool,
                                                    std::uint32_t p, std::uint32_t n,
                                                    std::uint32_t in_block, unsigned g,
                                                    const Value* __restrict__ x, int log2d) {
  Group<Value> G;
  const std::uint8_t* node = pool + hisparse_gpu::offset_of(p);
  G.rc = __ldg(reinterpret_cast<const uint2*>(node + 8 + 8 * g));
  const Value* val =
      reinterpret_cast<const Value*>(node + hisparse_gpu::coo_entries_offset(n)) + 4 * g;
  const int rem = static_cast<int>(n - 4 * g);
  G.count = rem < 4 ? rem : 4;
  load4(val, G.v, G.count > 2);
  G.xin = x + (static_cast<long long>(in_block) << log2d);
  return G;
}

/// Adds a fetched group into the shared accumulators: runs of one output index (row-major
/// entries: consecutive entries of a row, for y = S·x) are summed in a register first, so a
/// row costs one shared atomic per lane instead of one per entry.
template <class Value>
__device__ __forceinline__ void apply_group(const Group<Value>& G, Value* acc, bool by_col) {
  Value xv[4];
#pragma unroll
  for (int k = 0; k < 4; ++k) {
    const unsigned w = k < 2 ? G.rc.x : G.rc.y;
    const int sh = 16 * (k & 1);
    const int r = (w >> sh) & 0xff, c = (w >> (sh + 8)) & 0xff;
    xv[k] = k < G.count ? cuda::ldg(G.xin + (by_col ? r : c)) : Value(0);
  }
  int key = -1;
  Value run = 0;
#pragma unroll
  for (int k = 0; k < 4; ++k) {
    if (k < G.count) {
      const unsigned w = k < 2 ? G.rc.x : G.rc.y;
      const int sh = 16 * (k & 1);
      const int o = by_col ? (w >> (sh + 8)) & 0xff : (w >> sh) & 0xff;
      const Value pr = G.v[k] * xv[k];
      if (o != key) {
        if (key >= 0) atomicAdd(acc + key, run);
        key = o;
        run = pr;
      } else {
        run += pr;
      }
    }
  }
  if (key >= 0) atomicAdd(acc + key, run);
}

/// y = Sᵀ·x variant of apply_group (spmv=plan_tl): the shared atomics of the warp's 32 groups
/// (128 consecutive entries of the flat walk, lane l holding entries 4l..4l+3) are issued as 4
/// rounds in which lane l adds entry 32k + l (group 8k + l/4, element l % 4), moved there by
/// shuffles. Within one round the lanes then hold 32 consecutive row-major entries, which share a
/// column only across rows of that short window (banded, 17 per row: 2-way), instead of the
/// group mapping's entries 4l + k, where every lane 4 apart sits one band row lower in the same
/// column (8-way shared-atomic conflicts). Call with the whole warp (count 0: no group). Used
/// for batches whose 32 leaves average ≥ 16 entries; shorter leaves rarely share columns and
/// keep apply_group.
template <class Value>
__device__ __forceinline__ void apply_group_lanes(const Group<Value>& G, Value* acc, int lane) {
  constexpr unsigned kFull = 0xffffffffu;
  Value pr[4];
  unsigned cols = 0;
#pragma unroll
  for (int k = 0; k < 4; ++k) {
    const unsigned w = k < 2 ? G.rc.x : G.rc.y;
    const int sh = 16 * (k & 1);
    const unsigned r = (w >> sh) & 0xffu, c = (w >> (sh + 8)) & 0xffu;
    pr[k] = k < G.count ? G.v[k] * cuda::ldg(G.xin + r) : Value(0);
    cols |= c << (8 * k);
  }
  const int e = lane & 3;
#pragma unroll
  for (int k = 0; k < 4; ++k) {
    const int src = 8 * k + (lane >> 2);
    const Value p0 = __shfl_sync(kFull, pr[0], src), p1 = __shfl_sync(kFull, pr[1], src);
    const Value p2 = __shfl_sync(kFull, pr[2], src), p3 = __shfl_sync(kFull, pr[3], src);
    const unsigned cs = __shfl_sync(kFull, cols, src);
    const int cnt = __shfl_sync(kFull, G.count, src);
    const Value v = e == 0 ? p0 : e == 1 ? p1 : e == 2 ? p2 : p3;
    if (e < cnt) atomicAdd(acc + ((cs >> (8 * e)) & 0xffu), v);
  }
}

/// Warp plan path (default): one WARP per item, no block-wide barriers. Each warp owns d ≤ 256
/// shared accumulators.
///  * COO leaves [begin, dense_begin), every size class alike, in batches of 32: lane l reads
///    leaf record l and its node header (n), a warp scan gives each leaf's first group of 4
///    entries, and the warp then walks the batch's groups flat (lane t → group t, found by a
///    binary search over the scan with shuffles), two groups per lane per step. A group is one
///    8-byte coordinate load and one 16-byte (fp64: two) entry load; every lane has work
///    whatever the leaf sizes (1-entry leaves: 32 leaves per step; 92-entry leaves: 23 lanes
///    per leaf).
///  * dense leaves [dense_begin, end): the warp per leaf; y = S·x: per row, lanes over the
///    columns and a shuffle sum; y = Sᵀ·x: lanes over the columns, a register sum down the rows.
///  * then y = alpha·acc + beta·y (single owner) or one atomicAdd per output (split bucket).
/// MinBlocks: 4 (spmv=plan: 64 registers, no spills, 32 warps per SM) or 6 (spmv=plan6: 40
/// registers with some spills to L1, 48 warps per SM, for matrices of many short items whose
/// dependent load chains (record → header → group) want more warps in flight).
/// TLanes (spmv=plan_tl): y = Sᵀ·x adds through apply_group_lanes instead of apply_group.
template <class Value, int MinBlocks, bool TLanes = false>
__global__ void __launch_bounds__(hisparse_gpu::kWarpPlanBlock, MinBlocks)
    plan_warp_kernel(const std::uint8_t* __restrict__ pool,
                     const hisparse::PlanLeaf* __restrict__ leaves,
                     const hisparse::PlanItem* __restrict__ items, long long n_items,
                     const Value* __restrict__ x, Value* __restrict__ y, Value alpha, Value beta,
                     bool by_col, int log2d, long long rows, long long cols) {
  constexpr unsigned kFull = 0xffffffffu;
  __shared__ Value acc_all[hisparse_gpu::kWarpPlanWarps][256];
  const int lane = static_cast<int>(threadIdx.x) & 31, warp = static_cast<int>(threadIdx.x) >> 5;
  const long long w = static_cast<long long>(blockIdx.x) * hisparse_gpu::kWarpPlanWarps + warp;
  if (w >= n_items) return;  // whole warps only; the kernel has no block-wide barrier
  Value* acc = acc_all[warp];
  const hisparse::PlanItem it = items[w];
  const int d = 1 << log2d;
  for (int o = lane; o < d; o += 32) acc[o] = Value(0);
  __syncwarp();
  const long long out0 = static_cast<long long>(it.out_block) << log2d;

  // 1. COO leaves, 32 at a time. Software pipeline over the batches: while batch k is walked,
  // the header loads of batch k + 1 (records already here) and the records of batch k + 2 are in
  // flight, so a long item (random_k: ~900 one-entry leaves) does not wait on record → header
  // → bytes for every batch.
  const unsigned coo_end = it.dense_begin;
  auto record = [&](unsigned base) {
    const unsigned j = base + static_cast<unsigned>(lane);
    return j < coo_end ? leaves[j] : hisparse::PlanLeaf{0, 0};
  };
  auto header = [&](const hisparse::PlanLeaf& lf) -> std::uint32_t {
    return lf.ptr != 0
               ? __ldg(reinterpret_cast<const std::uint32_t*>(pool + hisparse_gpu::offset_of(lf.ptr)))
               : 0u;
  };
  hisparse::PlanLeaf rec = record(it.begin), rec1 = hisparse::PlanLeaf{0, 0};
  std::uint32_t n_cur = header(rec);
  if (it.begin + 32 < coo_end) rec1 = record(it.begin + 32);
  for (unsigned base = it.begin; base < coo_end; base += 32) {
    const std::uint32_t p = rec.ptr, in_block = rec.in_block, n = n_cur;
    // Prefetch: header of batch + 1, records of batch + 2 (warp-uniform conditions).
    std::uint32_t n_next = 0;
    hisparse::PlanLeaf rec2{0, 0};
    if (base + 32 < coo_end) n_next = header(rec1);
    if (base + 64 < coo_end) rec2 = record(base + 64);
    const unsigned groups = (n + 3) >> 2;
    const unsigned incl = cuda::warp_inclusive_sum(groups);  // of the groups over the lanes
    const unsigned total = __shfl_sync(kFull, incl, 31);
    const unsigned excl = incl - groups;
    // spmv=plan_tl: the entry-lane atomics only where leaves are long (≥ 4 groups = 16 entries
    // per leaf on average in this batch), where rows of one leaf overlap in columns; batches of
    // short leaves (random matrices: 1–2 entries) keep the cheaper group path. Warp-uniform.
    const bool lanes_batch = TLanes && total >= 4u * 32u;
    // Leaf of flat group t: the first lane s with incl[s] > t (t < total), and its group index.
    auto locate = [&](unsigned t, std::uint32_t& lp, std::uint32_t& ln, std::uint32_t& lin,
                      unsigned& g) {
      int s = 0;
#pragma unroll
      for (int b = 16; b > 0; b >>= 1)
        if (__shfl_sync(kFull, incl, s + b - 1) <= t) s += b;
      lp = __shfl_sync(kFull, p, s);
      ln = __shfl_sync(kFull, n, s);
      lin = __shfl_sync(kFull, in_block, s);
      g = t - __shfl_sync(kFull, excl, s);
    };
    for (unsigned t0 = 0; t0 < total; t0 += 64) {  // warp-uniform trip count (shuffles inside)
      const unsigned ta = t0 + static_cast<unsigned>(lane), tb = ta + 32;
      std::uint32_t pa, na, ia, pb, nb, ib;
      unsigned ga, gb;
      locate(ta, pa, na, ia, ga);
      locate(tb, pb, nb, ib, gb);
      Group<Value> A, B;
      A.count = 0;
      B.count = 0;
      if (TLanes) {  // apply_group_lanes reads every lane's coordinates (masked by count)
        A.rc = make_uint2(0u, 0u);
        B.rc = make_uint2(0u, 0u);
      }
      if (ta < total) A = fetch_group(pool, pa, na, ia, ga, x, log2d);
      if (tb < total) B = fetch_group(pool, pb, nb, ib, gb, x, log2d);
      if (TLanes && by_col && lanes_batch) {  // warp-uniform: both calls shuffle over the warp
        apply_group_lanes(A, acc, lane);
        apply_group_lanes(B, acc, lane);
      } else {
        if (A.count > 0) apply_group(A, acc, by_col);
        if (B.count > 0) apply_group(B, acc, by_col);
      }
    }
    rec = rec1;
    rec1 = rec2;
    n_cur = n_next;
  }

  // 2. Dense leaves: the warp per leaf. Positions outside the matrix are skipped (x range).
  const unsigned dense_begin = it.dense_begin > it.end ? it.end : it.dense_begin;
  for (unsigned j = dense_begin; j < it.end; ++j) {
    const hisparse::PlanLeaf lf = leaves[j];
    const Value* val = reinterpret_cast<const Value*>(pool + hisparse_gpu::offset_of(lf.ptr));
    const long long in0 = static_cast<long long>(lf.in_block) << log2d;
    const long long r0 = by_col ? in0 : out0, c0 = by_col ? out0 : in0;
    const int rin = static_cast<int>(rows - r0 < d ? rows - r0 : d);
    const int cin = static_cast<int>(cols - c0 < d ? cols - c0 : d);
    if (by_col) {
      for (int c = lane; c < cin; c += 32) {
        Value s = 0;
#pragma unroll 4
        for (int r = 0; r < rin; ++r) s += __ldg(val + (r << log2d) + c) * cuda::ldg(x + r0 + r);
        atomicAdd(acc + c, s);
      }
    } else {
      for (int r = 0; r < rin; ++r) {
        Value s = 0;
        for (int c = lane; c < cin; c += 32) s += __ldg(val + (r << log2d) + c) * cuda::ldg(x + c0 + c);
        s = cuda::warp_sum(s);
        if (lane == 0) atomicAdd(acc + r, s);
      }
    }
  }
  __syncwarp();
  const long long n_out = by_col ? cols : rows;
  for (int o = lane; o < d; o += 32) {
    const long long g = out0 + o;
    if (g >= n_out) break;
    if (it.split) atomicAdd(y + g, alpha * acc[o]);
    else cuda::axpby_store(y + g, alpha, acc[o], beta);
  }
}

template <class Value, class Index>
void run_plan(const HiSparseDevice<Value, Index>& dv, const Value* x, Value* y, Value alpha,
              Value beta, bool by_col) {
  const std::int64_t n_out = by_col ? dv.cols : dv.rows;
  const auto& p = dv.plan[by_col ? 1 : 0];
  if (n_out == 0 || p.items.size() == 0) return;
  if (p.has_split) {  // split buckets add atomically: scale first, owners then add (beta = 1)
    cuda::scale_async(y, n_out, beta);
    beta = Value(1);
  }
  const auto* pool = reinterpret_cast<const std::uint8_t*>(dv.pool.data());
  if (!dv.plan_block) {
    const long long n_items = static_cast<long long>(p.items.size());
    const long long grid = (n_items + hisparse_gpu::kWarpPlanWarps - 1) / hisparse_gpu::kWarpPlanWarps;
    if (dv.plan_tlanes && by_col)
      plan_warp_kernel<Value, 4, true><<<static_cast<unsigned>(grid), hisparse_gpu::kWarpPlanBlock,
          0, cuda::stream()>>>(pool, p.leaves.data(), p.items.data(), n_items, x, y,
          alpha * dv.scale, beta, by_col, dv.log2d, dv.rows, dv.cols);
    else if (dv.plan_occ6)
      plan_warp_kernel<Value, 6><<<static_cast<unsigned>(grid), hisparse_gpu::kWarpPlanBlock, 0,
          cuda::stream()>>>(pool, p.leaves.data(), p.items.data(), n_items, x, y, alpha * dv.scale,
          beta, by_col, dv.log2d, dv.rows, dv.cols);
    else
      plan_warp_kernel<Value, 4><<<static_cast<unsigned>(grid), hisparse_gpu::kWarpPlanBlock, 0,
          cuda::stream()>>>(pool, p.leaves.data(), p.items.data(), n_items, x, y, alpha * dv.scale,
          beta, by_col, dv.log2d, dv.rows, dv.cols);
    SPMAT_CUDA_CHECK_LAUNCH("hisparse plan_warp_kernel");
    return;
  }
  plan_kernel<Value><<<static_cast<unsigned>(p.items.size()), hisparse_gpu::kPlanBlock, 0,
      cuda::stream()>>>(pool, p.leaves.data(), p.items.data(), x, y, alpha * dv.scale, beta, by_col,
      dv.log2d, dv.rows, dv.cols);
  SPMAT_CUDA_CHECK_LAUNCH("hisparse plan_kernel");
}

template <class Value, class Index>
void run(const HiSparseDevice<Value, Index>& dv, const Value* x, Value* y, Value alpha, Value beta,
         bool by_col) {
  if (dv.use_plan) return run_plan(dv, x, y, alpha, beta, by_col);
  const std::int64_t n_out = by_col ? dv.cols : dv.rows;
  cuda::scale_async(y, n_out, beta);
  if (dv.root == hisparse::kNull || n_out == 0) return;
  alpha *= dv.scale;
  const auto* pool = reinterpret_cast<const std::uint8_t*>(dv.pool.data());
  LeafQueues lq{{dv.leaf_q[0].data(), dv.leaf_q[1].data(), dv.leaf_q[2].data(),
                 dv.leaf_q[3].data()}};
  if (dv.depth > 1)
    cuda::fill_bytes_async(dv.counters.data(), 0, dv.counters.bytes());
  for (int l = 0; l + 1 < dv.depth; ++l) {
    const long long n = dv.inner_count[l];  // > 0: every inner level of a non-empty tree
    const unsigned grid = cuda::grid_for(n * 32, hisparse_gpu::kInnerBlock);
    unsigned long long* cnt = dv.counters.data() + 4 * l;
    if (l + 2 == dv.depth) {
      inner_kernel<true><<<grid, hisparse_gpu::kInnerBlock, 0, cuda::stream()>>>(pool,
          dv.inner_q[l].data(), n, nullptr, lq, cnt, dv.log2d);
    } else {
      inner_kernel<false><<<grid, hisparse_gpu::kInnerBlock, 0, cuda::stream()>>>(
          pool, dv.inner_q[l].data(), n, dv.inner_q[l + 1].data(), lq, cnt, dv.log2d);
    }
    SPMAT_CUDA_CHECK_LAUNCH("hisparse inner_kernel");
  }
  const std::int64_t* lc = dv.leaf_count.data();
  constexpr int B = hisparse_gpu::kLeafBlock;
  if (lc[hisparse::cls_one] > 0) {
    coo_leaf_kernel<1, Value><<<cuda::grid_for(lc[1], B), B, 0, cuda::stream()>>>(pool, lq.q[1],
        lc[1], x, y, alpha, by_col, dv.log2d);
    SPMAT_CUDA_CHECK_LAUNCH("hisparse coo_leaf_kernel<1>");
  }
  if (lc[hisparse::cls_warp] > 0) {
    coo_leaf_kernel<32, Value><<<cuda::grid_for(lc[2] * 32, B), B, 0, cuda::stream()>>>(pool,
        lq.q[2], lc[2], x, y, alpha, by_col, dv.log2d);
    SPMAT_CUDA_CHECK_LAUNCH("hisparse coo_leaf_kernel<32>");
  }
  if (lc[hisparse::cls_block] > 0) {
    coo_leaf_kernel<B, Value><<<cuda::grid_for(lc[3] * B, B), B, 0, cuda::stream()>>>(pool, lq.q[3],
        lc[3], x, y, alpha, by_col, dv.log2d);
    SPMAT_CUDA_CHECK_LAUNCH("hisparse coo_leaf_kernel<block>");
  }
  if (lc[hisparse::cls_dense] > 0) {
    const int threads = (1 << dv.log2d) < 32 ? 32 : (1 << dv.log2d);
    dense_leaf_kernel<Value><<<cuda::grid_for(lc[0] * threads, threads), threads, 0,
        cuda::stream()>>>(pool, lq.q[0], lc[0], x, y, alpha, by_col, dv.log2d, dv.rows, dv.cols);
    SPMAT_CUDA_CHECK_LAUNCH("hisparse dense_leaf_kernel");
  }
}

}  // namespace

template <class Value, class Index>
void spmv(const HiSparseDevice<Value, Index>& dv, const Value* x, Value* y, Value alpha,
          Value beta) {
  run(dv, x, y, alpha, beta, dv.transposed);
}

template <class Value, class Index>
void spmv_t(const HiSparseDevice<Value, Index>& dv, const Value* x, Value* y, Value alpha,
            Value beta) {
  run(dv, x, y, alpha, beta, !dv.transposed);
}

/// The CUDA backend of hisparse (like cuda::DeviceImpl, plus add). A matrix built on the host
/// keeps its host copy and uploads pool + SpMV plans at construction. The result of add lives on
/// the device only (pool + device proto); its host copy (to_csr) and its SpMV plans are made on
/// first use, so the timed add is the device traversal and the device serializer, nothing else.
/// The device proto of an operand (add's input) is decoded on the host and uploaded at its first
/// add or at prepare(Op::add), then kept; a sum keeps the proto it was serialized from.
template <class Value, class Index>
class HiSparseCudaImpl final : public MatrixImpl<Value> {
 public:
  using Host = HiSparse<Value, Index>;
  using Dev = HiSparseDevice<Value, Index>;
  using Proto = hisparse_gpu::DevProto<Value>;
  explicit HiSparseCudaImpl(Host host)
      : h_(std::move(host)), host_ready_(true), pool_bytes_(h_.storage_bytes()) {
    dev_ = std::make_unique<Dev>(Dev::upload(h_));
  }
  /// An add result: `meta` holds everything but the pool, which is on the device.
  HiSparseCudaImpl(Host meta, hisparse_gpu::DevPool&& pool, Proto&& proto)
      : h_(std::move(meta)), host_ready_(false), pool_bytes_(pool.pool.bytes()),
        dpool_(std::move(pool.pool)), proto_(std::make_unique<Proto>(std::move(proto))) {}

  Shape shape() const override { return h_.shape(); }
  Backend backend() const override { return Backend::cuda; }
  /// Every device byte held (spmat/cuda/device_impl.hpp): the pool of an add result, the
  /// device storage (pool, plans, queues) and the device proto, each where it exists.
  std::size_t storage_bytes() const override {
    std::size_t b = dpool_.bytes();
    if (dev_) b += dev_->storage_bytes();
    if (proto_) {
      b += proto_->values.bytes();
      for (const auto& l : proto_->levels)
        b += l.begin.bytes() + l.brow.bytes() + l.bcol.bytes() + l.lr.bytes() + l.lc.bytes() +
             l.node.bytes();
    }
    return b;
  }
  std::size_t traffic_bytes(Op op, std::int64_t k) const override {
    return default_traffic(pool_bytes_, op, h_.shape(), k, sizeof(Value));
  }
  Csr<Value, std::int64_t> to_csr() const override {
    return convert<Value, std::int64_t>(host().to_csr());
  }
  void prepare(Op op, std::int64_t, DenseLayout) const override {
    if (op == Op::add) proto();
    else if (op == Op::spmv || op == Op::spmv_t) device();
  }
  void spmv(const Value* x, Value* y, Value alpha, Value beta) const override {
    spmat::spmv(device(), x, y, alpha, beta);
  }
  void spmv_t(const Value* x, Value* y, Value alpha, Value beta) const override {
    spmat::spmv_t(device(), x, y, alpha, beta);
  }
  std::unique_ptr<MatrixImpl<Value>> add(const MatrixImpl<Value>& other, Value alpha,
                                         Value beta) const override {
    const auto* bp = dynamic_cast<const HiSparseCudaImpl*>(&other);
    if (!bp) throw UnsupportedError("hisparse add: both operands must be hisparse on cuda");
    const Host& a = h_;
    const Host& b = bp->h_;
    const Shape sa = a.shape(), sb = b.shape();
    if (sa.rows != sb.rows || sa.cols != sb.cols)
      throw DimensionMismatchError("hisparse add: shapes differ (" + std::to_string(sa.rows) +
                                   "x" + std::to_string(sa.cols) + " and " +
                                   std::to_string(sb.rows) + "x" + std::to_string(sb.cols) + ")");
    if (a.log2d != b.log2d)
      throw UnsupportedError("hisparse add: the operands have different node sizes (d = " +
                             std::to_string(a.d()) + " and " + std::to_string(b.d()) +
                             "); build both with the same d");
    // The CPU add's rules (hisparse_cpu.cpp): both transposed -> add in storage order and mark
    // the result transposed; scales fold into the coefficients.
    const bool both = a.transposed && b.transposed;
    Host meta;
    meta.rows = both ? a.rows : static_cast<Index>(sa.rows);
    meta.cols = both ? a.cols : static_cast<Index>(sa.cols);
    meta.log2d = a.log2d;
    meta.depth = a.depth;
    meta.allow_dense = a.allow_dense;
    meta.gpu_levels = a.gpu_levels;
    meta.plan_item_cost = a.plan_item_cost;
    meta.gpu_add_sort = a.gpu_add_sort;
    meta.gpu_add_tcount = a.gpu_add_tcount;
    meta.gpu_plan_occ6 = a.gpu_plan_occ6;
    meta.gpu_plan_tlanes = a.gpu_plan_tlanes;
    Proto c = hisparse_gpu::add_device(proto(), a.transposed && !both, bp->proto(),
                                       b.transposed && !both, alpha * a.scale, beta * b.scale,
                                       static_cast<std::int64_t>(meta.rows),
                                       static_cast<std::int64_t>(meta.cols), !a.gpu_add_sort,
                                       a.gpu_add_tcount);
    hisparse_gpu::DevPool pool = hisparse_gpu::serialize_device(c, meta.allow_dense);
    meta.nnz = pool.nnz;
    meta.root = pool.root;
    meta.levels = std::move(pool.stats);
    meta.transposed = both;
    meta.scale = Value(1);
    return std::make_unique<HiSparseCudaImpl>(std::move(meta), std::move(pool), std::move(c));
  }

  /// The host copy (downloads the pool of an add result on first use).
  const Host& host() const {
    if (!host_ready_) {
      h_.pool = dpool_.download();
      host_ready_ = true;
    }
    return h_;
  }

 private:
  const Dev& device() const {
    if (!dev_) dev_ = std::make_unique<Dev>(Dev::upload(host()));
    return *dev_;
  }
  const Proto& proto() const {
    if (!proto_) proto_ = std::make_unique<Proto>(Proto::upload(hisparse::decode(host())));
    return *proto_;
  }

  mutable Host h_;
  mutable bool host_ready_;
  std::size_t pool_bytes_;
  hisparse_gpu::PoolBuffer<hisparse::Chunk> dpool_;  ///< add results: the pool on the device
  mutable std::unique_ptr<Dev> dev_;
  mutable std::unique_ptr<Proto> proto_;
};

template <class Value, class Index>
std::unique_ptr<MatrixImpl<Value>> make_cuda_impl(HiSparse<Value, Index>&& host) {
  return std::make_unique<HiSparseCudaImpl<Value, Index>>(std::move(host));
}

// The registry's CUDA products of hisparse: those HiSparseCudaImpl overrides (add included).
SPMAT_DEFINE_CUDA_OPS(HiSparse, HiSparseCudaImpl<Value, Index>)

template <class Value, class Index>
HiSparse<Value, Index> cuda_host_copy(const MatrixImpl<Value>& m) {
  const auto* p = dynamic_cast<const HiSparseCudaImpl<Value, Index>*>(&m);
  if (!p) throw UnsupportedError("cuda_host_copy: not a hisparse CUDA matrix of these types");
  return p->host();
}

#define SPMAT_INSTANTIATE(V, I)                                                \
  template std::unique_ptr<MatrixImpl<V>> make_cuda_impl(HiSparse<V, I>&&);   \
  template HiSparse<V, I> cuda_host_copy<V, I>(const MatrixImpl<V>&);
SPMAT_FOR_EACH_TYPE_PAIR(SPMAT_INSTANTIATE)
#undef SPMAT_INSTANTIATE

}  // namespace spmat
