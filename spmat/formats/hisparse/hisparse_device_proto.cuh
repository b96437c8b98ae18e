// spmat/formats/hisparse/hisparse_device_proto.cuh — the proto tree of HiSparse on the device,
// the GPU addition over it and the GPU serializer (hisparse_add_cuda.cu). CUDA builds only.
// SPDX-License-Identifier: MIT
//
// DevProto mirrors hisparse::Proto (hisparse.hpp): per level, nodes in key order with their
// entry ranges (begin), block coordinates and local entry coordinates; leaf values. The child of
// inner entry e is node e of the next level (every Proto that build, decode and add produce
// numbers children in entry order), so no child array is stored.
#pragma once
#include <cstdint>
#include <vector>

#include "spmat/cuda/buffer.hpp"
#include "spmat/formats/hisparse/hisparse.hpp"

namespace spmat::hisparse_gpu {

struct DevLevel {
  std::int64_t nodes = 0, entries = 0;
  cuda::DeviceBuffer<std::int64_t> begin;       ///< nodes + 1
  cuda::DeviceBuffer<std::int64_t> brow, bcol;  ///< nodes
  cuda::DeviceBuffer<std::uint8_t> lr, lc;      ///< entries
};

template <class Value>
struct DevProto {
  std::int64_t rows = 0, cols = 0;
  int log2d = 7, depth = 1;
  std::vector<DevLevel> levels;       ///< depth levels, or none when empty
  cuda::DeviceBuffer<Value> values;   ///< leaf entries
  /// Uploads a host proto (throws InternalError if a child index is not its entry index).
  static DevProto upload(const hisparse::Proto<Value>& t);
};

/// A pool laid out on the device by serialize_device, with what the host struct needs.
struct DevPool {
  cuda::DeviceBuffer<hisparse::Chunk> pool;
  std::uint32_t root = hisparse::kNull;
  std::vector<hisparse::LevelStats> stats;  ///< depth entries
  std::int64_t nnz = 0;
};

/// C = ca·op(A) + cb·op(B) on the stored protos (op = transpose where ta / tb): the
/// level-synchronous dual traversal (hisparse_add_cuda.cu). rows/cols: C's stored shape.
/// merge: place candidates by merge path (option add=merge, default); false: radix sort all
/// candidates of a level (add=sort, the round-2 path). Both give the same proto.
template <class Value>
DevProto<Value> add_device(const DevProto<Value>& a, bool ta, const DevProto<Value>& b, bool tb,
                           Value ca, Value cb, std::int64_t rows, std::int64_t cols, bool merge);

/// The pool of `t`, byte-identical to hisparse::serialize on the host copy of `t`.
template <class Value>
DevPool serialize_device(const DevProto<Value>& t, bool allow_dense);

}  // namespace spmat::hisparse_gpu
