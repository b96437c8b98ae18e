// spmat/formats/ell/row_length_histogram.cuh — a bounded histogram of lengths on the device, for
// the width rules of hyb and bro-hyb.
// SPDX-License-Identifier: MIT
//
// The rules read the counts of the short lengths only (each caller proves up to which bound B),
// so the lengths from B up share one last bin: B+1 counters instead of longest+1 (two million on
// a power-law matrix), per-block counts in shared memory, and one small download. Two more
// slots carry what a rule may need of the lengths from B up: the sum of their excess over B,
// Σ max(0, len − B), and the longest length.
#pragma once
#include <cstdint>
#include <vector>

#include "spmat/cuda/buffer.hpp"
#include "spmat/cuda/primitives.cuh"

namespace spmat::length_histogram {
namespace {

constexpr int kBlock = 256;
/// Counters a block keeps in shared memory (bound + 3 of them); beyond, global atomics (the
/// lengths then spread over many bins).
constexpr std::int64_t kSharedBins = 2048;

/// Row i's length in CSR offsets.
template <class Index>
struct RowLengths {
  const Index* row_ptr;
  __device__ std::int64_t operator()(std::int64_t i) const {
    return static_cast<std::int64_t>(row_ptr[i + 1]) - static_cast<std::int64_t>(row_ptr[i]);
  }
};
/// Lengths stored in an array.
template <class Index>
struct StoredLengths {
  const Index* len;
  __device__ std::int64_t operator()(std::int64_t i) const { return static_cast<std::int64_t>(len[i]); }
};

/// For i < n, with l = len(i): hist[min(l, bound)] += 1, hist[bound + 1] += max(0, l − bound),
/// hist[bound + 2] = max(hist[bound + 2], l). hist starts at zero.
template <class Len>
__global__ void __launch_bounds__(kBlock)
    length_histogram_kernel(Len len, std::int64_t n, std::int64_t bound,
                            unsigned long long* __restrict__ hist) {
  __shared__ unsigned long long local[kSharedBins];
  const bool shared = bound + 3 <= kSharedBins;
  if (shared)
    for (std::int64_t b = threadIdx.x; b <= bound; b += blockDim.x) local[b] = 0;
  __syncthreads();
  unsigned long long excess = 0, longest = 0;
  // Each thread counts a run of equal bins in a register and adds the run when the bin changes:
  // on a regular matrix every row falls in one bin, and an atomic per row would serialize the
  // whole grid on that counter.
  std::int64_t run_bin = -1;
  unsigned long long run = 0;
  const auto flush = [&] {
    if (run == 0) return;
    if (shared) atomicAdd(&local[run_bin], run);
    else atomicAdd(&hist[run_bin], run);
  };
  for (std::int64_t i = cuda::global_thread_id(); i < n; i += cuda::grid_thread_count()) {
    const std::int64_t l = len(i);
    const std::int64_t b = l < bound ? l : bound;
    excess += static_cast<unsigned long long>(l - b);
    longest = max(longest, static_cast<unsigned long long>(l));
    if (b != run_bin) {
      flush();
      run_bin = b;
      run = 0;
    }
    ++run;
  }
  flush();
  // One atomic per warp for the two tail slots (every lane is here: the loop has ended).
  excess = cuda::subwarp_sum<32>(excess);
  for (int o = 16; o > 0; o >>= 1) longest = max(longest, __shfl_xor_sync(cuda::kFullMask, longest, o));
  if (cuda::lane_id() == 0) {
    if (excess) atomicAdd(&hist[bound + 1], excess);
    if (longest) atomicMax(&hist[bound + 2], longest);
  }
  if (!shared) return;
  __syncthreads();
  for (std::int64_t b = threadIdx.x; b <= bound; b += blockDim.x)
    if (local[b]) atomicAdd(&hist[b], local[b]);
}

/// Queues the histogram of the n lengths `len` with the given bound into hist[0 .. bound + 2]
/// (zeroed here; asynchronous: read it with read_histogram once the stream is done).
template <class Len>
void queue_histogram(Len len, std::int64_t n, std::int64_t bound, unsigned long long* hist) {
  cuda::fill_bytes_async(hist, 0, static_cast<std::size_t>(bound + 3) * sizeof(unsigned long long));
  if (n > 0)
    cuda::launch_grid_for("length_histogram_kernel", length_histogram_kernel<Len>, n, kBlock, len,
                          n, bound, hist);
}

/// A downloaded histogram: count[l] = lengths equal to l for l < bound, count[bound] = lengths
/// of bound or more; excess = Σ max(0, len − bound); longest = the largest length (0 if none).
struct Histogram {
  std::vector<std::int64_t> count;
  std::int64_t excess = 0, longest = 0;
};

/// The histogram of `queue_histogram(..., bound, hist)` from its host copy h (bound + 3 values).
inline Histogram read_histogram(const unsigned long long* h, std::int64_t bound) {
  Histogram r;
  r.count.assign(h, h + bound + 1);
  r.excess = static_cast<std::int64_t>(h[bound + 1]);
  r.longest = static_cast<std::int64_t>(h[bound + 2]);
  return r;
}

/// The histogram of the n lengths `len` with the given bound: queued, then downloaded (one wait).
template <class Len>
Histogram histogram(Len len, std::int64_t n, std::int64_t bound, const char* what) {
  cuda::ScratchBuffer<unsigned long long> hist(static_cast<std::size_t>(bound) + 3, what);
  queue_histogram(len, n, bound, hist.data());
  const std::vector<unsigned long long> h = hist.download();
  return read_histogram(h.data(), bound);
}

}  // namespace
}  // namespace spmat::length_histogram
