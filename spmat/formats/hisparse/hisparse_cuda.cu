// spmat/formats/hisparse/hisparse_cuda.cu — CUDA SpMV and SpMVᵀ of HiSparse: level-by-level
// top-down traversal with per-(type, size class) queues, host launches per level and queue.
// SPDX-License-Identifier: MIT
//
// Scheduler (spec §4, open question 5): CUDA 13 has no device-side cudaDeviceSynchronize, so the
// Whippetree controller with dynamic parallelism is replaced by host launches, one per inner
// level and one per non-empty leaf queue (at most depth − 1 + 4 launches, no read-back). The
// tree is static, so every queue's length is known on the host from the build statistics
// (LevelStats): queues are allocated once in upload, no launch is ever sized 0, and nothing is
// copied back between levels. A persistent kernel would save the launch gaps (~2–4 µs each) but
// needs a grid-wide barrier per level; with ≤ 4 levels for d = 128 that is not worth it yet.
//
// Queues: inner level l holds work items {node pointer, block row, block column} (stored
// frame); level 0 holds the root (written in upload). The last inner level pushes each child
// into the leaf queue of its class: dense, 1 entry, 2..32 entries, > 32 entries (spec §5).
// Thread mapping: inner node → one warp (lanes stride over entries or the d² dense slots);
// leaf with 1 entry → one thread; ≤ 32 → one warp; > 32 → a 128-thread block looping; dense
// leaf → one thread per row (per column for the transposed product) summing in a register.
//
// Contract: x has cols entries, y rows entries (spmv_t: swapped), device memory of the caller.
// y = beta·y first (beta == 0 writes zeros, never reads y; beta == 1 skips it), then every leaf
// entry atomically adds alpha·scale·v·x. Floating-point atomics: NOT deterministic (caps say
// so). Transposition (the op and the state flag) swaps the roles of row and column at the
// leaves; traversal is in the stored frame. Explicit zeros are multiplied like any entry.
// Offsets into the pool and block coordinates are 64-bit.
// Bytes: the pool once + x gathered + y atomically updated (≈ traffic_bytes).
#include <array>
#include <cstdint>
#include <vector>

#include "spmat/cuda/buffer.hpp"
#include "spmat/cuda/device_impl.hpp"
#include "spmat/cuda/primitives.cuh"
#include "spmat/formats/hisparse/hisparse.hpp"

namespace spmat {

namespace hisparse_gpu {
struct Item {
  std::uint32_t ptr;
  std::uint32_t unused;
  long long brow, bcol;
};
constexpr int kInnerBlock = 128;  ///< 4 warps, one inner node per warp
constexpr int kLeafBlock = 128;   ///< > 32-entry leaves: one block each (spec §5)

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

template <class Value, class Index>
void run(const HiSparseDevice<Value, Index>& dv, const Value* x, Value* y, Value alpha, Value beta,
         bool by_col) {
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

template <class Value, class Index>
std::unique_ptr<MatrixImpl<Value>> make_cuda_impl(HiSparse<Value, Index>&& host) {
  return std::make_unique<cuda::DeviceImpl<HiSparse<Value, Index>, HiSparseDevice<Value, Index>>>(
      std::move(host));
}

#define SPMAT_INSTANTIATE(V, I) \
  template std::unique_ptr<MatrixImpl<V>> make_cuda_impl(HiSparse<V, I>&&);
SPMAT_FOR_EACH_TYPE_PAIR(SPMAT_INSTANTIATE)
#undef SPMAT_INSTANTIATE

}  // namespace spmat
