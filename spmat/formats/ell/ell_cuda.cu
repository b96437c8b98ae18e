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

template <class Value, class Index>
std::unique_ptr<MatrixImpl<Value>> make_cuda_impl(Ell<Value, Index>&& host) {
  return std::make_unique<cuda::DeviceImpl<Ell<Value, Index>, EllDevice<Value, Index>>>(
      std::move(host));
}

template <class Value, class Index>
std::unique_ptr<MatrixImpl<Value>> make_cuda_impl(EllDevice<Value, Index>&& d) {
  return std::make_unique<cuda::DeviceOnlyImpl<Ell<Value, Index>, EllDevice<Value, Index>>>(
      std::move(d));
}

#define SPMAT_INSTANTIATE(V, I)                                                  \
  template std::unique_ptr<MatrixImpl<V>> make_cuda_impl(Ell<V, I>&&);    \
  template std::unique_ptr<MatrixImpl<V>> make_cuda_impl(EllDevice<V, I>&&);
SPMAT_FOR_EACH_TYPE_PAIR(SPMAT_INSTANTIATE)
#undef SPMAT_INSTANTIATE

}  // namespace spmat
