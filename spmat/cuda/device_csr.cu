// spmat/cuda/device_csr.cu — validation of a CSR in device memory (one kernel), its download,
// transpose and comparison, and the value scatter of update_values.
// SPDX-License-Identifier: MIT
#include "spmat/cuda/device_csr.hpp"

#include <cuda_runtime.h>

#include <cub/device/device_radix_sort.cuh>
#include <thrust/equal.h>
#include <thrust/execution_policy.h>

#include <limits>

#include "spmat/cuda/primitives.cuh"

namespace spmat::cuda {

namespace {

// Slots of the validation result: the smallest offending position of each check, or kNone;
// then two counts (kDescents, kDescentsAtRowStarts) of the one-pass order check.
enum Slot : int {
  kFirst = 0, kLast, kDecreasing, kColumnRange, kUnsorted,  // the checks' positions
  kDescents, kDescentsAtRowStarts,                           // the counts
  kSlots,
  kChecks = kDescents
};
constexpr unsigned long long kNone = std::numeric_limits<unsigned long long>::max();
constexpr int kValidateBlock = 256;

// One coalesced pass over max(rows+1, nnz) positions, no search. Position i checks row_ptr
// entry i (against its successor) and nonzero i (its column's range). The column order is
// checked by counting: a descent is a position i > 0 with col_idx[i-1] >= col_idx[i]; in a
// canonical CSR every descent begins a non-empty row. Position i counts the descents, and row i
// (when non-empty, beginning past position 0) counts whether its first position is one; the
// two totals are equal iff no descent lies inside a row. Only when they differ does the host run
// locate_unsorted_kernel, which finds the first such descent by searches. The counts are
// meaningful only when row_ptr passed its checks, which the host reports first. Reads stay
// inside the arrays whatever their content.
template <class Index>
__global__ void __launch_bounds__(kValidateBlock)
    validate_csr_kernel(std::int64_t rows, std::int64_t cols, std::int64_t nnz,
                        const Index* __restrict__ row_ptr, const Index* __restrict__ col_idx,
                        unsigned long long* __restrict__ slots) {
  const std::int64_t n = rows + 1 > nnz ? rows + 1 : nnz;
  unsigned long long descents = 0, at_starts = 0;
  for (std::int64_t i = global_thread_id(); i < n; i += grid_thread_count()) {
    if (i <= rows) {
      const std::int64_t p = row_ptr[i];
      if (i == 0 && p != 0) atomicMin(slots + kFirst, 0ull);
      if (i == rows && p != nnz) atomicMin(slots + kLast, 0ull);
      if (i < rows) {
        const std::int64_t q = row_ptr[i + 1];
        if (q < p) atomicMin(slots + kDecreasing, static_cast<unsigned long long>(i));
        if (q > p && p > 0 && p < nnz &&
            static_cast<std::int64_t>(col_idx[p - 1]) >= static_cast<std::int64_t>(col_idx[p]))
          ++at_starts;
      }
    }
    if (i < nnz) {
      const std::int64_t c = col_idx[i];
      if (c < 0 || c >= cols) atomicMin(slots + kColumnRange, static_cast<unsigned long long>(i));
      if (i > 0 && static_cast<std::int64_t>(col_idx[i - 1]) >= c) ++descents;
    }
  }
  __shared__ unsigned long long shared32[32];
  descents = block_sum(descents, shared32);
  at_starts = block_sum(at_starts, shared32);
  if (threadIdx.x == 0) {
    if (descents) atomicAdd(slots + kDescents, descents);
    if (at_starts) atomicAdd(slots + kDescentsAtRowStarts, at_starts);
  }
}

// The first descent inside a row (see validate_csr_kernel), on a row_ptr that passed its
// checks: the row of each descent from a binary search of row_ptr. Runs only when the counts
// show such a descent.
template <class Index>
__global__ void locate_unsorted_kernel(std::int64_t rows, std::int64_t nnz,
                                       const Index* __restrict__ row_ptr,
                                       const Index* __restrict__ col_idx,
                                       unsigned long long* __restrict__ slots) {
  for (std::int64_t i = global_thread_id() + 1; i < nnz; i += grid_thread_count()) {
    if (static_cast<std::int64_t>(col_idx[i - 1]) < static_cast<std::int64_t>(col_idx[i])) continue;
    // Last row r with row_ptr[r] <= i: i begins a row iff row_ptr[r] == i.
    std::int64_t lo = 0, hi = rows;  // invariant: row_ptr[lo] <= i (row_ptr[0] = 0)
    while (lo < hi) {
      const std::int64_t mid = lo + (hi - lo + 1) / 2;
      if (static_cast<std::int64_t>(row_ptr[mid]) <= i) lo = mid;
      else hi = mid - 1;
    }
    if (static_cast<std::int64_t>(row_ptr[lo]) != i)
      atomicMin(slots + kUnsorted, static_cast<unsigned long long>(i));
  }
}

template <class T>
T element(const T* p, std::int64_t i) {
  T v{};
  copy_to_host(&v, p + i, 1);
  return v;
}

[[noreturn]] void invalid(std::string_view what, const std::string& msg) {
  throw InvalidMatrixError(std::string(what) + ": " + msg);
}

/// Refuses host pointers before any kernel reads them: a kernel faulting on one would leave
/// the CUDA context unusable for the rest of the process.
void check_device_pointer(std::string_view what, const char* name, const void* p, std::int64_t n) {
  if (n == 0) return;
  if (p == nullptr) invalid(what, std::string(name) + " is null but has " + std::to_string(n) + " entries");
  cudaPointerAttributes attr{};
  const cudaError_t st = cudaPointerGetAttributes(&attr, p);
  if (st != cudaSuccess) {
    cudaGetLastError();
    invalid(what, std::string(name) + " is not a device pointer (" + cudaGetErrorString(st) + ")");
  }
  if (attr.type != cudaMemoryTypeDevice && attr.type != cudaMemoryTypeManaged)
    invalid(what, std::string(name) +
                      " is not device memory (a host pointer? device CSR input needs arrays "
                      "allocated on the GPU, e.g. with cudaMalloc or spmat::cuda::DeviceBuffer)");
}

template <class Value, class Map>
__global__ void scatter_values_kernel(std::int64_t n, const Map* __restrict__ map,
                                      const Value* __restrict__ src, Value* __restrict__ dst) {
  for (std::int64_t k = global_thread_id(); k < n; k += grid_thread_count()) dst[map[k]] = src[k];
}

template <class Value, class Map>
__global__ void gather_values_kernel(std::int64_t n, const Map* __restrict__ map,
                                     const Value* __restrict__ src, Value* __restrict__ dst) {
  for (std::int64_t k = global_thread_id(); k < n; k += grid_thread_count()) dst[k] = src[map[k]];
}

// Nonzeros and row ends each thread of expand_rows_kernel walks on the merge path, and its
// threads per block.
constexpr std::int64_t kExpandItems = 16;
constexpr int kExpandBlock = 256;

// The row of every nonzero, by the merge path of the row ends with the nonzero indices
// (merge_path_search): a block takes kExpandBlock·kExpandItems consecutive items of the path,
// thread t walks kExpandItems of them from its own diagonal (one search per thread, not per
// nonzero), passing a row end or writing the current row for a nonzero into shared memory; the
// block then stores its nonzeros' rows in one coalesced sweep (a thread's own stores would be
// kExpandItems apart).
template <class Index>
__global__ void __launch_bounds__(kExpandBlock)
    expand_rows_kernel(const Index* __restrict__ row_ptr, std::int64_t rows, std::int64_t nnz,
                       Index* __restrict__ row_of) {
  constexpr std::int64_t kTile = kExpandBlock * kExpandItems;
  __shared__ Index tile_rows[kTile];
  __shared__ std::int64_t tile_k[2];  // the tile's first nonzero and the one past its last
  const std::int64_t items = rows + nnz;
  for (std::int64_t tile = blockIdx.x; tile * kTile < items; tile += gridDim.x) {
    const std::int64_t t0 = tile * kTile, t1 = t0 + kTile < items ? t0 + kTile : items;
    if (threadIdx.x == 0) {
      tile_k[0] = t0 - merge_path_search(t0, row_ptr + 1, rows, nnz);
      tile_k[1] = t1 - merge_path_search(t1, row_ptr + 1, rows, nnz);
    }
    __syncthreads();
    const std::int64_t k0 = tile_k[0], k1 = tile_k[1];
    const std::int64_t d0 = t0 + static_cast<std::int64_t>(threadIdx.x) * kExpandItems;
    if (d0 < t1) {
      const std::int64_t d1 = d0 + kExpandItems < t1 ? d0 + kExpandItems : t1;
      std::int64_t r = merge_path_search(d0, row_ptr + 1, rows, nnz), k = d0 - r;
      for (std::int64_t d = d0; d < d1; ++d) {
        if (r < rows && static_cast<std::int64_t>(row_ptr[r + 1]) <= k) {
          ++r;  // row r ends before nonzero k
        } else if (k < nnz) {
          tile_rows[k++ - k0] = static_cast<Index>(r);
        }
      }
    }
    __syncthreads();
    for (std::int64_t k = k0 + threadIdx.x; k < k1; k += blockDim.x) row_of[k] = tile_rows[k - k0];
    __syncthreads();  // tile_rows and tile_k free for the next tile
  }
}

template <class Index>
__global__ void iota_kernel(std::int64_t n, Index* __restrict__ out) {
  for (std::int64_t k = global_thread_id(); k < n; k += grid_thread_count()) out[k] = static_cast<Index>(k);
}

template <class Index>
__global__ void invert_permutation_kernel(std::int64_t n, const Index* __restrict__ perm,
                                          Index* __restrict__ inverse) {
  for (std::int64_t k = global_thread_id(); k < n; k += grid_thread_count())
    inverse[perm[k]] = static_cast<Index>(k);
}

template <class Index>
__global__ void compress_rows_kernel(const Index* __restrict__ sorted_keys, std::int64_t n,
                                     std::int64_t segments, Index* __restrict__ ptr) {
  for (std::int64_t s = global_thread_id(); s <= segments; s += grid_thread_count()) {
    std::int64_t lo = 0, hi = n;  // first position whose key is >= s
    while (lo < hi) {
      const std::int64_t mid = lo + (hi - lo) / 2;
      if (static_cast<std::int64_t>(sorted_keys[mid]) < s) lo = mid + 1;
      else hi = mid;
    }
    ptr[s] = static_cast<Index>(lo);
  }
}

}  // namespace

template <class Index>
void invert_permutation(const Index* perm, std::int64_t n, Index* inverse) {
  if (n <= 0) return;
  launch_grid_for("invert_permutation_kernel", invert_permutation_kernel<Index>, n, 256, n, perm,
                  inverse);
}

template <class Index>
void sorted_positions(const Index* keys, std::int64_t n, std::int64_t key_bound,
                      Index* keys_sorted, Index* positions) {
  if (n <= 0) return;
  constexpr int kBlock = 256;
  ScratchBuffer<Index> iota(static_cast<std::size_t>(n), "sort positions");
  launch_grid_for("iota_kernel", iota_kernel<Index>, n, kBlock, n, iota.data());
  int end_bit = 1;  // the bits that distinguish keys in [0, key_bound): fewer radix passes
  while (end_bit < static_cast<int>(8 * sizeof(Index)) - 1 && (std::int64_t{1} << end_bit) < key_bound)
    ++end_bit;
  // The temporaries are scratch, freed in stream order: no cudaMalloc / cudaFree.
  const auto tmp = run_cub<ScratchBuffer<std::byte>>("radix sort workspace",
                                                     [&](void* temp, std::size_t& bytes) {
    return cub::DeviceRadixSort::SortPairs(temp, bytes, keys, keys_sorted, iota.data(), positions,
                                           n, 0, end_bit, stream());
  });
  synchronize_stream();  // complete on return (device_csr.hpp)
}

template <class Index>
void compress_rows(const Index* sorted_keys, std::int64_t n, std::int64_t segments, Index* ptr) {
  constexpr int kBlock = 256;
  launch_grid_for("compress_rows_kernel", compress_rows_kernel<Index>, segments + 1, kBlock,
                  sorted_keys, n, segments, ptr);
}

template <class Index>
void expand_rows(const Index* row_ptr, std::int64_t rows, std::int64_t nnz, Index* row_of) {
  if (nnz <= 0) return;
  launch("expand_rows_kernel", expand_rows_kernel<Index>, grid_cover(rows + nnz, kExpandBlock * kExpandItems),
         static_cast<unsigned>(kExpandBlock), row_ptr, rows, nnz, row_of);
}

template <class Value, class Map>
void gather_values(Value* dst, const Map* map, const Value* src, std::int64_t n) {
  if (n <= 0) return;
  constexpr int kBlock = 256;
  launch_grid_for("gather_values_kernel", gather_values_kernel<Value, Map>, n, kBlock, n, map, src,
                  dst);
}

template <class Value, class Index>
void validate(const DeviceCsrView<Value, Index>& a, std::string_view what) {
  if (a.rows < 0 || a.cols < 0)
    invalid(what, "negative dimensions " + std::to_string(a.rows) + "x" + std::to_string(a.cols));
  if (a.nnz < 0) invalid(what, "negative nnz " + std::to_string(a.nnz));
  check_device_pointer(what, "row_ptr", a.row_ptr, a.rows + 1);
  check_device_pointer(what, "col_idx", a.col_idx, a.nnz);
  check_device_pointer(what, "values", a.values, a.nnz);

  // Result slots from the scratch pool: neither their allocation nor their release waits for
  // the device (a cudaFree would), and the download below is the one synchronization.
  ScratchBuffer<unsigned long long> slots(kSlots, "device CSR validation");
  fill_bytes_async(slots.data(), 0xFF, kChecks * sizeof(unsigned long long));  // kNone
  fill_bytes_async(slots.data() + kChecks, 0, (kSlots - kChecks) * sizeof(unsigned long long));
  const std::int64_t n = std::max<std::int64_t>(a.rows + 1, a.nnz);
  launch_grid_for("validate_csr_kernel", validate_csr_kernel<Index>, n, kValidateBlock, a.rows,
                  a.cols, a.nnz, a.row_ptr, a.col_idx, slots.data());
  std::vector<unsigned long long> f = slots.download();  // synchronizes
  const bool row_ptr_ok = f[kFirst] == kNone && f[kLast] == kNone && f[kDecreasing] == kNone;
  if (row_ptr_ok && f[kDescents] != f[kDescentsAtRowStarts] && a.nnz > 1) {
    launch_grid_for("locate_unsorted_kernel", locate_unsorted_kernel<Index>, a.nnz - 1,
                    kValidateBlock, a.rows, a.nnz, a.row_ptr, a.col_idx, slots.data());
    f = slots.download();
  }

  if (f[kFirst] != kNone)
    invalid(what, "row_ptr[0] = " + std::to_string(element(a.row_ptr, 0)) + ", expected 0");
  if (f[kLast] != kNone)
    invalid(what, "row_ptr[rows] = " + std::to_string(element(a.row_ptr, a.rows)) +
                      " but nnz = " + std::to_string(a.nnz));
  if (f[kDecreasing] != kNone)
    invalid(what, "row_ptr decreases at row " + std::to_string(f[kDecreasing]));
  const auto row_of = [&](std::int64_t k) {  // last row r with row_ptr[r] <= k
    std::int64_t lo = 0, hi = a.rows;
    while (lo < hi) {
      const std::int64_t mid = lo + (hi - lo + 1) / 2;
      if (static_cast<std::int64_t>(element(a.row_ptr, mid)) <= k) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  };
  const bool range = f[kColumnRange] != kNone, unsorted = f[kUnsorted] != kNone;
  if (range && (!unsorted || f[kColumnRange] <= f[kUnsorted])) {
    const auto k = static_cast<std::int64_t>(f[kColumnRange]);
    invalid(what, "column index " + std::to_string(element(a.col_idx, k)) + " in row " +
                      std::to_string(row_of(k)) + " is out of range [0, " + std::to_string(a.cols) + ")");
  }
  if (unsorted) {
    const auto k = static_cast<std::int64_t>(f[kUnsorted]);
    invalid(what, "columns of row " + std::to_string(row_of(k)) + " are not strictly increasing (" +
                      std::to_string(element(a.col_idx, k - 1)) + " then " +
                      std::to_string(element(a.col_idx, k)) + "): unsorted or duplicate");
  }
}

template <class Value, class Index>
Csr<Value, Index> download(const DeviceCsrView<Value, Index>& a) {
  Csr<Value, Index> h;
  h.rows = static_cast<Index>(a.rows);
  h.cols = static_cast<Index>(a.cols);
  h.row_ptr.resize(static_cast<std::size_t>(a.rows) + 1);
  h.col_idx.resize(static_cast<std::size_t>(a.nnz));
  h.values.resize(static_cast<std::size_t>(a.nnz));
  copy_to_host(h.row_ptr.data(), a.row_ptr, h.row_ptr.size());
  copy_to_host(h.col_idx.data(), a.col_idx, h.col_idx.size());
  copy_to_host(h.values.data(), a.values, h.values.size());
  return h;
}

template <class Value, class Index>
void transpose_into(const DeviceCsrView<Value, Index>& a, Index* t_ptr, Index* t_idx, Value* t_val) {
  const auto n = static_cast<std::size_t>(a.nnz);
  ScratchBuffer<Index> row_of(n, "transpose: row of each entry");
  ScratchBuffer<Index> cols_sorted(n, "transpose: sorted columns");
  ScratchBuffer<Index> perm(n, "transpose: CSR position of each entry");
  expand_rows(a.row_ptr, a.rows, a.nnz, row_of.data());
  sorted_positions(a.col_idx, a.nnz, a.cols, cols_sorted.data(), perm.data());
  compress_rows(cols_sorted.data(), a.nnz, a.cols, t_ptr);
  gather_values(t_idx, perm.data(), row_of.data(), a.nnz);
  gather_values(t_val, perm.data(), a.values, a.nnz);
}

template <class Value, class Index>
DeviceCsr<Value, Index> transpose(const DeviceCsrView<Value, Index>& a) {
  const auto n = static_cast<std::size_t>(a.nnz);
  DeviceBuffer<Index> ptr(static_cast<std::size_t>(a.cols) + 1, "transpose row_ptr");
  DeviceBuffer<Index> idx(n, "transpose col_idx");
  DeviceBuffer<Value> val(n, "transpose values");
  transpose_into(a, ptr.data(), idx.data(), val.data());
  return adopt_csr<Value, Index>(a.cols, a.rows, std::move(ptr), std::move(idx), std::move(val));
}

template <class Value, class Index>
bool equal(const DeviceCsrView<Value, Index>& a, const DeviceCsrView<Value, Index>& b) {
  if (a.rows != b.rows || a.cols != b.cols || a.nnz != b.nnz) return false;
  const auto on_stream = thrust::cuda::par.on(stream());
  return thrust::equal(on_stream, a.row_ptr, a.row_ptr + a.rows + 1, b.row_ptr) &&
         thrust::equal(on_stream, a.col_idx, a.col_idx + a.nnz, b.col_idx) &&
         thrust::equal(on_stream, a.values, a.values + a.nnz, b.values);
}

template <class Value, class Map>
void scatter_values(Value* dst, const Map* map, const Value* src, std::int64_t n) {
  if (n <= 0) return;
  constexpr int kBlock = 256;
  launch_grid_for("scatter_values_kernel", scatter_values_kernel<Value, Map>, n, kBlock, n, map,
                  src, dst);
}

#define SPMAT_INSTANTIATE(V, I)                                                       \
  template void validate(const DeviceCsrView<V, I>&, std::string_view);               \
  template Csr<V, I> download(const DeviceCsrView<V, I>&);                            \
  template void transpose_into(const DeviceCsrView<V, I>&, I*, I*, V*);               \
  template DeviceCsr<V, I> transpose(const DeviceCsrView<V, I>&);                     \
  template bool equal(const DeviceCsrView<V, I>&, const DeviceCsrView<V, I>&);        \
  template void scatter_values(V*, const I*, const V*, std::int64_t);                 \
  template void gather_values(V*, const I*, const V*, std::int64_t);
SPMAT_FOR_EACH_TYPE_PAIR(SPMAT_INSTANTIATE)
#undef SPMAT_INSTANTIATE
#define SPMAT_INSTANTIATE(I)                                                                 \
  template void gather_values(I*, const I*, const I*, std::int64_t);                         \
  template void expand_rows(const I*, std::int64_t, std::int64_t, I*);                       \
  template void compress_rows(const I*, std::int64_t, std::int64_t, I*);                     \
  template void sorted_positions(const I*, std::int64_t, std::int64_t, I*, I*);            \
  template void invert_permutation(const I*, std::int64_t, I*);
SPMAT_INSTANTIATE(std::int32_t)
SPMAT_INSTANTIATE(std::int64_t)
#undef SPMAT_INSTANTIATE

}  // namespace spmat::cuda
