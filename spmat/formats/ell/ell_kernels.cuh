// spmat/formats/ell/ell_kernels.cuh — CUDA kernels shared by the ELL family (ell, ellr, sell, hyb).
// SPDX-License-Identifier: MIT
//
// Internal header (included by the family's _cuda.cu files only). Every kernel uses a
// grid-stride loop over 64-bit positions, so any size runs with a capped grid; slot offsets
// j*pitch + i are computed in 64 bits. Launch helpers never launch an empty grid.
#pragma once
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "spmat/cuda/check.hpp"
#include "spmat/formats/ell/ell.hpp"

namespace spmat::ell_detail {

/// 256 threads = 8 warps per block: the usual choice for one-thread-per-row SpMV (CUSP, the
/// BRO paper's ELL baseline); not tuned here.
constexpr int kBlock = 256;

/// Blocks for n threads of work, capped (grid-stride loops cover the rest). n > 0.
inline unsigned grid_for(std::int64_t n) {
  const std::int64_t b = (n + kBlock - 1) / kBlock;
  return static_cast<unsigned>(std::min<std::int64_t>(b, 1 << 20));
}

__device__ inline std::int64_t global_thread() {
  return static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
}
__device__ inline std::int64_t grid_threads() {
  return static_cast<std::int64_t>(gridDim.x) * blockDim.x;
}

/// y[i] = beta*y[i] (beta == 0 writes 0 without reading y).
template <class Value>
__global__ void scale_kernel(std::int64_t n, Value* __restrict__ y, Value beta) {
  for (std::int64_t i = global_thread(); i < n; i += grid_threads())
    y[i] = beta == Value(0) ? Value(0) : beta * y[i];
}

template <class Value>
void scale(std::int64_t n, Value* y, Value beta) {
  if (n <= 0) return;
  scale_kernel<<<grid_for(n), kBlock>>>(n, y, beta);
  SPMAT_CUDA_CHECK_LAUNCH("ell_detail::scale_kernel");
}

/// ELL spmv, one thread per row: y[r] = alpha*Σ + beta*y[r]. Rows are left-packed, so the
/// first padding slot ends the row. A warp reads 32 consecutive slots of one column j.
template <class Value, class Index>
__global__ void ell_spmv_kernel(std::int64_t rows, std::int64_t width, std::int64_t pitch,
                                const Index* __restrict__ col_idx,
                                const Value* __restrict__ values, const Value* __restrict__ x,
                                Value* __restrict__ y, Value alpha, Value beta) {
  for (std::int64_t r = global_thread(); r < rows; r += grid_threads()) {
    Value s = 0;
    for (std::int64_t j = 0; j < width; ++j) {
      const std::int64_t off = j * pitch + r;
      const Index c = col_idx[off];
      if (c == static_cast<Index>(kEllPadding)) break;
      s += values[off] * x[c];
    }
    y[r] = beta == Value(0) ? alpha * s : alpha * s + beta * y[r];
  }
}

/// ELL spmv_t scatter: y[col] += alpha*x[r]*value, atomically (y scaled by beta beforehand).
template <class Value, class Index>
__global__ void ell_spmv_t_kernel(std::int64_t rows, std::int64_t width, std::int64_t pitch,
                                  const Index* __restrict__ col_idx,
                                  const Value* __restrict__ values, const Value* __restrict__ x,
                                  Value* __restrict__ y, Value alpha) {
  for (std::int64_t r = global_thread(); r < rows; r += grid_threads()) {
    const Value xr = alpha * x[r];
    for (std::int64_t j = 0; j < width; ++j) {
      const std::int64_t off = j * pitch + r;
      const Index c = col_idx[off];
      if (c == static_cast<Index>(kEllPadding)) break;
      atomicAdd(&y[c], values[off] * xr);
    }
  }
}

template <class Value, class Index>
void ell_spmv(std::int64_t rows, std::int64_t width, std::int64_t pitch, const Index* col_idx,
              const Value* values, const Value* x, Value* y, Value alpha, Value beta) {
  if (rows <= 0) return;
  ell_spmv_kernel<<<grid_for(rows), kBlock>>>(rows, width, pitch, col_idx, values, x, y, alpha,
                                              beta);
  SPMAT_CUDA_CHECK_LAUNCH("ell_spmv_kernel");
}

/// Scatter only (the caller scales y first).
template <class Value, class Index>
void ell_spmv_t_scatter(std::int64_t rows, std::int64_t width, std::int64_t pitch,
                        const Index* col_idx, const Value* values, const Value* x, Value* y,
                        Value alpha) {
  if (rows <= 0 || width <= 0) return;
  ell_spmv_t_kernel<<<grid_for(rows), kBlock>>>(rows, width, pitch, col_idx, values, x, y, alpha);
  SPMAT_CUDA_CHECK_LAUNCH("ell_spmv_t_kernel");
}

}  // namespace spmat::ell_detail
