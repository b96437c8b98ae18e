// spmat/formats/hisparse/hisparse_add_cuda.cu — GPU addition C = ca·op(A) + cb·op(B) of HiSparse
// and the GPU serializer: the result pool is byte-identical to the CPU add's (hisparse_cpu.cpp).
// SPDX-License-Identifier: MIT
//
// Launch strategy: level-synchronous, host-driven (CUDA 13 has no device-side synchronize, and
// every level needs the previous level's totals to size its arrays). Top-down, per level l:
//   queue   result nodes of level l in key order: (A node or −1, B node or −1, block coords)
//   count   per result node: entries of its A node + entries of its B node      (1 thread/node)
//   scan    exclusive sum of the counts (CUB) -> candidate offsets; total M read back
//   expand  one thread per candidate: key = (node, local position in C's frame, source)
//   sort    CUB radix sort of the M candidates by key (merges the two sorted lists of every node
//           and sorts a transposed operand's column-major entries), the operand entry as value
//   head    1 where a candidate starts a new (node, position); scan -> entry index, total E
//           (the flags are computed inside the scan from the keys, no array)
//   fill    one thread per head: C's local coords; a leaf value ca·a + cb·b (a position in both
//           operands: the A candidate is followed by the B one); an inner entry becomes the
//           next level's queue element (the children of operand entry x is node x of the next
//           level), so one-sided subtrees simply keep −1 on one side all the way down.
// Entries are allocated by scans in key order, not by an atomic counter (the spec's pool
// allocation): an atomic counter would place nodes in arrival order and the pool could not be
// byte-identical to the CPU result without a compaction pass.
// The serializer (serialize_device) runs the CPU serializer's two passes on the device: per
// level one thread per node picks type and size (the CPU rule, hisparse_add_steps.hpp), a scan
// gives byte offsets in level order; then one thread per entry writes coordinates, values and
// child pointers into the zeroed pool (pads stay 0, as on the CPU).
// Arithmetic: ca·a + cb·b with __fmul_rn/__fadd_rn (no FMA contraction), the CPU's expression.
// Host syncs: one 8-byte read-back per level (E; M is known on the host: every operand entry of
// the level is a candidate exactly once) + one per level in the serializer.
// Work arrays (queues, keys, heads, CUB temporaries, serializer sizes) come from a stream-ordered
// memory pool private to this file (cudaMallocFromPoolAsync / cudaFreeAsync on cuda::stream(),
// release threshold = max), so neither the levels nor repeated adds pay cudaMalloc or
// the implicit synchronization of cudaFree; the pool keeps the peak work memory of the largest
// add cached for the process. The arrays that become the result (the sum's proto
// levels and values, its pool) come from the same pool (PoolBuffer), so the timed add and the
// destruction of the previous sum make no cudaMalloc / cudaFree either.
// Devices without memory-pool support fall back to cudaMalloc/cudaFree.
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "spmat/cuda/check.hpp"
#include "spmat/cuda/primitives.cuh"
#include "spmat/formats/hisparse/hisparse_add_steps.hpp"
#include "spmat/formats/hisparse/hisparse_device_proto.cuh"
#include "spmat/formats/hisparse/hisparse_device_util.cuh"

namespace spmat::hisparse_gpu {

namespace {

namespace st = hisparse::steps;
constexpr int kBlock = 256;

__device__ __forceinline__ float mul_rn(float a, float b) { return __fmul_rn(a, b); }
__device__ __forceinline__ double mul_rn(double a, double b) { return __dmul_rn(a, b); }
__device__ __forceinline__ float add_rn(float a, float b) { return __fadd_rn(a, b); }
__device__ __forceinline__ double add_rn(double a, double b) { return __dadd_rn(a, b); }

/// Work arrays: the pooled buffers of hisparse_device_proto.cuh.
template <class T>
using Work = PoolBuffer<T>;

/// Per-phase GPU times of one add / serialize (env SPMAT_HISPARSE_PROFILE=1, off otherwise):
/// cudaEvents recorded on cuda::stream() between the phases; the destructor waits for the
/// last one and prints one line to stderr: each phase's event-to-event milliseconds (GPU time
/// including any idle gap while the host waited on a read-back), their sum, and the host wall
/// time of the whole call. Costs nothing when off.
class Profile {
 public:
  explicit Profile(const char* title) : on_(enabled()), title_(title) {
    if (!on_) return;
    t0_ = std::chrono::steady_clock::now();
    mark("start");
  }
  void mark(const std::string& name) {
    if (!on_) return;
    cudaEvent_t e = nullptr;
    if (cudaEventCreate(&e) != cudaSuccess || cudaEventRecord(e, cuda::stream()) != cudaSuccess) {
      (void)cudaGetLastError();
      return;
    }
    ev_.emplace_back(name, e);
  }
  Profile(const Profile&) = delete;
  Profile& operator=(const Profile&) = delete;
  ~Profile() {
    if (!on_ || ev_.empty()) return;
    mark("end");
    (void)cudaEventSynchronize(ev_.back().second);
    const double wall =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0_).count();
    std::string line = std::string("hisparse ") + title_ + " profile (ms):";
    float sum = 0;
    for (std::size_t i = 1; i < ev_.size(); ++i) {
      float ms = 0;
      (void)cudaEventElapsedTime(&ms, ev_[i - 1].second, ev_[i].second);
      sum += ms;
      char buf[96];
      std::snprintf(buf, sizeof buf, " %s=%.4f", ev_[i].first.c_str(), static_cast<double>(ms));
      line += buf;
    }
    char buf[96];
    std::snprintf(buf, sizeof buf, " | gpu total %.4f, host wall %.4f", static_cast<double>(sum), wall);
    line += buf;
    std::fprintf(stderr, "%s\n", line.c_str());
    for (auto& e : ev_) (void)cudaEventDestroy(e.second);
  }

 private:
  static bool enabled() {
    static const bool on = [] {
      const char* v = std::getenv("SPMAT_HISPARSE_PROFILE");
      return v != nullptr && v[0] != '\0' && std::strcmp(v, "0") != 0;
    }();
    return on;
  }
  bool on_;
  const char* title_;
  std::chrono::steady_clock::time_point t0_;
  std::vector<std::pair<std::string, cudaEvent_t>> ev_;
};

__global__ void count_kernel(const std::int64_t* qa, const std::int64_t* qb,
                             const std::int64_t* a_begin, const std::int64_t* b_begin,
                             std::int64_t n, std::int64_t* cnt) {
  SPMAT_GRID_LOOP(k, n + 1) {
    if (k == n) {
      cnt[k] = 0;
      continue;
    }
    const std::int64_t ia = qa[k], ib = qb[k];
    cnt[k] = (ia >= 0 ? a_begin[ia + 1] - a_begin[ia] : 0) +
             (ib >= 0 ? b_begin[ib + 1] - b_begin[ib] : 0);
  }
}

__global__ void expand_kernel(const std::int64_t* off, std::int64_t n, const std::int64_t* qa,
                              const std::int64_t* qb, const std::int64_t* a_begin,
                              const std::uint8_t* a_lr, const std::uint8_t* a_lc, bool ta,
                              const std::int64_t* b_begin, const std::uint8_t* b_lr,
                              const std::uint8_t* b_lc, bool tb, std::int64_t m,
                              std::uint64_t* keys, std::int64_t* idx) {
  SPMAT_GRID_LOOP(e, m) {
    std::int64_t x = 0;
    keys[e] = st::expand(e, off, n, qa, qb, a_begin, a_lr, a_lc, ta, b_begin, b_lr, b_lc, tb, &x);
    idx[e] = x;
  }
}

__global__ void inv_kernel(const std::int64_t* qa, const std::int64_t* qb, std::int64_t n,
                           std::int64_t* inv_a, std::int64_t* inv_b) {
  SPMAT_GRID_LOOP(k, n) {
    if (inv_a && qa[k] >= 0) inv_a[qa[k]] = k;
    if (inv_b && qb[k] >= 0) inv_b[qb[k]] = k;
  }
}

/// Keys of a transposed operand's entries: (node, output position); values: the entry index.
template <class Key>
__global__ void tkey_kernel(const std::int64_t* begin, const std::int32_t* node, std::int64_t nodes,
                            const std::uint8_t* lr, const std::uint8_t* lc, std::int64_t entries,
                            Key* keys, std::int64_t* vals) {
  SPMAT_GRID_LOOP(x, entries) {
    keys[x] = static_cast<Key>(st::tkey(st::node_at(node, begin, nodes, x), st::out_pos(lr, lc, x, true)));
    vals[x] = x;
  }
}

__global__ void merge_kernel(std::int64_t m, std::int64_t ea, const std::int64_t* off,
                             const std::int64_t* qa, const std::int64_t* qb,
                             const std::int64_t* inv_a, const std::int64_t* inv_b, std::int64_t na,
                             std::int64_t nb, const std::int64_t* a_begin,
                             const std::uint8_t* a_lr, const std::uint8_t* a_lc,
                             const std::int64_t* a_perm, bool ta, const std::int64_t* b_begin,
                             const std::uint8_t* b_lr, const std::uint8_t* b_lc,
                             const std::int64_t* b_perm, bool tb, std::uint64_t* keys,
                             std::int64_t* idx, const std::int32_t* a_node,
                             const std::int32_t* b_node) {
  SPMAT_GRID_LOOP(t, m) {
    st::merge_place(t, ea, off, qa, qb, inv_a, inv_b, na, nb, a_begin, a_lr, a_lc, a_perm, ta,
                    b_begin, b_lr, b_lc, b_perm, tb, keys, idx, a_node, b_node);
  }
}

/// The sorted view of a transposed operand's level (see steps::merge_place): perm[s] = entry.
/// Key is std::uint32_t where the keys fit (16 + ⌈log₂ nodes⌉ ≤ 32 bits: less sort
/// traffic), else std::uint64_t.
template <class Key>
void transposed_sort(const DevLevel& lv, std::int64_t* perm) {
  const std::int64_t e = lv.entries;
  Work<Key> k(static_cast<std::size_t>(e), "the transposed keys"),
      k2(static_cast<std::size_t>(e), "the transposed keys");
  Work<std::int64_t> v(static_cast<std::size_t>(e), "the transposed order");
  tkey_kernel<Key><<<cuda::grid_for(e, kBlock), kBlock, 0, cuda::stream()>>>(
      lv.begin.data(), lv.node.data(), lv.nodes, lv.lr.data(), lv.lc.data(), e, k.data(),
      v.data());
  SPMAT_CUDA_CHECK_LAUNCH("hisparse add tkey_kernel");
  const int end_bit = st::tkey_bits(lv.nodes);
  const auto tmp = cuda::run_cub<Work<unsigned char>>(
      "the sort temporary", [&](void* temp, std::size_t& bytes) {
        return cub::DeviceRadixSort::SortPairs(temp, bytes, k.data(), k2.data(), v.data(), perm,
                                               e, 0, end_bit, cuda::stream());
      });
}

/// add=merge_ct: the sorted view of a transposed operand's level without a sort. One warp per
/// node (grid-stride, warp-uniform): the view index of entry x in node k is begin[k] + the number
/// of the node's entries whose column-major position lc·d + lr is smaller (positions are unique).
///  * n = 1: itself;
///  * n ≤ 32: lane i holds entry i's position and counts the smaller ones over n shuffles;
///  * n > 32: the warp sets one bit per entry in a d²-bit column-major bitmap in shared memory
///    (d ≤ 128: ≤ 512 words), scans the words' popcounts (a lane per 16 words, a warp scan), and
///    each entry's rank is its word's prefix plus the popcount of the lower bits of its word.
/// Any entry order inside a node works; the result equals the stable radix sort of tkey.
constexpr int kTorderWarps = 8;
constexpr int kTorderMaxWords = 512;  // (128 · 128) / 32
__global__ void __launch_bounds__(kTorderWarps * 32)
    torder_kernel(const std::int64_t* __restrict__ begin, std::int64_t nodes,
                  const std::uint8_t* __restrict__ lr, const std::uint8_t* __restrict__ lc,
                  int log2d, std::int64_t* __restrict__ perm) {
  constexpr unsigned kFull = 0xffffffffu;
  __shared__ unsigned bits_all[kTorderWarps][kTorderMaxWords];
  __shared__ unsigned pre_all[kTorderWarps][kTorderMaxWords];
  const int lane = static_cast<int>(threadIdx.x) & 31, warp = static_cast<int>(threadIdx.x) >> 5;
  unsigned* bits = bits_all[warp];
  unsigned* pre = pre_all[warp];
  const int nwords = ((1 << (2 * log2d)) + 31) >> 5;
  const int per = (nwords + 31) >> 5;  // words per lane in the scan
  for (std::int64_t k = static_cast<std::int64_t>(blockIdx.x) * kTorderWarps + warp; k < nodes;
       k += static_cast<std::int64_t>(gridDim.x) * kTorderWarps) {
    const std::int64_t b = begin[k], n = begin[k + 1] - b;
    if (n <= 1) {
      if (n == 1 && lane == 0) perm[b] = b;
      continue;
    }
    if (n <= 32) {
      const unsigned p = lane < n ? (static_cast<unsigned>(lc[b + lane]) << log2d) | lr[b + lane]
                                  : 0xffffffffu;
      int rank = 0;
      for (int j = 0; j < static_cast<int>(n); ++j) rank += __shfl_sync(kFull, p, j) < p ? 1 : 0;
      if (lane < n) perm[b + rank] = b + lane;
      continue;
    }
    for (int w = lane; w < nwords; w += 32) bits[w] = 0u;
    __syncwarp();
    for (std::int64_t i = lane; i < n; i += 32) {
      const unsigned q = (static_cast<unsigned>(lc[b + i]) << log2d) | lr[b + i];
      atomicOr(bits + (q >> 5), 1u << (q & 31u));
    }
    __syncwarp();
    const int w0 = lane * per;
    int own = 0;
    for (int w = w0; w < w0 + per && w < nwords; ++w) own += __popc(bits[w]);
    int run = cuda::warp_inclusive_sum(own) - own;
    for (int w = w0; w < w0 + per && w < nwords; ++w) {
      pre[w] = static_cast<unsigned>(run);
      run += __popc(bits[w]);
    }
    __syncwarp();
    for (std::int64_t i = lane; i < n; i += 32) {
      const unsigned q = (static_cast<unsigned>(lc[b + i]) << log2d) | lr[b + i];
      const unsigned w = q >> 5;
      const unsigned rank = pre[w] + __popc(bits[w] & ((1u << (q & 31u)) - 1u));
      perm[b + rank] = b + i;
    }
    __syncwarp();  // the next node of this warp clears the bitmap
  }
}

Work<std::int64_t> transposed_order(const DevLevel& lv, int log2d, bool tcount) {
  const std::int64_t e = lv.entries;
  Work<std::int64_t> perm(static_cast<std::size_t>(e), "the transposed order");
  if (e == 0) return perm;
  if (tcount && log2d <= 7) {
    const unsigned grid = cuda::grid_cover(lv.nodes, kTorderWarps);
    torder_kernel<<<grid, kTorderWarps * 32, 0, cuda::stream()>>>(lv.begin.data(), lv.nodes,
        lv.lr.data(), lv.lc.data(), log2d, perm.data());
    SPMAT_CUDA_CHECK_LAUNCH("hisparse add torder_kernel");
    return perm;
  }
  if (st::tkey_bits(lv.nodes) <= 32) transposed_sort<std::uint32_t>(lv, perm.data());
  else transposed_sort<std::uint64_t>(lv, perm.data());
  return perm;
}

__global__ void queue_init_kernel(std::int64_t* qa, std::int64_t* qb, std::int64_t* qbr,
                                  std::int64_t* qbc, std::int64_t a0, std::int64_t b0) {
  qa[0] = a0;
  qb[0] = b0;
  qbr[0] = 0;
  qbc[0] = 0;
}

/// 1 where candidate i starts a new (node, position) of the sorted keys (i < m), else 0: the
/// scan's input, computed on the fly (no head array written, read by the scan and read again by
/// fill: 24 B per candidate less).
struct HeadFlag {
  const std::uint64_t* keys;
  std::int64_t m;
  __host__ __device__ std::int64_t operator()(std::int64_t i) const {
    return i < m && (i == 0 || !st::same_position(keys[i], keys[i - 1])) ? 1 : 0;
  }
};

__global__ void begin_kernel(const std::int64_t* off, const std::int64_t* pos, std::int64_t n,
                             std::int64_t* begin) {
  SPMAT_GRID_LOOP(k, n + 1) { begin[k] = pos[off[k]]; }
}

template <class Value>
__global__ void fill_kernel(const std::uint64_t* keys, const std::int64_t* idx,
                            const std::int64_t* head, const std::int64_t* pos, std::int64_t m,
                            const std::int64_t* brow, const std::int64_t* bcol, int log2d,
                            std::uint8_t* lr, std::uint8_t* lc, bool leaf, const Value* av,
                            const Value* bv, Value ca, Value cb, Value* vals, std::int64_t* nqa,
                            std::int64_t* nqb, std::int64_t* nbr, std::int64_t* nbc,
                            std::int32_t* node_out) {
  SPMAT_GRID_LOOP(i, m) {
    if (head ? !head[i] : i > 0 && st::same_position(keys[i], keys[i - 1])) continue;
    const std::int64_t o = pos[i];
    const std::uint64_t key = keys[i];
    if (node_out) node_out[o] = static_cast<std::int32_t>(st::key_node(key));
    const unsigned r = st::key_row(key), c = st::key_col(key);
    lr[o] = static_cast<std::uint8_t>(r);
    lc[o] = static_cast<std::uint8_t>(c);
    const auto [ka, kb] = st::operand_entries(key, keys, idx, i, m);
    if (leaf) {
      vals[o] = ka >= 0 && kb >= 0 ? add_rn(mul_rn(ca, av[ka]), mul_rn(cb, bv[kb]))
                : ka >= 0          ? mul_rn(ca, av[ka])
                                   : mul_rn(cb, bv[kb]);
    } else {
      const std::int64_t k = st::key_node(key);
      nqa[o] = ka;
      nqb[o] = kb;
      nbr[o] = (brow[k] << log2d) + r;
      nbc[o] = (bcol[k] << log2d) + c;
    }
  }
}

/// Per node: type and bytes (the CPU rule) and the level statistics. The statistics
/// are aggregated per warp (ballots and __reduce_add_sync), then per block in shared memory, and
/// each block adds its 12 counters to `stats` once at the end. 3 global atomics per node on
/// 12 addresses would serialize: 42 M same-address atomics on random_k:500000:16's
/// 14 M result leaves. The loop's trip count is block-uniform, so every warp is converged at the
/// ballots. Launch with blockDim a multiple of 32.
__global__ void size_kernel(const std::int64_t* begin, const std::int64_t* brow,
                            const std::int64_t* bcol, std::int64_t n, bool leaf,
                            std::int64_t rows, std::int64_t cols, int log2d, std::uint64_t es,
                            bool allow_dense, std::uint64_t* sz, std::uint8_t* type,
                            unsigned long long* stats) {
  constexpr unsigned kFull = 0xffffffffu;
  __shared__ unsigned long long sh[12];
  for (int j = static_cast<int>(threadIdx.x); j < 12; j += static_cast<int>(blockDim.x)) sh[j] = 0;
  __syncthreads();
  const unsigned lane = threadIdx.x & 31u;
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t base = static_cast<std::int64_t>(blockIdx.x) * blockDim.x; base < n + 1;
       base += stride) {
    const std::int64_t i = base + threadIdx.x;
    bool valid = false;
    unsigned t = 0, cls = 0, cnt32 = 0;
    if (i < n) {
      const std::int64_t cnt = begin[i + 1] - begin[i];
      std::uint64_t b = 0;
      t = st::node_type(cnt, leaf, brow[i], bcol[i], rows, cols, log2d, es, allow_dense, &b);
      sz[i] = b;
      type[i] = static_cast<std::uint8_t>(t);
      cls = static_cast<unsigned>(st::size_class(t, cnt));
      cnt32 = static_cast<unsigned>(cnt);  // <= d² = 65536; a warp's sum < 2^32
      valid = true;
    } else if (i == n) {
      sz[i] = 0;
    }
#pragma unroll
    for (unsigned k = 0; k < 4; ++k) {
      const unsigned mt = __ballot_sync(kFull, valid && t == k);
      if (mt) {  // warp-uniform
        const unsigned e = __reduce_add_sync(kFull, valid && t == k ? cnt32 : 0u);
        if (lane == 0) {
          atomicAdd(sh + k, static_cast<unsigned long long>(__popc(mt)));
          atomicAdd(sh + 4 + k, static_cast<unsigned long long>(e));
        }
      }
      const unsigned mc = __ballot_sync(kFull, valid && cls == k);
      if (mc && lane == 0) atomicAdd(sh + 8 + k, static_cast<unsigned long long>(__popc(mc)));
    }
  }
  __syncthreads();
  for (int j = static_cast<int>(threadIdx.x); j < 12; j += static_cast<int>(blockDim.x))
    if (sh[j]) atomicAdd(stats + j, sh[j]);
}

/// bases[l] = byte offset of level l in the pool, kept on the device (no read-back per level);
/// ptr_kernel reads it.
__global__ void ptr_kernel(const std::uint64_t* noff, const std::uint8_t* type,
                           const std::uint64_t* base_at, std::int64_t n, std::uint32_t* ptr) {
  const std::uint64_t base = *base_at;
  SPMAT_GRID_LOOP(i, n) { ptr[i] = st::encode(base + noff[i], type[i]); }
}

/// bases[l + 1] = bases[l] + bytes of level l (noff[n], the scan's total); l = -1: the header.
__global__ void level_base_kernel(std::uint64_t* bases, std::int64_t l, const std::uint64_t* total,
                                  std::uint64_t header_bytes) {
  if (l < 0) bases[0] = header_bytes;
  else bases[l + 1] = bases[l] + *total;
}

/// out[0] = pool bytes, out[1] = the root pointer (the one read-back of the serializer).
__global__ void pool_total_kernel(const std::uint64_t* end_base, const std::uint32_t* root_ptr,
                                  std::uint32_t null_ptr, std::uint64_t* out) {
  out[0] = *end_base;
  out[1] = root_ptr ? *root_ptr : null_ptr;
}

__global__ void header_kernel(std::uint8_t* pool, std::uint32_t root, unsigned depth,
                              unsigned log2d, unsigned es, std::uint64_t nnz) {
  *reinterpret_cast<std::uint32_t*>(pool) = root;
  pool[4] = static_cast<std::uint8_t>(depth);
  pool[5] = static_cast<std::uint8_t>(log2d);
  pool[6] = static_cast<std::uint8_t>(es);
  pool[7] = 0;
  *reinterpret_cast<std::uint64_t*>(pool + 8) = nnz;
}

template <class Value>
__global__ void pool_fill_kernel(const std::int64_t* begin, const std::int32_t* node_of,
                                 const std::uint8_t* lr, const std::uint8_t* lc, std::int64_t n,
                                 std::int64_t entries,
                                 const std::uint32_t* ptr, const std::uint32_t* next_ptr,
                                 const Value* vals, bool leaf, int log2d, std::uint8_t* pool) {
  const std::uint64_t es = leaf ? sizeof(Value) : 4;
  SPMAT_GRID_LOOP(e, entries) {
    const std::int64_t i = st::node_at(node_of, begin, n, e);
    const std::int64_t b = begin[i], cnt = begin[i + 1] - b, j = e - b;
    const std::uint32_t p = ptr[i];
    const unsigned t = p & 3u;
    std::uint8_t* node = pool + (static_cast<std::uint64_t>(p >> 2) << 4);
    if (t != 0) {
      if (j == 0) *reinterpret_cast<std::uint32_t*>(node) = static_cast<std::uint32_t>(cnt);
      node[8 + 2 * j] = lr[e];
      node[9 + 2 * j] = lc[e];
    }
    std::uint8_t* at = node + st::entry_offset(t, cnt, j, lr[e], lc[e], log2d, es);
    if (leaf) *reinterpret_cast<Value*>(at) = vals[e];
    else *reinterpret_cast<std::uint32_t*>(at) = next_ptr[e];
  }
}

}  // namespace

template <class Value>
DevProto<Value> DevProto<Value>::upload(const hisparse::Proto<Value>& t) {
  DevProto p;
  p.rows = t.rows;
  p.cols = t.cols;
  p.log2d = t.log2d;
  p.depth = t.depth;
  for (std::size_t l = 0; l < t.levels.size(); ++l) {
    const hisparse::ProtoLevel& lv = t.levels[l];
    for (std::size_t k = 0; k < lv.child.size(); ++k)
      if (lv.child[k] != static_cast<std::int64_t>(k))
        throw InvalidMatrixError("hisparse: proto child " + std::to_string(k) + " of level " +
                                 std::to_string(l) + " is not numbered in entry order");
    DevLevel d;
    d.nodes = lv.nodes();
    d.entries = static_cast<std::int64_t>(lv.lr.size());
    d.begin = PoolBuffer<std::int64_t>(lv.begin, "hisparse proto begin");
    d.brow = PoolBuffer<std::int64_t>(lv.brow, "hisparse proto brow");
    d.bcol = PoolBuffer<std::int64_t>(lv.bcol, "hisparse proto bcol");
    d.lr = PoolBuffer<std::uint8_t>(lv.lr, "hisparse proto lr");
    d.lc = PoolBuffer<std::uint8_t>(lv.lc, "hisparse proto lc");
    if (d.nodes < INT32_MAX) {
      std::vector<std::int32_t> node_of(static_cast<std::size_t>(d.entries));
      for (std::int64_t k = 0; k < d.nodes; ++k)
        for (std::int64_t e = lv.begin[k]; e < lv.begin[k + 1]; ++e)
          node_of[static_cast<std::size_t>(e)] = static_cast<std::int32_t>(k);
      d.node = PoolBuffer<std::int32_t>(node_of, "hisparse proto node");
    }
    p.levels.push_back(std::move(d));
  }
  p.values = PoolBuffer<Value>(t.values, "hisparse proto values");
  return p;
}

template <class Value>
DevProto<Value> add_device(const DevProto<Value>& A, bool ta, const DevProto<Value>& B, bool tb,
                           Value ca, Value cb, std::int64_t rows, std::int64_t cols,
                           bool merge, bool tcount) {
  DevProto<Value> C;
  C.rows = rows;
  C.cols = cols;
  C.log2d = A.log2d;
  C.depth = A.depth;
  const bool ea = A.levels.empty(), eb = B.levels.empty();
  if (ea && eb) return C;
  Profile prof("add");
  using I64 = PoolBuffer<std::int64_t>;
  using W64 = Work<std::int64_t>;
  W64 qa(1, "the queue"), qb(1, "the queue");
  I64 qbr(1, "hisparse add queue"), qbc(1, "hisparse add queue");
  // The root queue element by a kernel: a cudaMemcpy from the host would synchronize.
  queue_init_kernel<<<1, 1, 0, cuda::stream()>>>(qa.data(), qb.data(), qbr.data(), qbc.data(),
      ea ? -1 : 0, eb ? -1 : 0);
  SPMAT_CUDA_CHECK_LAUNCH("hisparse add queue_init_kernel");
  std::int64_t n = 1;
  prof.mark("init");
  for (int l = 0; l < C.depth; ++l) {
    const bool leaf = l + 1 == C.depth;
    const std::string L = "L" + std::to_string(l) + ".";
    const DevLevel* la = ea ? nullptr : &A.levels[l];
    const DevLevel* lb = eb ? nullptr : &B.levels[l];
    W64 cnt(static_cast<std::size_t>(n + 1), "the counts");
    W64 off(static_cast<std::size_t>(n + 1), "the offsets");
    count_kernel<<<cuda::grid_for(n + 1, kBlock), kBlock, 0, cuda::stream()>>>(
        qa.data(), qb.data(), la ? la->begin.data() : nullptr, lb ? lb->begin.data() : nullptr, n,
        cnt.data());
    SPMAT_CUDA_CHECK_LAUNCH("hisparse add count_kernel");
    exclusive_scan<Work<unsigned char>>(cnt.data(), off.data(), n + 1, "the scan temporary");
    // Every entry of every operand node of this level is a candidate exactly once (the queue
    // holds each operand node once), so M = off[n] is known without a read-back.
    const std::int64_t m = (la ? la->entries : 0) + (lb ? lb->entries : 0);
    prof.mark(L + "count");
    Work<std::uint64_t> keys2(static_cast<std::size_t>(m), "the keys");
    W64 idx2(static_cast<std::size_t>(m), "the indices");
    if (merge) {
      // keys2/idx2 = the candidates in key order, placed by merge path (no sort of M).
      W64 inv_a(la ? static_cast<std::size_t>(la->nodes) : 0, "the node map");
      W64 inv_b(lb ? static_cast<std::size_t>(lb->nodes) : 0, "the node map");
      inv_kernel<<<cuda::grid_for(n, kBlock), kBlock, 0, cuda::stream()>>>(qa.data(), qb.data(), n,
          inv_a.data(), inv_b.data());
      SPMAT_CUDA_CHECK_LAUNCH("hisparse add inv_kernel");
      W64 pa, pb;
      if (la && ta) pa = transposed_order(*la, C.log2d, tcount);
      if (lb && tb) pb = transposed_order(*lb, C.log2d, tcount);
      prof.mark(L + "tsort");
      merge_kernel<<<cuda::grid_for(m, kBlock), kBlock, 0, cuda::stream()>>>(
          m, la ? la->entries : 0, off.data(), qa.data(), qb.data(), inv_a.data(), inv_b.data(),
          la ? la->nodes : 0, lb ? lb->nodes : 0, la ? la->begin.data() : nullptr,
          la ? la->lr.data() : nullptr, la ? la->lc.data() : nullptr, pa.data(), ta,
          lb ? lb->begin.data() : nullptr, lb ? lb->lr.data() : nullptr,
          lb ? lb->lc.data() : nullptr, pb.data(), tb, keys2.data(), idx2.data(),
          la ? la->node.data() : nullptr, lb ? lb->node.data() : nullptr);
      SPMAT_CUDA_CHECK_LAUNCH("hisparse add merge_kernel");
      prof.mark(L + "merge");
    } else {
      // add=sort: expand all candidates, radix sort them by key.
      Work<std::uint64_t> keys(static_cast<std::size_t>(m), "the keys");
      W64 idx(static_cast<std::size_t>(m), "the indices");
      expand_kernel<<<cuda::grid_for(m, kBlock), kBlock, 0, cuda::stream()>>>(
          off.data(), n, qa.data(), qb.data(), la ? la->begin.data() : nullptr,
          la ? la->lr.data() : nullptr, la ? la->lc.data() : nullptr, ta,
          lb ? lb->begin.data() : nullptr, lb ? lb->lr.data() : nullptr,
          lb ? lb->lc.data() : nullptr, tb, m, keys.data(), idx.data());
      SPMAT_CUDA_CHECK_LAUNCH("hisparse add expand_kernel");
      const int end_bit = hisparse::steps::key_bits(n);
      const auto tmp = cuda::run_cub<Work<unsigned char>>(
          "the sort temporary", [&](void* temp, std::size_t& bytes) {
            return cub::DeviceRadixSort::SortPairs(temp, bytes, keys.data(), keys2.data(),
                                                   idx.data(), idx2.data(), m, 0, end_bit,
                                                   cuda::stream());
          });
      prof.mark(L + "sort");
    }
    W64 pos(static_cast<std::size_t>(m + 1), "the positions");
    {  // pos = exclusive scan of the head flags, computed from the keys inside the scan
      const auto flags = thrust::make_transform_iterator(thrust::counting_iterator<std::int64_t>(0),
                                                         HeadFlag{keys2.data(), m});
      const auto tmp = cuda::run_cub<Work<unsigned char>>(
          "the scan temporary", [&](void* temp, std::size_t& bytes) {
            return cub::DeviceScan::ExclusiveSum(temp, bytes, flags, pos.data(), m + 1,
                                                 cuda::stream());
          });
    }
    const std::int64_t e = read_back(pos.data() + m);
    prof.mark(L + "head+E");
    DevLevel out;
    out.nodes = n;
    out.entries = e;
    out.begin = I64(static_cast<std::size_t>(n + 1), "hisparse proto begin");
    out.lr = PoolBuffer<std::uint8_t>(static_cast<std::size_t>(e), "hisparse proto lr");
    out.lc = PoolBuffer<std::uint8_t>(static_cast<std::size_t>(e), "hisparse proto lc");
    if (n < INT32_MAX)
      out.node = PoolBuffer<std::int32_t>(static_cast<std::size_t>(e), "hisparse proto node");
    begin_kernel<<<cuda::grid_for(n + 1, kBlock), kBlock, 0, cuda::stream()>>>(off.data(),
        pos.data(), n, out.begin.data());
    SPMAT_CUDA_CHECK_LAUNCH("hisparse add begin_kernel");
    W64 nqa, nqb;
    I64 nbr, nbc;
    if (leaf) {
      C.values = PoolBuffer<Value>(static_cast<std::size_t>(e), "hisparse proto values");
    } else {
      nqa = W64(static_cast<std::size_t>(e), "the queue");
      nqb = W64(static_cast<std::size_t>(e), "the queue");
      nbr = I64(static_cast<std::size_t>(e), "hisparse add queue");
      nbc = I64(static_cast<std::size_t>(e), "hisparse add queue");
    }
    fill_kernel<Value><<<cuda::grid_for(m, kBlock), kBlock, 0, cuda::stream()>>>(
        keys2.data(), idx2.data(), nullptr, pos.data(), m, qbr.data(), qbc.data(), C.log2d,
        out.lr.data(), out.lc.data(), leaf, ea ? nullptr : A.values.data(),
        eb ? nullptr : B.values.data(), ca, cb, leaf ? C.values.data() : nullptr, nqa.data(),
        nqb.data(), nbr.data(), nbc.data(), out.node.data());
    SPMAT_CUDA_CHECK_LAUNCH("hisparse add fill_kernel");
    prof.mark(L + "fill");
    out.brow = std::move(qbr);
    out.bcol = std::move(qbc);
    C.levels.push_back(std::move(out));
    qa = std::move(nqa);
    qb = std::move(nqb);
    qbr = std::move(nbr);
    qbc = std::move(nbc);
    n = e;
  }
  return C;
}

template <class Value>
DevPool serialize_device(const DevProto<Value>& t, bool allow_dense) {
  Profile prof("serialize");
  DevPool out;
  out.stats.assign(static_cast<std::size_t>(t.depth), hisparse::LevelStats{});
  out.nnz = static_cast<std::int64_t>(t.values.size());
  const std::size_t nl = t.levels.size();
  std::vector<Work<std::uint32_t>> ptrs(nl);
  Work<unsigned long long> stats(12 * (nl > 0 ? nl : 1), "hisparse stats");
  cuda::fill_bytes_async(stats.data(), 0, stats.bytes());
  Work<std::uint64_t> bases(nl + 1, "the level offsets"), total(2, "the pool total");
  level_base_kernel<<<1, 1, 0, cuda::stream()>>>(bases.data(), -1, nullptr, hisparse::kHeaderBytes);
  SPMAT_CUDA_CHECK_LAUNCH("hisparse level_base_kernel");
  for (std::size_t l = 0; l < nl; ++l) {
    const DevLevel& lv = t.levels[l];
    const bool leaf = l + 1 == nl;
    const std::int64_t n = lv.nodes;
    Work<std::uint64_t> sz(static_cast<std::size_t>(n + 1), "the node sizes");
    Work<std::uint64_t> noff(static_cast<std::size_t>(n + 1), "the node offsets");
    Work<std::uint8_t> type(static_cast<std::size_t>(n), "the node types");
    size_kernel<<<cuda::grid_for(n + 1, kBlock), kBlock, 0, cuda::stream()>>>(
        lv.begin.data(), lv.brow.data(), lv.bcol.data(), n, leaf, t.rows, t.cols, t.log2d,
        leaf ? sizeof(Value) : 4, allow_dense, sz.data(), type.data(), stats.data() + 12 * l);
    SPMAT_CUDA_CHECK_LAUNCH("hisparse size_kernel");
    exclusive_scan<Work<unsigned char>>(sz.data(), noff.data(), n + 1, "the scan temporary");
    ptrs[l] = Work<std::uint32_t>(static_cast<std::size_t>(n), "the node pointers");
    ptr_kernel<<<cuda::grid_for(n, kBlock), kBlock, 0, cuda::stream()>>>(noff.data(), type.data(),
        bases.data() + l, n, ptrs[l].data());
    SPMAT_CUDA_CHECK_LAUNCH("hisparse ptr_kernel");
    level_base_kernel<<<1, 1, 0, cuda::stream()>>>(bases.data(), static_cast<std::int64_t>(l),
        noff.data() + n, hisparse::kHeaderBytes);
    SPMAT_CUDA_CHECK_LAUNCH("hisparse level_base_kernel");
    prof.mark("L" + std::to_string(l) + ".size");
  }
  // One read-back for all levels: pool bytes and root. (A pool past 16 GiB has wrapped pointers
  // in ptrs, which are never used: the check throws first.)
  pool_total_kernel<<<1, 1, 0, cuda::stream()>>>(bases.data() + nl,
      nl > 0 ? ptrs[0].data() : nullptr, hisparse::kNull, total.data());
  SPMAT_CUDA_CHECK_LAUNCH("hisparse pool_total_kernel");
  std::uint64_t tot[2] = {0, 0};
  cuda::copy_to_host(tot, total.data(), 2);
  const std::uint64_t base = tot[0];
  if (base >= hisparse::kMaxPoolBytes)
    throw UnsupportedError("hisparse: the node pool would exceed the 16 GiB that 32-bit node "
                           "pointers address; use a larger d or split the matrix");
  prof.mark("sizes read back");
  out.pool = PoolBuffer<hisparse::Chunk>(base / sizeof(hisparse::Chunk), "hisparse pool");
  cuda::fill_bytes_async(out.pool.data(), 0, out.pool.bytes());
  auto* bytes = reinterpret_cast<std::uint8_t*>(out.pool.data());
  out.root = nl > 0 ? static_cast<std::uint32_t>(tot[1]) : hisparse::kNull;
  // The header by a kernel: a cudaMemcpy from the host would synchronize.
  header_kernel<<<1, 1, 0, cuda::stream()>>>(bytes, out.root, static_cast<unsigned>(t.depth),
                          static_cast<unsigned>(t.log2d), static_cast<unsigned>(sizeof(Value)),
                          static_cast<std::uint64_t>(out.nnz));
  SPMAT_CUDA_CHECK_LAUNCH("hisparse header_kernel");
  prof.mark("alloc+zero+header");
  for (std::size_t l = 0; l < nl; ++l) {
    const DevLevel& lv = t.levels[l];
    const bool leaf = l + 1 == nl;
    pool_fill_kernel<Value><<<cuda::grid_for(lv.entries, kBlock), kBlock, 0, cuda::stream()>>>(
        lv.begin.data(), lv.node.data(), lv.lr.data(), lv.lc.data(), lv.nodes, lv.entries,
        ptrs[l].data(),
        leaf ? nullptr : ptrs[l + 1].data(), leaf ? t.values.data() : nullptr, leaf, t.log2d,
        bytes);
    SPMAT_CUDA_CHECK_LAUNCH("hisparse pool_fill_kernel");
  }
  prof.mark("pool_fill");
  if (nl > 0) {
    const std::vector<unsigned long long> h = stats.download();
    for (std::size_t l = 0; l < nl; ++l)
      for (int k = 0; k < 4; ++k) {
        out.stats[l].nodes_by_type[k] = static_cast<std::int64_t>(h[12 * l + k]);
        out.stats[l].entries_by_type[k] = static_cast<std::int64_t>(h[12 * l + 4 + k]);
        out.stats[l].nodes_by_class[k] = static_cast<std::int64_t>(h[12 * l + 8 + k]);
      }
  }
  return out;
}

#define SPMAT_INSTANTIATE(V)                                                                  \
  template struct DevProto<V>;                                                                \
  template DevProto<V> add_device(const DevProto<V>&, bool, const DevProto<V>&, bool, V, V,   \
                                  std::int64_t, std::int64_t, bool, bool);                          \
  template DevPool serialize_device(const DevProto<V>&, bool);
SPMAT_INSTANTIATE(float)
SPMAT_INSTANTIATE(double)
#undef SPMAT_INSTANTIATE

}  // namespace spmat::hisparse_gpu
