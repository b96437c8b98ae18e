// spmat/formats/ell/ell_cuda.cu — CUDA backend of ELLPACK: upload, spmv (thread per row), spmv_t.
// SPDX-License-Identifier: MIT
#include "spmat/cuda/buffer.hpp"
#include "spmat/cuda/device_impl.hpp"
#include "spmat/formats/ell/ell.hpp"
#include "spmat/formats/ell/ell_device.hpp"
#include "spmat/formats/ell/ell_kernels.cuh"

namespace spmat {

// Contract: x, y device arrays (x: cols, y: rows for spmv; swapped for spmv_t), caller-owned.
// spmv: deterministic (each thread sums its row in slot order). spmv_t: y = beta*y first (beta
// == 0 writes zeros, never reads y), then atomicAdd scatter: not deterministic.
template <class Value, class Index>
void spmv(const EllDevice<Value, Index>& d, const Value* x, Value* y, Value alpha, Value beta) {
  ell_detail::ell_spmv(d.rows, d.width, d.pitch, d.col_idx.data(), d.values.data(), x, y, alpha,
                       beta);
}

template <class Value, class Index>
void spmv_t(const EllDevice<Value, Index>& d, const Value* x, Value* y, Value alpha, Value beta) {
  cuda::scale_async(y, d.cols, beta);
  ell_detail::ell_spmv_t_scatter(d.rows, d.width, d.pitch, d.col_idx.data(), d.values.data(), x,
                                 y, alpha);
}

SPMAT_DEFINE_CUDA_IMPL(Ell, EllDevice)
SPMAT_DEFINE_DEVICE_ONLY_IMPL(Ell, EllDevice)

}  // namespace spmat
