// spmat/cuda/primitives.cuh — warp-level building blocks shared by the CUDA kernels of all formats.
// SPDX-License-Identifier: MIT
//
// Device-only (include from .cu files). Every function here must be called by all lanes of the
// warp (or of the `width`-lane group) with the same control flow: they shuffle with a full mask.
// Results are deterministic: the reduction trees are fixed, so the same inputs give the same bits.
#pragma once
#include <cstdint>

namespace spmat::cuda {

inline constexpr int kWarpSize = 32;
inline constexpr unsigned kFullMask = 0xffffffffu;

/// Lane index within the warp (0..31).
__device__ __forceinline__ int lane_id() { return static_cast<int>(threadIdx.x) & (kWarpSize - 1); }

/// Sum of `v` over each group of `width` consecutive lanes (width a power of two, 1..32); the
/// total is returned in every lane of the group. Butterfly (xor) tree: fixed order.
/// Example: width 4, lanes 0..3 hold 1,2,3,4 → each of them returns 10.
template <class Value>
__device__ __forceinline__ Value warp_sum(Value v, int width = kWarpSize) {
  for (int offset = width / 2; offset > 0; offset /= 2)
    v += __shfl_xor_sync(kFullMask, v, offset, width);
  return v;
}

/// Inclusive segmented sum over the 32 lanes. A segment is a run of consecutive lanes starting
/// at a lane whose `head` is true (lane 0 always starts one). Each lane returns the sum of `v`
/// over the lanes from its segment's first lane up to itself (Hillis–Steele scan, 5 steps), so
/// the last lane of a segment holds the segment total.
/// Example: heads 1,0,0,1,0 and v 1,2,3,4,5 on lanes 0..4 → 1,3,6,4,9.
template <class Value>
__device__ __forceinline__ Value warp_segmented_inclusive_sum(bool head, Value v) {
  const int lane = lane_id();
  // First lane of my segment: the highest head flag at or below my lane.
  const unsigned heads = __ballot_sync(kFullMask, head) | 1u;
  const unsigned at_or_below = heads & (kFullMask >> (kWarpSize - 1 - lane));
  const int seg_start = kWarpSize - 1 - __clz(at_or_below);
  for (int offset = 1; offset < kWarpSize; offset *= 2) {
    const Value other = __shfl_up_sync(kFullMask, v, offset);
    if (lane - offset >= seg_start) v += other;
  }
  return v;
}

/// Segmented sum keyed by `key` (segments = runs of equal keys in consecutive lanes, e.g. the
/// sorted row indices of COO entries). Returns the inclusive segmented sum (see above) and sets
/// `*is_tail` when this lane is the last of its run within the warp (lane 31 always is).
/// Example: keys 7,7,9,9,9 and v 1,2,3,4,5 → 1,3,3,7,12; tails on lanes 1 and 4 (and 31).
template <class Key, class Value>
__device__ __forceinline__ Value warp_segmented_sum(Key key, Value v, bool* is_tail) {
  const int lane = lane_id();
  const Key prev = __shfl_up_sync(kFullMask, key, 1);
  const Key next = __shfl_down_sync(kFullMask, key, 1);
  *is_tail = lane == kWarpSize - 1 || next != key;
  return warp_segmented_inclusive_sum(lane == 0 || prev != key, v);
}

/// BLAS epilogue on the device: alpha*s + beta*(*y), where beta == 0 never reads *y
/// (NaN poison in y must not reach the result). Mirrors spmat::axpby_store (core/parallel.hpp) on the host.
template <class Value>
__device__ __forceinline__ void device_axpby_store(Value* y, Value alpha, Value s, Value beta) {
  *y = beta == Value(0) ? alpha * s : alpha * s + beta * *y;
}

/// Launch helpers for grid-stride loops: the first global thread index and the stride, in 64 bits.
__device__ __forceinline__ std::int64_t global_thread_id() {
  return static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
}
__device__ __forceinline__ std::int64_t grid_thread_count() {
  return static_cast<std::int64_t>(gridDim.x) * blockDim.x;
}

/// Blocks for `n` work items of `per_block` each, clamped to [1, 2^31-1] (grid.x limit); kernels
/// use grid-stride loops so a clamped grid still covers every item.
inline unsigned grid_for(std::int64_t n, int per_block) {
  const std::int64_t b = (n + per_block - 1) / per_block;
  return static_cast<unsigned>(b < 1 ? 1 : (b > 0x7fffffff ? 0x7fffffff : b));
}

}  // namespace spmat::cuda
