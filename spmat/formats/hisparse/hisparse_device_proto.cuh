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

/// The work memory of the GPU add, the device serializer and the GPU build: spmat's scratch
/// pool (cuda::ScratchBuffer, stream-ordered, freed memory kept cached for the next add). The
/// proto and pool of an add result are allocated and freed every timed add, and cudaMalloc /
/// cudaFree (which synchronizes the device) would dominate small adds. Every user of this memory
/// works on cuda::stream() (kernels, copies, CUB), which orders it with the stream-ordered
/// allocation; the add, the build and the serializer that fill it finish before they return,
/// so a buffer freed later on another stream is no longer in use.
template <class T>
using PoolBuffer = cuda::ScratchBuffer<T>;

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
