// spmat/formats/bro_common/bro_device_build.cuh — device pieces shared by the BRO device builders
// (bro-ell, bro-coo, bro-hyb): Γ on the device, a field-at-a-time version of BitPacker writing
// strided symbols, warp reductions of 64-bit integers, and the counters a pass accumulates for
// the host's limits and allocations.
// SPDX-License-Identifier: MIT
#pragma once
#include <cstdint>
#include <vector>

#include "spmat/cuda/buffer.hpp"
#include "spmat/cuda/primitives.cuh"

namespace spmat::bro {

/// Γ(u) of bro_common.hpp for u < 2^32: ⌊log2 u⌋ + 1, Γ(0) = 0.
__device__ __forceinline__ int device_gamma(std::uint32_t u) { return u ? 32 - __clz(u) : 0; }

/// The symbols BitPacker (bro_common.hpp) makes from the same fields, appended a whole field at a
/// time: MSB first, cut into sym_len-bit symbols (32 or 64), the last one zero-padded by finish().
/// Symbol q goes to out[q * stride] (the multiplexed layout of a slice or an interval).
template <class Sym>
struct StridedPacker {
  Sym* out;
  std::int64_t stride;
  int sym_len;
  std::uint64_t cur = 0;  ///< the open symbol's `fill` bits, right-aligned
  int fill = 0;

  __device__ StridedPacker(Sym* o, std::int64_t s, int len) : out(o), stride(s), sym_len(len) {}
  /// Appends the low b bits of v (b in 0..32, v < 2^b). Shifts stay below 64: the open symbol
  /// holds fewer than sym_len bits, and k (the bits that close it) is 1..32.
  __device__ void put(std::uint32_t v, int b) {
    if (b == 0) return;
    if (fill + b < sym_len) {
      cur = (cur << b) | v;
      fill += b;
      return;
    }
    const int k = sym_len - fill;
    emit((cur << k) | (v >> (b - k)));
    fill = b - k;  // 0..31
    cur = fill ? (v & ((1u << fill) - 1u)) : 0u;
  }
  /// Writes the open symbol, zero-padded, if any bits are in it.
  __device__ void finish() {
    if (fill > 0) emit(cur << (sym_len - fill));
    fill = 0;
    cur = 0;
  }

 private:
  __device__ void emit(std::uint64_t w) {
    *out = static_cast<Sym>(w);
    out += stride;
  }
};

/// Maximum and minimum of a 64-bit integer over the 32 lanes of a converged warp (every lane
/// gets the result).
__device__ __forceinline__ std::int64_t warp_max64(std::int64_t v) {
  for (int o = 16; o > 0; o >>= 1) v = max(v, __shfl_xor_sync(cuda::kFullMask, v, o));
  return v;
}
__device__ __forceinline__ std::int64_t warp_min64(std::int64_t v) {
  for (int o = 16; o > 0; o >>= 1) v = min(v, __shfl_xor_sync(cuda::kFullMask, v, o));
  return v;
}
__device__ __forceinline__ std::int64_t warp_sum64(std::int64_t v) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(cuda::kFullMask, v, o);
  return v;
}

/// Non-negative counters a pass adds up with integer atomics (exact and order-free), read by the
/// host in one small download: sums (atomicAdd) and maxima (atomicMax) of per-slice or
/// per-interval quantities. Scratch memory: a temporary of one build on stream().
struct DeviceCounters {
  cuda::ScratchBuffer<unsigned long long> c;
  DeviceCounters(std::size_t n, const char* what) : c(n, what) { c.fill_bytes(0); }
  unsigned long long* data() { return c.data(); }
  /// The counters as int64 (synchronizes).
  std::vector<std::int64_t> read() const {
    const std::vector<unsigned long long> h = c.download();
    return std::vector<std::int64_t>(h.begin(), h.end());
  }
};

__device__ __forceinline__ void counter_add(unsigned long long* c, std::int64_t v) {
  if (v != 0) atomicAdd(c, static_cast<unsigned long long>(v));
}
__device__ __forceinline__ void counter_max(unsigned long long* c, std::int64_t v) {
  if (v > 0) atomicMax(c, static_cast<unsigned long long>(v));
}

}  // namespace spmat::bro
