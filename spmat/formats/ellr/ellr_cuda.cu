// spmat/formats/ellr/ellr_cuda.cu — CUDA backend of ELLPACK-R: spmv (thread per row, row_len
// iterations) and spmv_t (atomic scatter).
// SPDX-License-Identifier: MIT
#include "spmat/cuda/buffer.hpp"
#include "spmat/cuda/device_impl.hpp"
#include "spmat/formats/ell/ell_kernels.cuh"
#include "spmat/formats/ellr/ellr.hpp"
#include "spmat/formats/ellr/ellr_device.hpp"

namespace spmat {

namespace {

template <class Value, class Index>
__global__ void ellr_spmv_kernel(std::int64_t rows, std::int64_t pitch,
                                 const Index* __restrict__ row_len,
                                 const Index* __restrict__ col_idx,
                                 const Value* __restrict__ values, const Value* __restrict__ x,
                                 Value* __restrict__ y, Value alpha, Value beta) {
  for (std::int64_t r = cuda::global_thread_id(); r < rows; r += cuda::grid_thread_count()) {
    const std::int64_t len = row_len[r];
    Value s = 0;
    for (std::int64_t j = 0; j < len; ++j) {
      const std::int64_t off = j * pitch + r;
      s += values[off] * x[col_idx[off]];
    }
    cuda::axpby_store(&y[r], alpha, s, beta);
  }
}

template <class Value, class Index>
__global__ void ellr_spmv_t_kernel(std::int64_t rows, std::int64_t pitch,
                                   const Index* __restrict__ row_len,
                                   const Index* __restrict__ col_idx,
                                   const Value* __restrict__ values, const Value* __restrict__ x,
                                   Value* __restrict__ y, Value alpha) {
  for (std::int64_t r = cuda::global_thread_id(); r < rows; r += cuda::grid_thread_count()) {
    const std::int64_t len = row_len[r];
    const Value xr = alpha * x[r];
    for (std::int64_t j = 0; j < len; ++j) {
      const std::int64_t off = j * pitch + r;
      atomicAdd(&y[col_idx[off]], values[off] * xr);
    }
  }
}

}  // namespace

// Contract: as ell_cuda.cu. spmv deterministic; spmv_t scales y by beta (beta == 0 writes
// zeros) then scatters with atomicAdd: not deterministic.
template <class Value, class Index>
void spmv(const EllrDevice<Value, Index>& d, const Value* x, Value* y, Value alpha, Value beta) {
  if (d.rows <= 0) return;
  cuda::launch_grid_cover("ellr_spmv_kernel", ellr_spmv_kernel<Value, Index>, d.rows,
                          ell_detail::kBlock, d.rows, d.pitch, d.row_len.data(), d.col_idx.data(),
                          d.values.data(), x, y, alpha, beta);
}

template <class Value, class Index>
void spmv_t(const EllrDevice<Value, Index>& d, const Value* x, Value* y, Value alpha, Value beta) {
  cuda::scale_async(y, d.cols, beta);
  if (d.rows <= 0 || d.col_idx.size() == 0) return;
  cuda::launch_grid_cover("ellr_spmv_t_kernel", ellr_spmv_t_kernel<Value, Index>, d.rows,
                          ell_detail::kBlock, d.rows, d.pitch, d.row_len.data(), d.col_idx.data(),
                          d.values.data(), x, y, alpha);
}

SPMAT_DEFINE_CUDA_IMPL(Ellr, EllrDevice)
SPMAT_DEFINE_DEVICE_ONLY_IMPL(Ellr, EllrDevice)

}  // namespace spmat
