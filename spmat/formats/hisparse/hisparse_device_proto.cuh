// spmat/formats/hisparse/hisparse_device_proto.cuh — the proto tree of HiSparse on the device,
// the GPU addition over it and the GPU serializer (hisparse_add_cuda.cu). CUDA builds only.
// SPDX-License-Identifier: MIT
//
// DevProto mirrors hisparse::Proto (hisparse.hpp): per level, nodes in key order with their
// entry ranges (begin), block coordinates and local entry coordinates; leaf values. The child of
// inner entry e is node e of the next level (every Proto that build, decode and add produce
// numbers children in entry order), so no child array is stored.
#pragma once
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "spmat/cuda/buffer.hpp"
#include "spmat/formats/hisparse/hisparse.hpp"

namespace spmat::hisparse_gpu {

/// The stream-ordered memory pool of the current device that the GPU add, the device
/// serializer and the GPU build allocate from (hisparse_add_cuda.cu; release threshold = max,
/// so freed memory stays cached for the next add). nullptr where memory pools are unsupported.
cudaMemPool_t work_pool();
/// Allocates `bytes` from work_pool() ordered on cuda::stream() (cudaMalloc where pools are
/// unsupported); throws OutOfMemoryError naming `what`. *pooled says which. Counted in spmat's
/// device-memory accounting like cuda::device_alloc (core/device_memory.hpp).
void* pool_alloc(std::size_t bytes, const char* what, bool* pooled);
/// Frees stream-ordered on cuda::stream() (or cudaFree) what pool_alloc(bytes, ...) returned.
/// Never throws.
void pool_free(void* p, std::size_t bytes, bool pooled) noexcept;

/// Like cuda::DeviceBuffer (the subset the hisparse GPU code uses), but from work_pool(): the
/// proto and pool of an add result are allocated and freed every timed add, and cudaMalloc /
/// cudaFree (which synchronizes the device) would dominate small adds. Every user of this memory
/// works on cuda::stream() (kernels, copies, CUB), which orders it with the stream-ordered
/// allocation; the add, the build and the serializer that fill it finish before they return,
/// so a buffer freed later on another stream is no longer in use. Move-only, uninitialised.
template <class T>
class PoolBuffer {
 public:
  PoolBuffer() = default;
  explicit PoolBuffer(std::size_t n, const char* what = "hisparse work memory") : n_(n) {
    if (n) p_ = static_cast<T*>(pool_alloc(n * sizeof(T), what, &pooled_));
  }
  explicit PoolBuffer(const std::vector<T>& host, const char* what = "hisparse work memory")
      : PoolBuffer(host.size(), what) {
    cuda::copy_to_device(p_, host.data(), n_);
  }
  PoolBuffer(PoolBuffer&& o) noexcept
      : p_(std::exchange(o.p_, nullptr)), n_(std::exchange(o.n_, 0)), pooled_(o.pooled_) {}
  PoolBuffer& operator=(PoolBuffer&& o) noexcept {
    if (this != &o) {
      pool_free(p_, bytes(), pooled_);
      p_ = std::exchange(o.p_, nullptr);
      n_ = std::exchange(o.n_, 0);
      pooled_ = o.pooled_;
    }
    return *this;
  }
  PoolBuffer(const PoolBuffer&) = delete;
  PoolBuffer& operator=(const PoolBuffer&) = delete;
  ~PoolBuffer() { pool_free(p_, bytes(), pooled_); }
  T* data() { return p_; }
  const T* data() const { return p_; }
  std::size_t size() const { return n_; }
  std::size_t bytes() const { return n_ * sizeof(T); }
  std::vector<T> download() const {
    std::vector<T> h(n_);
    cuda::copy_to_host(h.data(), p_, n_);
    return h;
  }

 private:
  T* p_ = nullptr;
  std::size_t n_ = 0;
  bool pooled_ = false;
};

struct DevLevel {
  std::int64_t nodes = 0, entries = 0;
  PoolBuffer<std::int64_t> begin;       ///< nodes + 1
  PoolBuffer<std::int64_t> brow, bcol;  ///< nodes
  PoolBuffer<std::uint8_t> lr, lc;      ///< entries
  /// entries: the node of each entry (replaces binary searches over begin in the add's
  /// merge, its transposed sort and the serializer). Empty where a producer did not make it
  /// (the GPU build): the kernels then search.
  PoolBuffer<std::int32_t> node;
};

template <class Value>
struct DevProto {
  std::int64_t rows = 0, cols = 0;
  int log2d = 7, depth = 1;
  std::vector<DevLevel> levels;       ///< depth levels, or none when empty
  PoolBuffer<Value> values;           ///< leaf entries
  /// Uploads a host proto (throws InternalError if a child index is not its entry index).
  static DevProto upload(const hisparse::Proto<Value>& t);
};

/// A pool laid out on the device by serialize_device, with what the host struct needs.
struct DevPool {
  PoolBuffer<hisparse::Chunk> pool;
  std::uint32_t root = hisparse::kNull;
  std::vector<hisparse::LevelStats> stats;  ///< depth entries
  std::int64_t nnz = 0;
};

/// C = ca·op(A) + cb·op(B) on the stored protos (op = transpose where ta / tb): the
/// level-synchronous dual traversal (hisparse_add_cuda.cu). rows/cols: C's stored shape.
/// merge: place candidates by merge path (option add=merge, default); false: radix sort all
/// candidates of a level (add=sort). tcount (add=merge_ct, with merge): a
/// transposed operand's per-node order by a warp bitmap count (torder_kernel) instead of a radix
/// sort; d > 128 falls back to the sort. All give the same proto.
template <class Value>
DevProto<Value> add_device(const DevProto<Value>& a, bool ta, const DevProto<Value>& b, bool tb,
                           Value ca, Value cb, std::int64_t rows, std::int64_t cols, bool merge,
                           bool tcount = false);

/// The pool of `t`, byte-identical to hisparse::serialize on the host copy of `t`.
template <class Value>
DevPool serialize_device(const DevProto<Value>& t, bool allow_dense);

}  // namespace spmat::hisparse_gpu
