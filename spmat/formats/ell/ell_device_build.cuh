// spmat/formats/ell/ell_device_build.cuh — the pieces that build ELLPACK arrays on the GPU from
// a device CSR, and the row walk of their value updates; shared by ell, ellr, sell and hyb.
// SPDX-License-Identifier: MIT
//
// Layout (ell.hpp): slot j of row r is j*pitch + r (column-major, pitch = rows rounded up to 32);
// a row's entries fill its first slots in CSR order, the other slots hold kEllPadding (-1) and 0.
#pragma once
#include <cub/device/device_reduce.cuh>
#include <cub/device/device_scan.cuh>

#include <cstdint>
#include <string>

#include "spmat/cuda/buffer.hpp"
#include "spmat/cuda/device_csr.hpp"
#include "spmat/cuda/primitives.cuh"
#include "spmat/formats/ell/ell.hpp"

namespace spmat::ell_build {
namespace {

constexpr int kBlock = 256;

template <class Index>
__global__ void csr_row_lengths_kernel(const Index* __restrict__ row_ptr, std::int64_t rows,
                                       Index* __restrict__ len) {
  for (std::int64_t r = cuda::global_thread_id(); r < rows; r += cuda::grid_thread_count())
    len[r] = row_ptr[r + 1] - row_ptr[r];
}

/// out[0] = max(out[0], the longest of rows [0, rows)): a warp shuffle maximum, then one
/// atomicMax per warp. out[0] starts at 0.
template <class Index>
__global__ void __launch_bounds__(kBlock)
    max_row_length_kernel(const Index* __restrict__ row_ptr, std::int64_t rows,
                          unsigned long long* __restrict__ out) {
  unsigned long long m = 0;
  for (std::int64_t r = cuda::global_thread_id(); r < rows; r += cuda::grid_thread_count())
    m = max(m, static_cast<unsigned long long>(row_ptr[r + 1] - row_ptr[r]));
  for (int o = 16; o > 0; o /= 2) m = max(m, __shfl_down_sync(0xffffffffu, m, o));
  if ((threadIdx.x & 31) == 0 && m > 0) atomicMax(out, m);
}

/// The segment of item base + threadIdx.x (-1 past item n-1), for blocks that each take the
/// blockDim.x consecutive items from `base`: cuda::segment_of (the last s with start[s] <= i),
/// with two full searches per block, for its first and last item, and then a search per thread
/// among the segments between those, short and in cache, instead of a full search per item.
/// Every thread of the block calls it (it synchronizes the block); `span` is two entries of
/// shared memory.
__device__ __forceinline__ std::int64_t block_segment_of(const std::int64_t* start,
                                                         std::int64_t segments, std::int64_t base,
                                                         std::int64_t n, std::int64_t* span) {
  const std::int64_t last = base + blockDim.x - 1 < n ? base + blockDim.x - 1 : n - 1;
  if (threadIdx.x < 2) span[threadIdx.x] = cuda::segment_of(start, segments, threadIdx.x ? last : base);
  __syncthreads();
  const std::int64_t lo = span[0], hi = span[1];
  __syncthreads();  // the caller's next round rewrites span
  const std::int64_t i = base + threadIdx.x;
  return i < n ? lo + cuda::segment_of(start + lo, hi - lo + 1, i) : -1;
}

/// Writes one slot of an ELL-like array (ell, sell): entry j of CSR row r when the row has one,
/// else padding (kEllPadding and 0); r < 0 names no row (a padding lane past the last row).
template <class Value, class Index>
__device__ __forceinline__ void fill_slot(const Index* __restrict__ row_ptr,
                                          const Index* __restrict__ col_idx,
                                          const Value* __restrict__ values, std::int64_t r,
                                          std::int64_t j, Index* out_col, Value* out_val) {
  Index c = static_cast<Index>(kEllPadding);
  Value v = 0;
  if (r >= 0) {
    const std::int64_t k = static_cast<std::int64_t>(row_ptr[r]) + j;
    if (k < static_cast<std::int64_t>(row_ptr[r + 1])) {
      c = col_idx[k];
      v = values[k];
    }
  }
  *out_col = c;
  *out_val = v;
}

/// Every slot written (entries, then padding), one thread per slot: consecutive threads write
/// consecutive slots (coalesced stores); rows longer than `width` keep their first `width`.
template <class Value, class Index>
__global__ void fill_kernel(const Index* __restrict__ row_ptr, const Index* __restrict__ col_idx,
                            const Value* __restrict__ values, std::int64_t rows, std::int64_t width,
                            std::int64_t pitch, Index* __restrict__ ell_col,
                            Value* __restrict__ ell_val) {
  const std::int64_t slots = width * pitch;
  for (std::int64_t s = cuda::global_thread_id(); s < slots; s += cuda::grid_thread_count()) {
    const std::int64_t j = s / pitch, r = s % pitch;
    fill_slot(row_ptr, col_idx, values, r < rows ? r : -1, j, &ell_col[s], &ell_val[s]);
  }
}

/// Stored entries of each row of an ELL array: its slots before the first padding.
template <class Index>
__global__ void stored_lengths_kernel(const Index* __restrict__ ell_col, std::int64_t rows,
                                      std::int64_t width, std::int64_t pitch,
                                      Index* __restrict__ len) {
  for (std::int64_t r = cuda::global_thread_id(); r < rows; r += cuda::grid_thread_count()) {
    std::int64_t n = 0;
    while (n < width && ell_col[n * pitch + r] != static_cast<Index>(kEllPadding)) ++n;
    len[r] = static_cast<Index>(n);
  }
}

/// The value update of an ELL array: row r's stored entries, the first min(ptr[r+1] - ptr[r],
/// width) of its CSR row (ptr: CSR row offsets), copied from src[ptr[r] + j] to slot
/// j*pitch + r, one thread per row. Consecutive threads write consecutive slots (coalesced
/// stores); a thread per CSR entry would write slots a pitch apart, a sector each.
template <class Value>
__global__ void row_values_kernel(const std::int64_t* __restrict__ ptr, std::int64_t rows,
                                  std::int64_t width, std::int64_t pitch,
                                  const Value* __restrict__ src, Value* __restrict__ dst) {
  for (std::int64_t r = cuda::global_thread_id(); r < rows; r += cuda::grid_thread_count()) {
    const std::int64_t b = ptr[r], len = ptr[r + 1] - b, n = len < width ? len : width;
    for (std::int64_t j = 0; j < n; ++j) dst[j * pitch + r] = src[b + j];
  }
}

/// len[r] = row r's length in the CSR offsets `row_ptr` (rows entries).
template <class Index>
void csr_row_lengths(const Index* row_ptr, std::int64_t rows, Index* len) {
  if (rows <= 0) return;
  cuda::launch_grid_for("csr_row_lengths_kernel", csr_row_lengths_kernel<Index>, rows, kBlock,
                        row_ptr, rows, len);
}

/// The longest row of a validated device CSR (0 when rows == 0) in one pass over row_ptr, the
/// result slot from the scratch pool: no row-length array, no reduction workspace, no
/// cudaMalloc or cudaFree; the one download is the one wait.
template <class Index>
std::int64_t max_row_length(const Index* row_ptr, std::int64_t rows) {
  if (rows <= 0) return 0;
  cuda::ScratchBuffer<unsigned long long> out(1, "longest row");
  out.fill_bytes(0);
  cuda::launch_grid_for("max_row_length_kernel", max_row_length_kernel<Index>, rows, kBlock,
                        row_ptr, rows, out.data());
  return static_cast<std::int64_t>(out.download()[0]);  // waits for the stream
}

/// The largest of n values (0 when n == 0), by a CUB reduction; one scalar downloaded. (The
/// longest row of a CSR: max_row_length, which needs no length array.)
template <class Index>
std::int64_t max_of(const Index* v, std::int64_t n) {
  if (n <= 0) return 0;
  cuda::ScratchBuffer<Index> out(1, "ell build: maximum");
  const auto tmp = cuda::run_cub<cuda::ScratchBuffer<std::byte>>(
      "ell build: reduction workspace", [&](void* temp, std::size_t& bytes) {
        return cub::DeviceReduce::Max(temp, bytes, v, out.data(), n, cuda::stream());
      });
  return static_cast<std::int64_t>(out.download()[0]);  // synchronizes
}

/// ptr[0] = 0, ptr[r+1] = len[0] + ... + len[r] (rows+1 entries), by a CUB scan; complete on
/// return (its workspace is scratch, so the wait is the scan's own, with no cudaFree).
template <class Index>
void offsets(const Index* len, std::int64_t rows, std::int64_t* ptr) {
  cuda::fill_bytes_async(ptr, 0, sizeof(std::int64_t));
  if (rows <= 0) return;
  const auto tmp = cuda::run_cub<cuda::ScratchBuffer<std::byte>>(
      "ell build: scan workspace", [&](void* temp, std::size_t& bytes) {
        return cub::DeviceScan::InclusiveSum(temp, bytes, len, ptr + 1, rows, cuda::stream());
      });
  cuda::synchronize_stream();  // complete on return: callers read the offsets on the host
}

/// The width of the ELL arrays of `a`: its longest row, refused as Ell::build refuses it when
/// the padding passes the `max_fill` option of format `fmt`.
template <class Value, class Index>
std::int64_t checked_width(const DeviceCsrView<Value, Index>& a, const char* fmt,
                           const FormatOptions& o) {
  const std::int64_t width = max_row_length(a.row_ptr, a.rows);
  check_padding(fmt, static_cast<double>(a.rows) * static_cast<double>(width), a.nnz, a.rows,
                row_limit_option(fmt, o, "max_fill", kDefaultMaxFill), "hyb or csr");
  return width;
}

/// Fills width*pitch slots from the CSR arrays.
template <class Value, class Index>
void fill(const DeviceCsrView<Value, Index>& a, std::int64_t width, std::int64_t pitch,
          Index* ell_col, Value* ell_val) {
  const std::int64_t slots = width * pitch;
  if (slots <= 0) return;
  cuda::launch_grid_for("ell fill_kernel", fill_kernel<Value, Index>, slots, kBlock, a.row_ptr,
                        a.col_idx, a.values, a.rows, width, pitch, ell_col, ell_val);
}

/// Allocates the width*pitch slots of `ell_col` and `ell_val` (named `col_name`, `val_name` in
/// allocation errors) and fills them from the CSR arrays.
template <class Value, class Index>
void allocate_and_fill(const DeviceCsrView<Value, Index>& a, std::int64_t width,
                       std::int64_t pitch, cuda::DeviceBuffer<Index>& ell_col,
                       cuda::DeviceBuffer<Value>& ell_val, const char* col_name,
                       const char* val_name) {
  const auto slots = static_cast<std::size_t>(pitch * width);
  ell_col = cuda::DeviceBuffer<Index>(slots, col_name);
  ell_val = cuda::DeviceBuffer<Value>(slots, val_name);
  ell_build::fill(a, width, pitch, ell_col.data(), ell_val.data());
}

/// allocate_and_fill into the col_idx and values of `d`, a device storage that is one ELL block
/// (ell, ellr: its width and pitch set), named "`Dev::format` col_idx" and "... values".
template <class Dev, class Value, class Index>
void allocate_and_fill(const DeviceCsrView<Value, Index>& a, Dev& d) {
  const std::string format = Dev::format;
  allocate_and_fill(a, d.width, d.pitch, d.col_idx, d.values, (format + " col_idx").c_str(),
                    (format + " values").c_str());
}

/// The CSR row offsets (rows+1 entries, complete on return) of rows that hold `len` entries:
/// what the value updates of ell, ellr, sell and hyb keep, 8·(rows+1) bytes, instead of a slot
/// per nonzero. `what` names the array.
template <class Index>
cuda::DeviceBuffer<std::int64_t> row_offsets(const Index* len, std::int64_t rows,
                                             const char* what) {
  cuda::DeviceBuffer<std::int64_t> ptr(static_cast<std::size_t>(rows) + 1, what);
  offsets(len, rows, ptr.data());  // complete on return
  return ptr;
}

/// dst = the new values `src` (device) in an ELL array's slots, by the rows' CSR offsets `ptr`
/// (row_values_kernel; rows longer than `width` give their first `width`).
template <class Value>
void update_rows(const std::int64_t* ptr, std::int64_t rows, std::int64_t width,
                 std::int64_t pitch, const Value* src, Value* dst) {
  if (rows <= 0 || width <= 0) return;
  cuda::launch_grid_for("ell row_values_kernel", row_values_kernel<Value>, rows, kBlock, ptr, rows,
                        width, pitch, src, dst);
}

/// update_values of a storage whose values array holds the `nnz` CSR values rearranged by rows
/// (ell, ellr, sell, hyb): the new values in `where` (a host array uploaded first), then
/// `make()` on the first update (it fills `ptr`, the CSR row offsets of the stored rows, and
/// whatever else `write` reads; kept for the next updates), then `write(src)` writes them from
/// `src` on the device. Returns with the writes queued on stream() when the values were on the
/// device, complete when they came from the host.
template <class Value, class Make, class Write>
void update_values_by_rows(const cuda::DeviceBuffer<std::int64_t>& ptr, std::int64_t nnz,
                           const Value* values, Memory where, Make&& make, Write&& write) {
  if (nnz == 0) return;
  cuda::DeviceBuffer<Value> staging;
  const Value* src = cuda::device_values(values, static_cast<std::size_t>(nnz), where, staging);
  if (ptr.size() == 0) make();
  write(src);
  if (staging.size()) cuda::synchronize_stream();  // staging is freed on return
}

/// The stored lengths of an ELL array's rows.
template <class Index>
void stored_lengths(const Index* ell_col, std::int64_t rows, std::int64_t width,
                    std::int64_t pitch, Index* len) {
  if (rows <= 0) return;
  cuda::launch_grid_for("stored_lengths_kernel", stored_lengths_kernel<Index>, rows, kBlock,
                        ell_col, rows, width, pitch, len);
}

}  // namespace
}  // namespace spmat::ell_build
