// spmat/formats/csr/csr_cuda.cu — CUDA kernels of CSR: scalar, vector, adaptive (sub-warp) and
// merge-path SpMV; atomic-scatter SpMVᵀ; a warp-per-row SpMM.
// SPDX-License-Identifier: MIT
//
// Layering (STYLE.md, after CUB): the public entries spmv/spmv_t/spmm at the bottom validate
// nothing (Matrix did) and pick the variant; `launch_*` helpers size the grid from the SM count;
// the __global__ kernels are thin loops over rows/chunks/merge-path tiles built from the
// primitives in spmat/cuda/primitives.cuh. Everything a kernel needs beyond the CSR arrays
// (threads per row, the long-row chunk list, the merge-path partition and its fix-up list) is
// computed once in CsrDevice::upload, which the benchmark times as setup.
//
// Common kernel contract (all SpMV variants):
//   row_ptr: rows+1, col_idx/values: nnz, x: cols, y: rows (spmv_t: x rows, y cols); all device
//   memory allocated by the caller (the matrix arrays by upload). Canonical CSR: no duplicates;
//   explicit zeros are multiplied like any entry (so 0*Inf = NaN propagates as in the
//   reference); empty rows give y = beta*y (or 0 when beta == 0). beta == 0 never reads y.
//   Offsets and loop counters are 64-bit, so int32 matrices with rows+nnz > 2^31 are fine.
//   Minimal bytes: (rows+1)·I + nnz·(I+V) + cols·V (x, if each entry is read once) + rows·V.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <vector>

#include "spmat/cuda/buffer.hpp"
#include "spmat/cuda/device_impl.hpp"
#include "spmat/cuda/primitives.cuh"
#include "spmat/formats/csr/csr.hpp"

namespace spmat {

namespace csr_gpu {
constexpr int kBlock = 256;          ///< threads per block of the row kernels
constexpr std::int64_t kChunk = 4096;  ///< nnz per block for rows on the long-row path
constexpr int kMergeIpt = 16;        ///< merge-path items (row ends + nonzeros) per thread
constexpr int kMergeBlock = 128;
constexpr int kMaxShortFix = 8;      ///< merge fix-ups summing more carries go to a warp each
constexpr std::int64_t kNoLongRows = std::numeric_limits<std::int64_t>::max();

/// Lanes per row for the adaptive kernel: the largest power of two <= mean row length, clamped
/// to [2, 32]. Rounding down keeps more rows per warp (fewer shuffle steps per row); for the
/// 5-point Laplacian (mean 5) it gives 4 lanes, so one row takes two strided steps of which the
/// second uses one lane. Override with the `tpr` option when tuning on a new device.
inline int threads_per_row(std::int64_t rows, std::int64_t nnz) {
  const double mean = rows > 0 ? static_cast<double>(nnz) / static_cast<double>(rows) : 0.0;
  int t = 2;
  while (t < 32 && 2.0 * t <= mean) t *= 2;
  return t;
}

/// Rows longer than this bypass the sub-warp kernel and are split into kChunk-sized pieces,
/// one block each, with a deterministic second reduction. 32× the mean and at least 1024:
/// below that a warp (32 lanes × 32 steps) finishes the row no slower than its neighbours.
inline std::int64_t long_row_threshold(std::int64_t rows, std::int64_t nnz) {
  const std::int64_t mean = rows > 0 ? (nnz + rows - 1) / rows : 0;
  return std::max<std::int64_t>(32 * mean, 1024);
}
}  // namespace csr_gpu

/// The uploaded CSR plus the per-kernel precomputation (all built in upload, i.e. setup).
template <class Value, class Index>
struct CsrDevice {
  std::int64_t rows = 0, cols = 0, nnz = 0;
  CsrKernel kernel = CsrKernel::automatic;
  int tpr = 2;  ///< lanes per row (adaptive spmv, and every spmv_t)
  cuda::DeviceBuffer<Index> row_ptr, col_idx;
  cuda::DeviceBuffer<Value> values;

  // Long rows (length > long_threshold): rows split in chunks of kChunk nonzeros.
  std::int64_t long_threshold = csr_gpu::kNoLongRows;
  std::int64_t n_long = 0, n_chunks = 0;
  cuda::DeviceBuffer<std::int64_t> long_rows;       // n_long: row ids
  cuda::DeviceBuffer<std::int64_t> long_chunk_ptr;  // n_long+1: chunks of long row l
  cuda::DeviceBuffer<std::int64_t> chunk_row;       // n_chunks: row of each chunk
  cuda::DeviceBuffer<std::int64_t> chunk_begin;     // n_chunks: first nonzero of each chunk
  mutable cuda::DeviceBuffer<Value> chunk_partial;  // n_chunks: per-chunk sums (workspace)

  // Merge path (kernel == merge only).
  std::int64_t merge_threads = 0;
  cuda::DeviceBuffer<Index> merge_row;         // merge_threads+1: start row of each thread
  mutable cuda::DeviceBuffer<Value> merge_carry;  // merge_threads: partial of the last row
  mutable cuda::DeviceBuffer<Value> merge_head;   // merge_threads: partial of the first row
  std::int64_t n_long_fix = 0;
  cuda::DeviceBuffer<std::int64_t> fix_thread, fix_first;  // n_long_fix: wide fix-ups

  static CsrDevice upload(const CsrStorage<Value, Index>& s);
};

namespace {

using cuda::axpby_store;
using cuda::ldg;

// ---------------------------------------------------------------------------------------------
// SpMV kernels
// ---------------------------------------------------------------------------------------------

// One thread per row (the GCSB thesis's baseline). Uncoalesced for rows longer than ~1: each
// thread walks its own row. Deterministic (storage order).
template <class Value, class Index>
__global__ void __launch_bounds__(csr_gpu::kBlock)
    csr_scalar_kernel(std::int64_t rows, const Index* __restrict__ row_ptr,
                      const Index* __restrict__ col_idx, const Value* __restrict__ values,
                      const Value* __restrict__ x, Value* __restrict__ y, Value alpha, Value beta) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t r = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
       r < rows; r += stride) {
    const std::int64_t end = ldg(row_ptr + r + 1);
    Value s = 0;
    for (std::int64_t k = ldg(row_ptr + r); k < end; ++k)
      s += ldg(values + k) * ldg(x + ldg(col_idx + k));
    axpby_store(y + r, alpha, s, beta);
  }
}

// W lanes per row (W = 32: csr-vector; W = tpr: adaptive). Lane i of a row's group sums
// entries begin+i, begin+i+W, ...; then a fixed shuffle tree. Rows longer than long_threshold
// are skipped (the long-row kernels below own them). Deterministic. Loads of a warp cover
// 32/W consecutive rows, i.e. one contiguous stretch of col_idx/values: coalesced.
template <int W, class Value, class Index>
__global__ void __launch_bounds__(csr_gpu::kBlock)
    csr_subwarp_kernel(std::int64_t rows, const Index* __restrict__ row_ptr,
                       const Index* __restrict__ col_idx, const Value* __restrict__ values,
                       const Value* __restrict__ x, Value* __restrict__ y, Value alpha, Value beta,
                       std::int64_t long_threshold) {
  const int lane = static_cast<int>(threadIdx.x) & (W - 1);
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x / W;
  for (std::int64_t r = (static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) / W;
       r < rows; r += stride) {
    const std::int64_t begin = ldg(row_ptr + r), end = ldg(row_ptr + r + 1);
    if (end - begin > long_threshold) continue;  // uniform over the W lanes of this row
    Value s = 0;
#pragma unroll 2
    for (std::int64_t k = begin + lane; k < end; k += W)
      s += ldg(values + k) * ldg(x + ldg(col_idx + k));
    s = cuda::subwarp_sum<W>(s);
    if (lane == 0) axpby_store(y + r, alpha, s, beta);
  }
}

// Long rows, pass 1: one block per chunk of kChunk nonzeros of a long row; block_sum writes the
// chunk's partial. Deterministic (fixed chunking and tree).
template <class Value, class Index>
__global__ void __launch_bounds__(csr_gpu::kBlock)
    csr_long_chunk_kernel(std::int64_t n_chunks, const std::int64_t* __restrict__ chunk_row,
                          const std::int64_t* __restrict__ chunk_begin,
                          const Index* __restrict__ row_ptr, const Index* __restrict__ col_idx,
                          const Value* __restrict__ values, const Value* __restrict__ x,
                          Value* __restrict__ partial) {
  __shared__ Value shared[32];
  for (std::int64_t c = blockIdx.x; c < n_chunks; c += gridDim.x) {  // block-uniform loop
    const std::int64_t row = chunk_row[c], b = chunk_begin[c];
    const std::int64_t e = min(b + csr_gpu::kChunk, static_cast<std::int64_t>(ldg(row_ptr + row + 1)));
    Value s = 0;
    for (std::int64_t k = b + threadIdx.x; k < e; k += blockDim.x)
      s += ldg(values + k) * ldg(x + ldg(col_idx + k));
    s = cuda::block_sum(s, shared);
    if (threadIdx.x == 0) partial[c] = s;
  }
}

// Long rows, pass 2: one thread per long row sums its chunk partials in chunk order.
template <class Value>
__global__ void csr_long_finish_kernel(std::int64_t n_long, const std::int64_t* __restrict__ rows,
                                       const std::int64_t* __restrict__ chunk_ptr,
                                       const Value* __restrict__ partial, Value* __restrict__ y,
                                       Value alpha, Value beta) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t l = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
       l < n_long; l += stride) {
    Value s = 0;
    for (std::int64_t c = chunk_ptr[l]; c < chunk_ptr[l + 1]; ++c) s += partial[c];
    axpby_store(y + rows[l], alpha, s, beta);
  }
}

// Merge path (Merrill & Garland): thread t consumes merge items [t·IPT, (t+1)·IPT) of the path
// merging row ends with nonzero indices, starting at row merge_row[t] (precomputed in upload),
// nonzero t·IPT − merge_row[t]. Rows begun and finished inside the thread are written to y.
// The first row of thread t > 0, when finished here, goes to head[t]; the unfinished last row's
// partial goes to carry[t]. csr_merge_fixup_kernel then completes y deterministically.
template <class Value, class Index>
__global__ void __launch_bounds__(csr_gpu::kMergeBlock)
    csr_merge_kernel(std::int64_t rows, std::int64_t nnz, std::int64_t n_threads,
                     const Index* __restrict__ merge_row, const Index* __restrict__ row_ptr,
                     const Index* __restrict__ col_idx, const Value* __restrict__ values,
                     const Value* __restrict__ x, Value* __restrict__ y, Value alpha, Value beta,
                     Value* __restrict__ carry, Value* __restrict__ head) {
  const std::int64_t total = rows + nnz;
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t t = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
       t < n_threads; t += stride) {
    const std::int64_t d0 = t * csr_gpu::kMergeIpt;
    const std::int64_t d1 = min(d0 + csr_gpu::kMergeIpt, total);
    const std::int64_t first_row = ldg(merge_row + t);
    std::int64_t row = first_row, nz = d0 - first_row;
    // row < rows whenever an item remains (the last row end is the path's last item).
    std::int64_t row_end = row < rows ? static_cast<std::int64_t>(ldg(row_ptr + row + 1)) : nnz;
    Value s = 0;
    for (std::int64_t d = d0; d < d1; ++d) {
      if (nz < row_end) {
        s += ldg(values + nz) * ldg(x + ldg(col_idx + nz));
        ++nz;
      } else {
        if (t > 0 && row == first_row)
          head[t] = s;
        else
          axpby_store(y + row, alpha, s, beta);
        s = 0;
        ++row;
        row_end = row < rows ? static_cast<std::int64_t>(ldg(row_ptr + row + 1)) : nnz;
      }
    }
    carry[t] = s;
  }
}

// Merge fix-up: thread t > 0 that finished its first row R adds the carries of the threads
// before it whose last row was R (walking back while those threads also started in R), then
// head[t], and writes y[R]. Walks longer than kMaxShortFix carries are left to the wide fix-up.
template <class Value, class Index>
__global__ void csr_merge_fixup_kernel(std::int64_t n_threads, const Index* __restrict__ merge_row,
                                       const Value* __restrict__ carry,
                                       const Value* __restrict__ head, Value* __restrict__ y,
                                       Value alpha, Value beta) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t t = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x + 1;
       t < n_threads; t += stride) {
    const Index r = merge_row[t];
    if (merge_row[t + 1] == r) continue;  // thread t did not finish its first row
    Value s = 0;
    std::int64_t j = t - 1;
    bool wide = false;
    for (int n = 1;; ++n) {
      s += carry[j];
      if (j == 0 || merge_row[j] != r) break;  // thread j started before row r: last piece
      if (n == csr_gpu::kMaxShortFix) {
        wide = true;
        break;
      }
      --j;
    }
    if (!wide) axpby_store(y + r, alpha, s + head[t], beta);
  }
}

// Wide merge fix-ups (rows spanning more than kMaxShortFix+1 threads): one warp per fix-up,
// lanes stride over carries [first, t), fixed shuffle tree, then + head[t]. Deterministic.
template <class Value, class Index>
__global__ void csr_merge_wide_fixup_kernel(std::int64_t n_fix,
                                            const std::int64_t* __restrict__ fix_thread,
                                            const std::int64_t* __restrict__ fix_first,
                                            const Index* __restrict__ merge_row,
                                            const Value* __restrict__ carry,
                                            const Value* __restrict__ head, Value* __restrict__ y,
                                            Value alpha, Value beta) {
  const int lane = threadIdx.x & 31;
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x / 32;
  for (std::int64_t f = (static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
       f < n_fix; f += stride) {
    const std::int64_t t = fix_thread[f];
    Value s = 0;
    for (std::int64_t j = fix_first[f] + lane; j < t; j += 32) s += carry[j];
    s = cuda::subwarp_sum<32>(s);
    if (lane == 0) axpby_store(y + merge_row[t], alpha, s + head[t], beta);
  }
}

// ---------------------------------------------------------------------------------------------
// SpMVᵀ kernels: y (cols) was scaled by beta first; each entry adds alpha*x[r]*v to y[col].
// Atomics: NOT deterministic (the order of the float additions varies from run to run).
// ---------------------------------------------------------------------------------------------

template <int W, class Value, class Index>
__global__ void __launch_bounds__(csr_gpu::kBlock)
    csr_subwarp_t_kernel(std::int64_t rows, const Index* __restrict__ row_ptr,
                         const Index* __restrict__ col_idx, const Value* __restrict__ values,
                         const Value* __restrict__ x, Value* __restrict__ y, Value alpha,
                         std::int64_t long_threshold) {
  const int lane = static_cast<int>(threadIdx.x) & (W - 1);
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x / W;
  for (std::int64_t r = (static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) / W;
       r < rows; r += stride) {
    const std::int64_t begin = ldg(row_ptr + r), end = ldg(row_ptr + r + 1);
    if (end - begin > long_threshold || begin == end) continue;
    const Value xr = alpha * ldg(x + r);
    for (std::int64_t k = begin + lane; k < end; k += W)
      atomicAdd(y + ldg(col_idx + k), ldg(values + k) * xr);
  }
}

template <class Value, class Index>
__global__ void __launch_bounds__(csr_gpu::kBlock)
    csr_long_chunk_t_kernel(std::int64_t n_chunks, const std::int64_t* __restrict__ chunk_row,
                            const std::int64_t* __restrict__ chunk_begin,
                            const Index* __restrict__ row_ptr, const Index* __restrict__ col_idx,
                            const Value* __restrict__ values, const Value* __restrict__ x,
                            Value* __restrict__ y, Value alpha) {
  for (std::int64_t c = blockIdx.x; c < n_chunks; c += gridDim.x) {
    const std::int64_t row = chunk_row[c], b = chunk_begin[c];
    const std::int64_t e = min(b + csr_gpu::kChunk, static_cast<std::int64_t>(ldg(row_ptr + row + 1)));
    const Value xr = alpha * ldg(x + row);
    for (std::int64_t k = b + threadIdx.x; k < e; k += blockDim.x)
      atomicAdd(y + ldg(col_idx + k), ldg(values + k) * xr);
  }
}

// ---------------------------------------------------------------------------------------------
// SpMM (row-major B and C): one warp per row, lane j owns output columns j, j+32, ...
// B: cols×k, C: rows×k (ld = k). Reads of B rows are coalesced across lanes. Deterministic.
// ---------------------------------------------------------------------------------------------
template <class Value, class Index>
__global__ void __launch_bounds__(csr_gpu::kBlock)
    csr_spmm_row_major_kernel(std::int64_t rows, std::int64_t k, const Index* __restrict__ row_ptr,
                              const Index* __restrict__ col_idx, const Value* __restrict__ values,
                              const Value* __restrict__ b, Value* __restrict__ c, Value alpha,
                              Value beta) {
  const int lane = threadIdx.x & 31;
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x / 32;
  for (std::int64_t r = (static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
       r < rows; r += stride) {
    const std::int64_t begin = ldg(row_ptr + r), end = ldg(row_ptr + r + 1);
    for (std::int64_t j = lane; j < k; j += 32) {
      Value s = 0;
      for (std::int64_t p = begin; p < end; ++p)
        s += ldg(values + p) * ldg(b + static_cast<std::int64_t>(ldg(col_idx + p)) * k + j);
      axpby_store(c + r * k + j, alpha, s, beta);
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Launch helpers
// ---------------------------------------------------------------------------------------------

template <int W, class Value, class Index>
void launch_subwarp(const CsrDevice<Value, Index>& d, const Value* x, Value* y, Value alpha,
                    Value beta, std::int64_t long_threshold) {
  csr_subwarp_kernel<W><<<cuda::grid_for(d.rows * W, csr_gpu::kBlock), csr_gpu::kBlock>>>(
      d.rows, d.row_ptr.data(), d.col_idx.data(), d.values.data(), x, y, alpha, beta,
      long_threshold);
  SPMAT_CUDA_CHECK_LAUNCH("csr_subwarp_kernel");
}

template <class Value, class Index>
void dispatch_subwarp(int w, const CsrDevice<Value, Index>& d, const Value* x, Value* y,
                      Value alpha, Value beta, std::int64_t long_threshold) {
  switch (w) {
    case 2: return launch_subwarp<2>(d, x, y, alpha, beta, long_threshold);
    case 4: return launch_subwarp<4>(d, x, y, alpha, beta, long_threshold);
    case 8: return launch_subwarp<8>(d, x, y, alpha, beta, long_threshold);
    case 16: return launch_subwarp<16>(d, x, y, alpha, beta, long_threshold);
    default: return launch_subwarp<32>(d, x, y, alpha, beta, long_threshold);
  }
}

template <int W, class Value, class Index>
void launch_subwarp_t(const CsrDevice<Value, Index>& d, const Value* x, Value* y, Value alpha) {
  csr_subwarp_t_kernel<W><<<cuda::grid_for(d.rows * W, csr_gpu::kBlock), csr_gpu::kBlock>>>(
      d.rows, d.row_ptr.data(), d.col_idx.data(), d.values.data(), x, y, alpha, d.long_threshold);
  SPMAT_CUDA_CHECK_LAUNCH("csr_subwarp_t_kernel");
}

template <class Value, class Index>
void launch_long_rows(const CsrDevice<Value, Index>& d, const Value* x, Value* y, Value alpha,
                      Value beta) {
  if (d.n_long == 0) return;
  const unsigned chunk_grid = cuda::grid_for(d.n_chunks * csr_gpu::kBlock, csr_gpu::kBlock);
  csr_long_chunk_kernel<<<chunk_grid, csr_gpu::kBlock>>>(
      d.n_chunks, d.chunk_row.data(), d.chunk_begin.data(), d.row_ptr.data(), d.col_idx.data(),
      d.values.data(), x, d.chunk_partial.data());
  SPMAT_CUDA_CHECK_LAUNCH("csr_long_chunk_kernel");
  csr_long_finish_kernel<<<cuda::grid_for(d.n_long, 128), 128>>>(
      d.n_long, d.long_rows.data(), d.long_chunk_ptr.data(), d.chunk_partial.data(), y, alpha,
      beta);
  SPMAT_CUDA_CHECK_LAUNCH("csr_long_finish_kernel");
}

template <class Value, class Index>
void launch_merge(const CsrDevice<Value, Index>& d, const Value* x, Value* y, Value alpha,
                  Value beta) {
  csr_merge_kernel<<<cuda::grid_for(d.merge_threads, csr_gpu::kMergeBlock), csr_gpu::kMergeBlock>>>(
      d.rows, d.nnz, d.merge_threads, d.merge_row.data(), d.row_ptr.data(), d.col_idx.data(),
      d.values.data(), x, y, alpha, beta, d.merge_carry.data(), d.merge_head.data());
  SPMAT_CUDA_CHECK_LAUNCH("csr_merge_kernel");
  if (d.merge_threads > 1) {
    csr_merge_fixup_kernel<<<cuda::grid_for(d.merge_threads - 1, 256), 256>>>(
        d.merge_threads, d.merge_row.data(), d.merge_carry.data(), d.merge_head.data(), y, alpha,
        beta);
    SPMAT_CUDA_CHECK_LAUNCH("csr_merge_fixup_kernel");
  }
  if (d.n_long_fix > 0) {
    csr_merge_wide_fixup_kernel<<<cuda::grid_for(d.n_long_fix * 32, 256), 256>>>(
        d.n_long_fix, d.fix_thread.data(), d.fix_first.data(), d.merge_row.data(),
        d.merge_carry.data(), d.merge_head.data(), y, alpha, beta);
    SPMAT_CUDA_CHECK_LAUNCH("csr_merge_wide_fixup_kernel");
  }
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Setup
// ---------------------------------------------------------------------------------------------

template <class Value, class Index>
CsrDevice<Value, Index> CsrDevice<Value, Index>::upload(const CsrStorage<Value, Index>& s) {
  const auto& a = s.a;
  CsrDevice d;
  d.rows = a.rows;
  d.cols = a.cols;
  d.nnz = a.nnz();
  d.kernel = s.kernel;
  d.tpr = s.threads_per_row > 0 ? s.threads_per_row : csr_gpu::threads_per_row(d.rows, d.nnz);
  // Short, even rows: one thread per row beats sub-warps. Measured on an H200, fp64
  // (bench/results/2026-11-22-h200/spmv/spmv_fp64.json): lap2d:2000 (mean 5, max 5) scalar
  // 0.087 ms vs 4 lanes 0.130 ms; G3_circuit (mean 4.8) 0.041 vs 0.055; lap3d:200 (mean 7)
  // 0.231 vs 0.291. With 16/row (random_k, banded:8) sub-warps win (0.27 vs 0.54; 0.106 vs 0.143), and
  // one long row makes the scalar kernel collapse (powerlaw: 182 ms), hence both conditions.
  if (d.kernel == CsrKernel::automatic && s.threads_per_row == 0 && d.rows > 0) {
    std::int64_t max_len = 0;
    for (std::int64_t r = 0; r < d.rows; ++r)
      max_len = std::max<std::int64_t>(max_len, a.row_ptr[r + 1] - a.row_ptr[r]);
    if (d.nnz < 8 * static_cast<std::int64_t>(d.rows) && max_len <= 32) d.kernel = CsrKernel::scalar;
  }
  d.row_ptr = cuda::DeviceBuffer<Index>(a.row_ptr, "csr row_ptr");
  d.col_idx = cuda::DeviceBuffer<Index>(a.col_idx, "csr col_idx");
  d.values = cuda::DeviceBuffer<Value>(a.values, "csr values");

  // Long-row list (used by the adaptive spmv and by every spmv_t).
  const std::int64_t thr = csr_gpu::long_row_threshold(d.rows, d.nnz);
  std::vector<std::int64_t> long_rows, chunk_ptr{0}, chunk_row, chunk_begin;
  for (std::int64_t r = 0; r < d.rows; ++r) {
    const std::int64_t b = a.row_ptr[r], e = a.row_ptr[r + 1];
    if (e - b <= thr) continue;
    long_rows.push_back(r);
    for (std::int64_t c = b; c < e; c += csr_gpu::kChunk) {
      chunk_row.push_back(r);
      chunk_begin.push_back(c);
    }
    chunk_ptr.push_back(static_cast<std::int64_t>(chunk_row.size()));
  }
  if (!long_rows.empty()) {
    d.long_threshold = thr;
    d.n_long = static_cast<std::int64_t>(long_rows.size());
    d.n_chunks = static_cast<std::int64_t>(chunk_row.size());
    d.long_rows = cuda::DeviceBuffer<std::int64_t>(long_rows, "csr long rows");
    d.long_chunk_ptr = cuda::DeviceBuffer<std::int64_t>(chunk_ptr, "csr long-row chunk ptr");
    d.chunk_row = cuda::DeviceBuffer<std::int64_t>(chunk_row, "csr chunk rows");
    d.chunk_begin = cuda::DeviceBuffer<std::int64_t>(chunk_begin, "csr chunk begins");
    d.chunk_partial = cuda::DeviceBuffer<Value>(chunk_row.size(), "csr chunk partials");
  }

  // Merge-path partition: start row of every thread's diagonal, and the wide fix-up list.
  if (s.kernel == CsrKernel::merge && d.rows > 0) {
    const std::int64_t total = d.rows + d.nnz;
    const std::int64_t n = (total + csr_gpu::kMergeIpt - 1) / csr_gpu::kMergeIpt;
    std::vector<Index> mrow(static_cast<std::size_t>(n) + 1);
    const Index* row_end = a.row_ptr.data() + 1;
#pragma omp parallel for schedule(static)
    for (std::int64_t t = 0; t <= n; ++t)
      mrow[t] = static_cast<Index>(cuda::merge_path_search(
          std::min(t * csr_gpu::kMergeIpt, total), row_end, d.rows, d.nnz));
    std::vector<std::int64_t> fix_thread, fix_first;
    for (std::int64_t t = 1; t < n; ++t) {
      if (mrow[t + 1] == mrow[t]) continue;
      // First thread that starts in row mrow[t]; carries come from threads [t0-1, t).
      const std::int64_t t0 = std::lower_bound(mrow.begin(), mrow.begin() + t, mrow[t]) - mrow.begin();
      const std::int64_t first = std::max<std::int64_t>(t0 - 1, 0);
      if (t - first > csr_gpu::kMaxShortFix) {
        fix_thread.push_back(t);
        fix_first.push_back(first);
      }
    }
    d.merge_threads = n;
    d.merge_row = cuda::DeviceBuffer<Index>(mrow, "csr merge-path partition");
    d.merge_carry = cuda::DeviceBuffer<Value>(static_cast<std::size_t>(n), "csr merge carries");
    d.merge_head = cuda::DeviceBuffer<Value>(static_cast<std::size_t>(n), "csr merge heads");
    d.n_long_fix = static_cast<std::int64_t>(fix_thread.size());
    if (d.n_long_fix > 0) {
      d.fix_thread = cuda::DeviceBuffer<std::int64_t>(fix_thread, "csr merge wide fix-ups");
      d.fix_first = cuda::DeviceBuffer<std::int64_t>(fix_first, "csr merge wide fix-ups");
    }
  }
  return d;
}

// ---------------------------------------------------------------------------------------------
// Public entries (found by ADL from DeviceImpl)
// ---------------------------------------------------------------------------------------------

/// y = alpha*A*x + beta*y with the kernel chosen at build time. Example: the 4×4 matrix of
/// csr.hpp with x = {1,1,1,1}, alpha = 1, beta = 0 gives y = {3, 0, 12, 6} with every kernel.
/// Deterministic for all four kernels (no atomics; fixed reduction trees).
template <class Value, class Index>
void spmv(const CsrDevice<Value, Index>& d, const Value* x, Value* y, Value alpha, Value beta) {
  if (d.rows == 0) return;
  switch (d.kernel) {
    case CsrKernel::scalar:
      csr_scalar_kernel<<<cuda::grid_for(d.rows, csr_gpu::kBlock), csr_gpu::kBlock>>>(
          d.rows, d.row_ptr.data(), d.col_idx.data(), d.values.data(), x, y, alpha, beta);
      SPMAT_CUDA_CHECK_LAUNCH("csr_scalar_kernel");
      return;
    case CsrKernel::vector:
      launch_subwarp<32>(d, x, y, alpha, beta, csr_gpu::kNoLongRows);
      return;
    case CsrKernel::merge:
      launch_merge(d, x, y, alpha, beta);
      return;
    case CsrKernel::automatic:
      dispatch_subwarp(d.tpr, d, x, y, alpha, beta, d.long_threshold);
      launch_long_rows(d, x, y, alpha, beta);
      return;
  }
}

/// y = alpha*Aᵀ*x + beta*y (x: rows, y: cols), all kernels: y scaled by beta (beta == 0 writes
/// zeros), then tpr lanes per row scatter with atomicAdd, long rows split in chunks. NOT
/// deterministic (atomic ordering).
template <class Value, class Index>
void spmv_t(const CsrDevice<Value, Index>& d, const Value* x, Value* y, Value alpha, Value beta) {
  cuda::scale_async(y, d.cols, beta);
  if (d.rows == 0 || d.cols == 0 || d.nnz == 0) return;
  switch (d.tpr) {
    case 2: launch_subwarp_t<2>(d, x, y, alpha); break;
    case 4: launch_subwarp_t<4>(d, x, y, alpha); break;
    case 8: launch_subwarp_t<8>(d, x, y, alpha); break;
    case 16: launch_subwarp_t<16>(d, x, y, alpha); break;
    default: launch_subwarp_t<32>(d, x, y, alpha); break;
  }
  if (d.n_long > 0) {
    csr_long_chunk_t_kernel<<<cuda::grid_for(d.n_chunks * csr_gpu::kBlock, csr_gpu::kBlock),
                              csr_gpu::kBlock>>>(d.n_chunks, d.chunk_row.data(),
                                                 d.chunk_begin.data(), d.row_ptr.data(),
                                                 d.col_idx.data(), d.values.data(), x, y, alpha);
    SPMAT_CUDA_CHECK_LAUNCH("csr_long_chunk_t_kernel");
  }
}

/// C = alpha*A*B + beta*C. Row-major: a warp per row, lanes over the k columns. Column-major:
/// column j of C is an SpMV with column j of B (k launches of the build-time SpMV kernel).
/// Deterministic.
template <class Value, class Index>
void spmm(const CsrDevice<Value, Index>& d, const Value* b, Value* c, std::int64_t k,
          DenseLayout layout, Value alpha, Value beta) {
  if (d.rows == 0 || k == 0) return;
  if (layout == DenseLayout::col_major) {
    for (std::int64_t j = 0; j < k; ++j) spmv(d, b + j * d.cols, c + j * d.rows, alpha, beta);
    return;
  }
  csr_spmm_row_major_kernel<<<cuda::grid_for(d.rows * 32, csr_gpu::kBlock), csr_gpu::kBlock>>>(
      d.rows, k, d.row_ptr.data(), d.col_idx.data(), d.values.data(), b, c, alpha, beta);
  SPMAT_CUDA_CHECK_LAUNCH("csr_spmm_row_major_kernel");
}

template <class Value, class Index>
std::unique_ptr<MatrixImpl<Value>> make_cuda_impl(CsrStorage<Value, Index>&& host) {
  return std::make_unique<cuda::DeviceImpl<CsrStorage<Value, Index>, CsrDevice<Value, Index>>>(
      std::move(host));
}

#define SPMAT_INSTANTIATE(V, I) \
  template std::unique_ptr<MatrixImpl<V>> make_cuda_impl(CsrStorage<V, I>&&);
SPMAT_FOR_EACH_TYPE_PAIR(SPMAT_INSTANTIATE)
#undef SPMAT_INSTANTIATE

}  // namespace spmat
