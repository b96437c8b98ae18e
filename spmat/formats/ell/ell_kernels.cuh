// spmat/formats/ell/ell_kernels.cuh — CUDA kernels shared by the ELL family (ell, ellr, sell, hyb).
// SPDX-License-Identifier: MIT
//
// Internal header (included by the family's _cuda.cu files only). Every kernel uses a
// grid-stride loop over 64-bit positions, so any size runs with a capped grid; slot offsets
// j*pitch + i are computed in 64 bits. Launch helpers never launch an empty grid. The launch
// policy, the epilogue and y's pre-scaling (cuda::scale_async) come from spmat/cuda/primitives.cuh.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

#include "spmat/cuda/check.hpp"
#include "spmat/cuda/primitives.cuh"
#include "spmat/formats/ell/ell.hpp"

namespace spmat::ell_detail {

/// 256 threads = 8 warps per block: the usual choice for one-thread-per-row SpMV (CUSP, the
/// BRO paper's ELL baseline); not tuned here.
constexpr int kBlock = 256;

/// ELL spmv, one thread per row: y[r] = alpha*Σ + beta*y[r]. Rows are left-packed, so the
/// first padding slot ends the row. A warp reads 32 consecutive slots of one column j.
template <class Value, class Index>
__global__ void ell_spmv_kernel(std::int64_t rows, std::int64_t width, std::int64_t pitch,
                                const Index* __restrict__ col_idx,
                                const Value* __restrict__ values, const Value* __restrict__ x,
                                Value* __restrict__ y, Value alpha, Value beta) {
  for (std::int64_t r = cuda::global_thread_id(); r < rows; r += cuda::grid_thread_count()) {
    Value s = 0;
    for (std::int64_t j = 0; j < width; ++j) {
      const std::int64_t off = j * pitch + r;
      const Index c = col_idx[off];
      if (c == static_cast<Index>(kEllPadding)) break;
      s += values[off] * x[c];
    }
    cuda::axpby_store(&y[r], alpha, s, beta);
  }
}

/// ELL spmv_t scatter: y[col] += alpha*x[r]*value, atomically (y scaled by beta beforehand).
template <class Value, class Index>
__global__ void ell_spmv_t_kernel(std::int64_t rows, std::int64_t width, std::int64_t pitch,
                                  const Index* __restrict__ col_idx,
                                  const Value* __restrict__ values, const Value* __restrict__ x,
                                  Value* __restrict__ y, Value alpha) {
  for (std::int64_t r = cuda::global_thread_id(); r < rows; r += cuda::grid_thread_count()) {
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
  cuda::launch_grid_cover("ell_spmv_kernel", ell_spmv_kernel<Value, Index>, rows, kBlock, rows,
                          width, pitch, col_idx, values, x, y, alpha, beta);
}

/// Scatter only (the caller scales y first).
template <class Value, class Index>
void ell_spmv_t_scatter(std::int64_t rows, std::int64_t width, std::int64_t pitch,
                        const Index* col_idx, const Value* values, const Value* x, Value* y,
                        Value alpha) {
  if (rows <= 0 || width <= 0) return;
  cuda::launch_grid_cover("ell_spmv_t_kernel", ell_spmv_t_kernel<Value, Index>, rows, kBlock, rows,
                          width, pitch, col_idx, values, x, y, alpha);
}

}  // namespace spmat::ell_detail
