// spmat/cuda/primitives.cuh — shared warp/block primitives and launch helpers for CUDA kernels.
// SPDX-License-Identifier: MIT
//
// Every format's .cu includes this instead of rewriting the same pieces:
//   * launch policy: the stream (every launch is <<<grid, block, smem, cuda::stream()>>>, the
//     caller's spmat::current_stream(), spmat/cuda/buffer.hpp), cached device attributes (SM
//     count), the two grid sizes (grid_for for loops that want a few waves of the device,
//     grid_cover for one thread per item), the grid-stride indices, and launch (with
//     launch_grid_for, launch_grid_cover): a launch and its check in one call; prefer_l1 (the
//     L1 / shared memory split of a kernel that stages tiles while it gathers);
//   * loads: ldg (read-only cached) for reused data, ld_stream (evict-first) for data read once;
//   * epilogues: y = alpha*s + beta*y (axpby_store) and y = beta*y (scale_store, scale_async),
//     both never reading y when beta == 0;
//   * reductions over lanes: subwarp_sum<W>, warp_sum, block_sum (fixed trees: deterministic);
//   * scans over lanes: warp_inclusive_sum (integers, CUB), warp_segmented_inclusive_sum and the
//     keyed warp_segmented_sum (Hillis–Steele, fixed order);
//   * segment_of: the segment (row, chunk) holding an item, from the segments' start offsets;
//   * lower_bound: the first position of a sorted range at or above a value;
//   * merge_path_search: the Merrill–Garland diagonal search over (row ends, nnz indices).
// Floating-point reductions keep their own fixed trees rather than CUB's so that results stay
// bit for bit what the kernels computed before they shared them; integer scans, where the order
// cannot show, use CUB. Names say what they reduce over (subwarp_, warp_, block_).
// primitives_test.cu checks each against a host reference.
#pragma once
#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <set>
#include <cub/warp/warp_scan.cuh>
#include <source_location>
#include <string>
#include <type_traits>
#include <utility>

#include "spmat/cuda/buffer.hpp"
#include "spmat/cuda/check.hpp"

namespace spmat::cuda {

// ---------------------------------------------------------------------------------------------
// Launch policy
// ---------------------------------------------------------------------------------------------

/// Attribute `Attr` of the current device, queried once per thread and device id (the query
/// costs ~µs; launch helpers call this on every launch). Values <= 0 come back as `fallback`.
template <cudaDeviceAttr Attr>
int device_attribute(int fallback) {
  // Per thread: host threads each driving their own stream would race on shared statics.
  thread_local int cached_device = -1;
  thread_local int cached_value = 0;
  int dev = 0;
  SPMAT_CUDA_CHECK(cudaGetDevice(&dev));
  if (dev != cached_device) {
    int v = 0;
    SPMAT_CUDA_CHECK(cudaDeviceGetAttribute(&v, Attr, dev));
    cached_value = v;
    cached_device = dev;
  }
  return cached_value > 0 ? cached_value : fallback;
}

/// Number of SMs of the current device (cudaDevAttrMultiProcessorCount), cached.
inline int sm_count() { return device_attribute<cudaDevAttrMultiProcessorCount>(1); }

/// Blocks for a grid-stride loop over `work_threads` threads of `block` threads each, capped at
/// `waves` full waves of the device (assuming 2048 resident threads per SM, true on sm_70..sm_90).
/// Never returns 0 (callers must not launch when there is no work at all).
inline unsigned grid_for(std::int64_t work_threads, int block, int waves = 4) {
  const std::int64_t need = (work_threads + block - 1) / block;
  const std::int64_t cap = static_cast<std::int64_t>(sm_count()) * (2048 / block) * waves;
  const std::int64_t g = need < cap ? need : cap;
  return static_cast<unsigned>(g > 0 ? g : 1);
}

/// Most blocks grid_cover launches; a grid-stride loop covers the rest.
inline constexpr std::int64_t kMaxCoverBlocks = std::int64_t{1} << 22;

/// Blocks for one thread (or one block share) per item: ceil(items / per_block), at least 1 and
/// at most kMaxCoverBlocks so that the grid is legal for any count. The ELL family, csb/gcsb and
/// hisparse's node kernels launch this way (no cap at a few waves: their threads do one row or
/// node each). Example: grid_cover(257, 256) = 2, grid_cover(0, 256) = 1.
inline unsigned grid_cover(std::int64_t items, std::int64_t per_block) {
  const std::int64_t g = (items + per_block - 1) / per_block;
  return static_cast<unsigned>(g < 1 ? 1 : (g > kMaxCoverBlocks ? kMaxCoverBlocks : g));
}

/// Grid-stride loops: the first global thread index and the stride, in 64 bits.
__device__ __forceinline__ std::int64_t global_thread_id() {
  return static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
}
__device__ __forceinline__ std::int64_t grid_thread_count() {
  return static_cast<std::int64_t>(gridDim.x) * blockDim.x;
}

/// A kernel's name and the place that launches it: what a failed launch reports, as
/// SPMAT_CUDA_CHECK_LAUNCH does on the launching line.
struct LaunchSite {
  const char* kernel;
  std::source_location at;
  // Implicit from the name, so that `at` is the caller's line.
  LaunchSite(const char* kernel_name,  // NOLINT(google-explicit-constructor)
             std::source_location where = std::source_location::current())
      : kernel(kernel_name), at(where) {}
};

/// kernel<<<grid, block, 0, stream()>>>(args...), then the launch checked: a failure throws
/// CudaError naming "launch of `site.kernel`" and the caller's file and line. The arguments
/// convert to the kernel's parameters as in the <<<>>> launch this spells out.
template <class... Params, class... Args>
void launch(LaunchSite site, void (*kernel)(Params...), unsigned grid, unsigned block,
            Args&&... args) {
  kernel<<<grid, block, 0, stream()>>>(std::forward<Args>(args)...);
  const cudaError_t status = cudaGetLastError();
  if (status != cudaSuccess)
    throw_cuda_error(status, ("launch of " + std::string(site.kernel)).c_str(),
                     site.at.file_name(), static_cast<int>(site.at.line()));
}
/// launch on grid_for(work_threads, block) blocks: a grid-stride loop of a few waves.
template <class... Params, class... Args>
void launch_grid_for(LaunchSite site, void (*kernel)(Params...), std::int64_t work_threads,
                     int block, Args&&... args) {
  launch(site, kernel, grid_for(work_threads, block), static_cast<unsigned>(block),
         std::forward<Args>(args)...);
}
/// launch on grid_cover(items, block) blocks: one thread per item.
template <class... Params, class... Args>
void launch_grid_cover(LaunchSite site, void (*kernel)(Params...), std::int64_t items, int block,
                       Args&&... args) {
  launch(site, kernel, grid_cover(items, block), static_cast<unsigned>(block),
         std::forward<Args>(args)...);
}

/// Runs a CUB device-wide algorithm, the CUB way: `call(temp, bytes)` (forwarding to, say,
/// cub::DeviceScan::InclusiveSum(temp, bytes, ..., cuda::stream())) first with a null `temp`,
/// which only sizes the temporary storage, then with storage of that size, named `what`. The
/// storage holds at least one byte: a null one would make the second call a size query again.
/// Returns it: the queued algorithm reads it, so the caller keeps it until the stream is done
/// (or frees it where freeing waits). `Buffer`: DeviceBuffer<std::byte>, or a buffer with the
/// same constructor (a pool's).
template <class Buffer = DeviceBuffer<std::byte>, class Call>
[[nodiscard]] Buffer run_cub(const char* what, Call&& call) {
  std::size_t bytes = 0;
  check(call(nullptr, bytes), what, __FILE__, __LINE__);
  Buffer temp(bytes > 0 ? bytes : 1, what);
  check(call(temp.data(), bytes), what, __FILE__, __LINE__);
  return temp;
}

/// An SM's unified L1 and shared memory is split between the two for each kernel; without a
/// preference the driver chooses the split, and a kernel that stages a tile in shared memory
/// while it gathers x may be left with too little L1 for x. prefer_l1 states the split: the
/// least shared memory that still holds as many blocks of `block` threads as the kernel's
/// registers, threads and shared memory allow, the rest L1.
/// Measured on an H200 with csr-merge's tile kernel (SpMV, fp32, against the fastest cuSPARSE):
/// random rows of 150 and 400 nonzeros whose x is 116 and 160 KB ran 0.77× and 0.75× with no
/// preference and 0.44× with shared memory at its maximum, 1.01× and 0.96× with this split (two
/// later runs); R-MAT scale 21 0.95× -> 1.02×; matrices whose x fits L1 either way, or misses it
/// either way, ran level.
/// Set once per kernel and device (the attribute belongs to the function).
inline void prefer_l1(const void* kernel, int block) {
  static std::mutex mutex;
  static std::set<std::pair<const void*, int>> done;
  int dev = 0;
  SPMAT_CUDA_CHECK(cudaGetDevice(&dev));
  const std::lock_guard<std::mutex> lock(mutex);
  if (!done.emplace(kernel, dev).second) return;
  cudaFuncAttributes attr{};
  SPMAT_CUDA_CHECK(cudaFuncGetAttributes(&attr, kernel));
  if (attr.sharedSizeBytes == 0) return;  // no shared memory: the split is L1 already
  int blocks = 0;
  SPMAT_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, kernel, block, 0));
  const std::int64_t per_block =
      static_cast<std::int64_t>(attr.sharedSizeBytes) +
      device_attribute<cudaDevAttrReservedSharedMemoryPerBlock>(0);
  const std::int64_t sm_shared = device_attribute<cudaDevAttrMaxSharedMemoryPerMultiprocessor>(1);
  const std::int64_t percent =
      std::min<std::int64_t>(100, (blocks * per_block * 100 + sm_shared - 1) / sm_shared);
  SPMAT_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributePreferredSharedMemoryCarveout,
                                        static_cast<int>(percent)));
}
template <class... Params>
void prefer_l1(void (*kernel)(Params...), int block) {
  prefer_l1(reinterpret_cast<const void*>(kernel), block);
}

/// Programmatic dependent launch (sm_90 and later): a kernel that completes the work of the
/// kernel queued just before it (a fix-up after a tiled pass) is launched with
/// launch_after_prior, so that its launch overlaps the end of the prior kernel instead of
/// following its completion: about a microsecond per launch, a sizeable share of a product of
/// a few microseconds. The dependent kernel calls wait_for_prior_grid() before anything else
/// (it returns once the prior kernel has completed and its writes are visible); the prior one
/// may call allow_dependent_launch() once its blocks are on their last piece of work. On older
/// devices both are no-ops and the launch is an ordinary one.
__device__ __forceinline__ void wait_for_prior_grid() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}
__device__ __forceinline__ void allow_dependent_launch() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}
template <class... Params, class... Args>
void launch_after_prior(const char* what, void (*kernel)(Params...), dim3 grid, dim3 block,
                        Args... args) {
  cudaLaunchAttribute attr[1];
  attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attr[0].val.programmaticStreamSerializationAllowed = 1;
  cudaLaunchConfig_t config{};
  config.gridDim = grid;
  config.blockDim = block;
  config.dynamicSmemBytes = 0;
  config.stream = stream();
  config.attrs = attr;
  config.numAttrs = 1;
  check(cudaLaunchKernelEx(&config, kernel, static_cast<Params>(args)...), what, __FILE__, __LINE__);
}

// ---------------------------------------------------------------------------------------------
// Loads and epilogues
// ---------------------------------------------------------------------------------------------

/// Read-only cached load (ld.global.nc); the pointer must not be written during the kernel.
template <class T>
__device__ __forceinline__ T ldg(const T* p) {
  return __ldg(p);
}

/// Streaming load (ld.global.cs: evict-first in L1 and L2) for data a kernel reads once, such
/// as a sparse matrix's indices and values in a product. They then do not push the data that is
/// read again (the gathered x, the scattered y of a transposed product) out of L2, which holds
/// the whole x of a matrix of a few million columns. Loads of the same sector by one thread
/// still hit L1: evict-first is not no-allocate.
template <class T>
__device__ __forceinline__ T ld_stream(const T* p) {
  return __ldcs(p);
}

/// y = alpha*s + beta*y; beta == 0 does not read y (NaN poison in y never reaches the result).
template <class Value>
__device__ __forceinline__ void axpby_store(Value* y, Value alpha, Value s, Value beta) {
  *y = beta == Value(0) ? alpha * s : alpha * s + beta * *y;
}

/// y = beta*y; beta == 0 writes 0 without reading y. (Not axpby_store with s = 0: alpha*0 is NaN
/// for an infinite alpha.)
template <class Value>
__device__ __forceinline__ void scale_store(Value* y, Value beta) {
  *y = beta == Value(0) ? Value(0) : beta * *y;
}

namespace detail {
template <class Value>
__global__ void scale_kernel(std::int64_t n, Value* __restrict__ y, Value beta) {
  for (std::int64_t i = global_thread_id(); i < n; i += grid_thread_count()) scale_store(&y[i], beta);
}
}  // namespace detail

/// y[0..n) = beta*y on stream() (beta == 0 writes zeros and never reads y; beta == 1 is a
/// no-op): the pre-scaling of every kernel that accumulates into y with atomics.
template <class Value>
void scale_async(Value* y, std::int64_t n, Value beta) {
  if (n <= 0 || beta == Value(1)) return;
  constexpr int kBlock = 256;
  detail::scale_kernel<<<grid_for(n, kBlock), kBlock, 0, stream()>>>(n, y, beta);
  SPMAT_CUDA_CHECK_LAUNCH("scale_kernel");
}

// ---------------------------------------------------------------------------------------------
// Reductions over lanes
// ---------------------------------------------------------------------------------------------

inline constexpr int kWarpSize = 32;
inline constexpr unsigned kFullMask = 0xffffffffu;

/// Lane index within the warp (0..31).
__device__ __forceinline__ int lane_id() { return static_cast<int>(threadIdx.x) & (kWarpSize - 1); }

/// Lane mask of the aligned group of W lanes that contains this lane (W a power of two <= 32).
template <int W>
__device__ __forceinline__ unsigned subwarp_mask() {
  static_assert(W >= 1 && W <= 32 && (W & (W - 1)) == 0, "W must be a power of two <= 32");
  if constexpr (W == 32) {
    return 0xffffffffu;
  } else {
    const unsigned lane = threadIdx.x & 31u;
    return ((1u << W) - 1u) << (lane & ~(W - 1u));
  }
}

/// Sum of `v` over the aligned group of W lanes containing this lane; the result is valid in
/// the group's first lane (lane % W == 0). Only the W lanes of the group need to be converged.
/// Deterministic: a fixed butterfly-free tree (offsets W/2, W/4, ..., 1).
template <int W, class Value>
__device__ __forceinline__ Value subwarp_sum(Value v) {
  const unsigned mask = subwarp_mask<W>();
#pragma unroll
  for (int off = W / 2; off > 0; off /= 2) v += __shfl_down_sync(mask, v, off, W);
  return v;
}

/// Sum of `v` over each group of `width` consecutive lanes (width a power of two, 1..32); the
/// total is returned in every lane of the group. Butterfly (xor) tree: fixed order.
/// Example: width 4, lanes 0..3 hold 1,2,3,4 → each of them returns 10.
template <class Value>
__device__ __forceinline__ Value warp_sum(Value v, int width = kWarpSize) {
  for (int offset = width / 2; offset > 0; offset /= 2)
    v += __shfl_xor_sync(kFullMask, v, offset, width);
  return v;
}

/// Sum of `v` over the whole block (blockDim.x a multiple of 32, at most 1024); the result is
/// valid in thread 0. Every thread of the block must call it. Uses 32 values of shared memory
/// passed in by the caller. Deterministic (fixed tree).
template <class Value>
__device__ __forceinline__ Value block_sum(Value v, Value* shared32) {
  const unsigned lane = threadIdx.x & 31u, warp = threadIdx.x >> 5;
  v = subwarp_sum<32>(v);
  if (lane == 0) shared32[warp] = v;
  __syncthreads();
  const unsigned warps = blockDim.x >> 5;
  if (warp == 0) {
    v = lane < warps ? shared32[lane] : Value(0);
    v = subwarp_sum<32>(v);
  }
  __syncthreads();  // shared32 may be reused by the caller afterwards
  return v;
}

// ---------------------------------------------------------------------------------------------
// Scans over lanes
// ---------------------------------------------------------------------------------------------

/// Inclusive prefix sum of an integer `v` over the 32 lanes of the warp (all converged).
/// Example: lanes 0..3 hold 1,2,3,4 → 1,3,6,10.
template <class T>
__device__ __forceinline__ T warp_inclusive_sum(T v) {
  // Integers only: their sum does not depend on the order, so CUB's scan may pick its own.
  static_assert(std::is_integral_v<T>, "warp_inclusive_sum is for integers");
  using Scan = cub::WarpScan<T>;
  // The full-warp scan works by shuffles alone and its TempStorage is empty: a local one does.
  typename Scan::TempStorage storage;
  T out;
  Scan(storage).InclusiveSum(v, out);
  return out;
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
/// Lanes without an entry take a key no entry has, so they form their own runs.
/// Example: keys 7,7,9,9,9 and v 1,2,3,4,5 → 1,3,3,7,12; tails on lanes 1 and 4 (and 31).
template <class Key, class Value>
__device__ __forceinline__ Value warp_segmented_sum(Key key, Value v, bool* is_tail) {
  const int lane = lane_id();
  const Key prev = __shfl_up_sync(kFullMask, key, 1);
  const Key next = __shfl_down_sync(kFullMask, key, 1);
  *is_tail = lane == kWarpSize - 1 || next != key;
  return warp_segmented_inclusive_sum(lane == 0 || prev != key, v);
}

// ---------------------------------------------------------------------------------------------
// Searches
// ---------------------------------------------------------------------------------------------

/// The segment holding item i, given the first item of each of `segments` segments (`start`
/// non-decreasing, start[0] <= i): the last s with start[s] <= i, so that an empty segment,
/// which shares its start with the next one, is passed over. A binary search.
__device__ __forceinline__ std::int64_t segment_of(const std::int64_t* start,
                                                   std::int64_t segments, std::int64_t i) {
  std::int64_t lo = 0, hi = segments - 1;
  while (lo < hi) {
    const std::int64_t mid = lo + (hi - lo + 1) / 2;
    if (start[mid] <= i) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

/// The first position in [b, e) of the ascending array `a` whose value is >= v (e if none).
template <class T>
__device__ __forceinline__ std::int64_t lower_bound(const T* a, std::int64_t b, std::int64_t e, std::int64_t v) {
  while (b < e) {
    const std::int64_t mid = b + (e - b) / 2;
    if (static_cast<std::int64_t>(a[mid]) < v) b = mid + 1;
    else e = mid;
  }
  return b;
}

/// Merge-path search (Merrill & Garland, SC'16): on the path that merges the row-end list
/// `row_end` (row_end[i] = row_ptr[i+1], `rows` entries) with the natural numbers 0..nnz-1,
/// returns the row coordinate where diagonal `diag` (0 <= diag <= rows+nnz) crosses the path;
/// the nnz coordinate is diag - row. Consuming row end i before nnz index j iff row_end[i] <= j.
template <class Index>
__host__ __device__ inline std::int64_t merge_path_search(std::int64_t diag, const Index* row_end,
                                                          std::int64_t rows, std::int64_t nnz) {
  std::int64_t lo = diag > nnz ? diag - nnz : 0;
  std::int64_t hi = diag < rows ? diag : rows;
  while (lo < hi) {
    const std::int64_t mid = lo + (hi - lo) / 2;  // candidate row coordinate
    // Row end `mid` comes before nnz index diag-1-mid on the path?
    if (static_cast<std::int64_t>(row_end[mid]) <= diag - 1 - mid)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

}  // namespace spmat::cuda
