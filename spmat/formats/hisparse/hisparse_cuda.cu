// spmat/formats/hisparse/hisparse_cuda.cu — CUDA SpMV and SpMVᵀ of HiSparse: a leaf plan built
// once at setup (default), or the level-by-level top-down traversal on every call (spmv=levels).
// SPDX-License-Identifier: MIT
//
// Default path, spmv=plan (hisparse.hpp, "The SpMV plan"): the top-down traversal runs ONCE, on
// the host, when the matrix is uploaded: its result — which leaves exist and at which block
// offsets — is static for a given pool, so recomputing it on every product only costs time
// (session-1 measurement: 23.6 ms for random_k 2M×16, almost all of it in the per-level inner
// kernels pushing ~32M one-entry leaves through a single atomic queue counter). The leaves are
// bucketed by output block and cut into items of bounded cost; a product is then ONE kernel
// launch (two when an output block is split over items: y = beta·y first), one 256-thread block
// per item:
//   * COO leaves with ≤ 4 entries: one thread per leaf (spec §5 "1 entry → 1 thread");
//   * larger COO leaves: one warp per leaf, lanes over the entries;
//   * dense leaves: the whole block, coalesced over the d² entries (row products reduce over a
//     warp, column products keep one column per thread in a register);
//   * every partial sum goes to the item's ≤ d accumulators in shared memory, and each output
//     is written once: y = alpha·acc + beta·y (single owner) or one atomicAdd per output (split
//     bucket). Global atomics: ≤ d per split item, none otherwise.
// The transposed product uses its own plan (bucketed by block column) built the same way, so
// spmv and spmv_t cost the same; the state flag only picks which plan runs.
// Leaves are plain 8-byte {pointer, input block} records (plan bytes: 8 per leaf + 24 per item
// per direction; not part of storage_bytes, which is the pool as the spec defines it).
//
// Fallback path, spmv=levels (the session-1 kernels, kept for comparison): host launches per
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
  std::array<PlanDev, 2> plan;  ///< [0]: y = S·x (by rows), [1]: y = Sᵀ·x (by columns)

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
    if (dv.use_plan) {
      for (int dir = 0; dir < 2; ++dir) {
        const hisparse::Plan p = hisparse::build_plan(h, dir == 1, h.plan_item_cost);
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
        for (int off = 16; off > 0; off >>= 1) p += __shfl_xor_sync(0xffffffffu, p, off);
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
  plan_kernel<Value><<<static_cast<unsigned>(p.items.size()), hisparse_gpu::kPlanBlock>>>(
      pool, p.leaves.data(), p.items.data(), x, y, alpha * dv.scale, beta, by_col, dv.log2d,
      dv.rows, dv.cols);
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
    SPMAT_CUDA_CHECK(cudaMemsetAsync(dv.counters.data(), 0, dv.counters.bytes()));
  for (int l = 0; l + 1 < dv.depth; ++l) {
    const long long n = dv.inner_count[l];  // > 0: every inner level of a non-empty tree
    const unsigned grid = cuda::grid_for(n * 32, hisparse_gpu::kInnerBlock);
    unsigned long long* cnt = dv.counters.data() + 4 * l;
    if (l + 2 == dv.depth) {
      inner_kernel<true><<<grid, hisparse_gpu::kInnerBlock>>>(pool, dv.inner_q[l].data(), n,
                                                              nullptr, lq, cnt, dv.log2d);
    } else {
      inner_kernel<false><<<grid, hisparse_gpu::kInnerBlock>>>(
          pool, dv.inner_q[l].data(), n, dv.inner_q[l + 1].data(), lq, cnt, dv.log2d);
    }
    SPMAT_CUDA_CHECK_LAUNCH("hisparse inner_kernel");
  }
  const std::int64_t* lc = dv.leaf_count.data();
  constexpr int B = hisparse_gpu::kLeafBlock;
  if (lc[hisparse::cls_one] > 0) {
    coo_leaf_kernel<1, Value><<<cuda::grid_for(lc[1], B), B>>>(pool, lq.q[1], lc[1], x, y, alpha,
                                                               by_col, dv.log2d);
    SPMAT_CUDA_CHECK_LAUNCH("hisparse coo_leaf_kernel<1>");
  }
  if (lc[hisparse::cls_warp] > 0) {
    coo_leaf_kernel<32, Value><<<cuda::grid_for(lc[2] * 32, B), B>>>(pool, lq.q[2], lc[2], x, y,
                                                                     alpha, by_col, dv.log2d);
    SPMAT_CUDA_CHECK_LAUNCH("hisparse coo_leaf_kernel<32>");
  }
  if (lc[hisparse::cls_block] > 0) {
    coo_leaf_kernel<B, Value><<<cuda::grid_for(lc[3] * B, B), B>>>(pool, lq.q[3], lc[3], x, y,
                                                                   alpha, by_col, dv.log2d);
    SPMAT_CUDA_CHECK_LAUNCH("hisparse coo_leaf_kernel<block>");
  }
  if (lc[hisparse::cls_dense] > 0) {
    const int threads = (1 << dv.log2d) < 32 ? 32 : (1 << dv.log2d);
    dense_leaf_kernel<Value><<<cuda::grid_for(lc[0] * threads, threads), threads>>>(
        pool, lq.q[0], lc[0], x, y, alpha, by_col, dv.log2d, dv.rows, dv.cols);
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
  std::size_t storage_bytes() const override { return pool_bytes_; }
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
    Proto c = hisparse_gpu::add_device(proto(), a.transposed && !both, bp->proto(),
                                       b.transposed && !both, alpha * a.scale, beta * b.scale,
                                       static_cast<std::int64_t>(meta.rows),
                                       static_cast<std::int64_t>(meta.cols));
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
  cuda::DeviceBuffer<hisparse::Chunk> dpool_;  ///< add results: the pool on the device
  mutable std::unique_ptr<Dev> dev_;
  mutable std::unique_ptr<Proto> proto_;
};

template <class Value, class Index>
std::unique_ptr<MatrixImpl<Value>> make_cuda_impl(HiSparse<Value, Index>&& host) {
  return std::make_unique<HiSparseCudaImpl<Value, Index>>(std::move(host));
}

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
