// spmat/formats/bro_hyb/bro_hyb_cuda.cu — CUDA BRO-HYB: the BRO-ELL kernel writes every row,
// then the BRO-COO kernel adds the overflow with atomics (CUSP's HYB order, spec §5).
// SPDX-License-Identifier: MIT
//
// Contract: as bro_ell_cuda.cu and bro_coo_cuda.cu. spmv: ELL pass y = alpha*s + beta*y (beta
// == 0 never reads y), then COO pass y[row] += alpha*Σ. spmv_t: y scaled by beta, then both
// parts scatter with atomicAdd. NOT deterministic when the COO part is non-empty (spmv) or at
// all (spmv_t). Bytes: storage_bytes + x + y.
#include "spmat/cuda/device_impl.hpp"
#include "spmat/cuda/primitives.cuh"
#include "spmat/formats/bro_hyb/bro_hyb_device.hpp"

namespace spmat {

template <class Value, class Index>
void spmv(const BroHybDevice<Value, Index>& d, const Value* x, Value* y, Value alpha, Value beta) {
  if (d.rows == 0) return;
  bro_ell_launch_spmv(d.ell, x, y, alpha, beta);  // writes all rows
  bro_coo_launch(d.coo, x, y, alpha, false);
}

template <class Value, class Index>
void spmv_t(const BroHybDevice<Value, Index>& d, const Value* x, Value* y, Value alpha, Value beta) {
  cuda::scale_async(y, d.cols, beta);
  bro_ell_launch_spmv_t(d.ell, x, y, alpha);
  bro_coo_launch(d.coo, x, y, alpha, true);
}

SPMAT_DEFINE_CUDA_IMPL(BroHyb, BroHybDevice)
SPMAT_DEFINE_DEVICE_ONLY_IMPL(BroHyb, BroHybDevice)

}  // namespace spmat
