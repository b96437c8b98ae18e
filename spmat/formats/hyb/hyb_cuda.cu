// spmat/formats/hyb/hyb_cuda.cu — CUDA backend of HYB: ELL kernel, then a warp-segmented COO tail.
// SPDX-License-Identifier: MIT
#include "spmat/cuda/buffer.hpp"
#include "spmat/cuda/device_impl.hpp"
#include "spmat/formats/ell/ell_kernels.cuh"
#include "spmat/formats/hyb/hyb.hpp"
#include "spmat/formats/hyb/hyb_device.hpp"

namespace spmat {

namespace {

// y[row] += alpha * Σ over the COO entries of row. Each warp takes 32 consecutive entries per
// step; a keyed segmented scan over the lanes (rows are sorted, so equal rows are contiguous)
// leaves each row-run's sum in its last lane, which adds it with one atomicAdd. Runs of one row
// that span several warps/steps meet in atomics: not deterministic.
template <class Value, class Index>
__global__ void hyb_coo_spmv_kernel(std::int64_t n, const Index* __restrict__ row,
                                    const Index* __restrict__ col,
                                    const Value* __restrict__ val, const Value* __restrict__ x,
                                    Value* __restrict__ y, Value alpha) {
  const int lane = cuda::lane_id();
  const std::int64_t warp = cuda::global_thread_id() / 32;
  const std::int64_t warps = cuda::grid_thread_count() / 32;
  for (std::int64_t base = warp * 32; base < n; base += warps * 32) {  // warp-uniform loop
    const std::int64_t i = base + lane;
    const bool valid = i < n;
    // Lanes past the end take row -1, which no entry has: they form their own run.
    const long long r = valid ? static_cast<long long>(row[i]) : -1;
    bool tail = false;
    const Value v = cuda::warp_segmented_sum(r, valid ? val[i] * x[col[i]] : Value(0), &tail);
    if (valid && tail) atomicAdd(&y[r], alpha * v);
  }
}

template <class Value, class Index>
__global__ void hyb_coo_spmv_t_kernel(std::int64_t n, const Index* __restrict__ row,
                                      const Index* __restrict__ col,
                                      const Value* __restrict__ val, const Value* __restrict__ x,
                                      Value* __restrict__ y, Value alpha) {
  for (std::int64_t i = cuda::global_thread_id(); i < n; i += cuda::grid_thread_count())
    atomicAdd(&y[col[i]], alpha * (val[i] * x[row[i]]));
}

}  // namespace

// Contract: as ell_cuda.cu. spmv: the ELL kernel writes every y[r] = alpha*Σ_ELL + beta*y[r]
// (beta == 0 never reads y), then the COO kernel adds alpha*Σ_COO with atomics. spmv_t: y =
// beta*y, then both parts scatter with atomicAdd. Neither is deterministic.
template <class Value, class Index>
void spmv(const HybDevice<Value, Index>& d, const Value* x, Value* y, Value alpha, Value beta) {
  ell_detail::ell_spmv(d.rows, d.width, d.pitch, d.ell_col.data(), d.ell_val.data(), x, y, alpha,
                       beta);
  if (d.coo_nnz == 0) return;
  cuda::launch_grid_cover("hyb_coo_spmv_kernel", hyb_coo_spmv_kernel<Value, Index>, d.coo_nnz,
                          ell_detail::kBlock, d.coo_nnz, d.coo_row.data(), d.coo_col.data(),
                          d.coo_val.data(), x, y, alpha);
}

template <class Value, class Index>
void spmv_t(const HybDevice<Value, Index>& d, const Value* x, Value* y, Value alpha, Value beta) {
  cuda::scale_async(y, d.cols, beta);
  ell_detail::ell_spmv_t_scatter(d.rows, d.width, d.pitch, d.ell_col.data(), d.ell_val.data(), x,
                                 y, alpha);
  if (d.coo_nnz == 0) return;
  cuda::launch_grid_cover("hyb_coo_spmv_t_kernel", hyb_coo_spmv_t_kernel<Value, Index>, d.coo_nnz,
                          ell_detail::kBlock, d.coo_nnz, d.coo_row.data(), d.coo_col.data(),
                          d.coo_val.data(), x, y, alpha);
}

SPMAT_DEFINE_CUDA_IMPL(Hyb, HybDevice)
SPMAT_DEFINE_DEVICE_ONLY_IMPL(Hyb, HybDevice)

}  // namespace spmat
