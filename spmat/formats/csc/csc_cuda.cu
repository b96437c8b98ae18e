// spmat/formats/csc/csc_cuda.cu — CUDA kernels of CSC: sub-warp column gather (spmv_t), atomic scatter (spmv).
// SPDX-License-Identifier: MIT
#include "spmat/cuda/buffer.hpp"
#include "spmat/cuda/device_impl.hpp"
#include "spmat/cuda/primitives.cuh"
#include "spmat/formats/csc/csc.hpp"
#include "spmat/formats/csc/csc_device.hpp"

namespace spmat {

namespace {
constexpr int kBlock = 256;

/// y[c] = alpha * Σ_k values[k]·x[row_idx[k]] + beta*y[c] over column c's entries, `lanes`
/// consecutive lanes per column, strided partial sums then a warp_sum (fixed order). The loop
/// runs per warp (all 32 lanes together) because warp_sum shuffles with the full mask.
template <class Value, class Index>
__global__ void csc_gather_kernel(std::int64_t cols, int lanes, const Index* __restrict__ col_ptr,
                                  const Index* __restrict__ row_idx,
                                  const Value* __restrict__ values, const Value* __restrict__ x,
                                  Value* __restrict__ y, Value alpha, Value beta) {
  const int lane = cuda::lane_id();
  const int sub = lane % lanes;
  const std::int64_t cols_per_warp = cuda::kWarpSize / lanes;
  const std::int64_t warp = cuda::global_thread_id() / cuda::kWarpSize;
  const std::int64_t warps = cuda::grid_thread_count() / cuda::kWarpSize;
  for (std::int64_t base = warp * cols_per_warp; base < cols; base += warps * cols_per_warp) {
    const std::int64_t c = base + lane / lanes;
    Value sum = 0;
    if (c < cols) {
      const std::int64_t end = col_ptr[c + 1];
      for (std::int64_t k = col_ptr[c] + sub; k < end; k += lanes) sum += values[k] * x[row_idx[k]];
    }
    sum = cuda::warp_sum(sum, lanes);
    if (c < cols && sub == 0) cuda::axpby_store(&y[c], alpha, sum, beta);
  }
}

/// For every column c: y[row_idx[k]] += values[k] * (alpha*x[c]) with atomicAdd. Grid-stride.
template <class Value, class Index>
__global__ void csc_scatter_kernel(std::int64_t cols, const Index* __restrict__ col_ptr,
                                   const Index* __restrict__ row_idx,
                                   const Value* __restrict__ values, const Value* __restrict__ x,
                                   Value* y, Value alpha) {
  for (std::int64_t c = cuda::global_thread_id(); c < cols; c += cuda::grid_thread_count()) {
    const Value xc = alpha * x[c];
    const std::int64_t end = col_ptr[c + 1];
    for (std::int64_t k = col_ptr[c]; k < end; ++k) atomicAdd(&y[row_idx[k]], values[k] * xc);
  }
}

}  // namespace

// Contract: x has rows entries, y cols entries (device, caller-allocated). Deterministic
// (no atomics; fixed per-lane strides and butterfly sum). Empty columns get alpha*0 + beta*y
// (beta == 0: y not read). Bytes: traffic_bytes.
template <class Value, class Index>
void spmv_t(const CscDevice<Value, Index>& d, const Value* x, Value* y, Value alpha, Value beta) {
  if (d.cols == 0) return;
  const std::int64_t threads = (d.cols + (cuda::kWarpSize / d.lanes) - 1) /
                               (cuda::kWarpSize / d.lanes) * cuda::kWarpSize;
  cuda::launch_grid_for("csc_gather_kernel", csc_gather_kernel<Value, Index>, threads, kBlock,
                        d.cols, d.lanes, d.col_ptr.data(), d.row_idx.data(), d.values.data(), x, y,
                        alpha, beta);
}

// Contract: x has cols entries, y rows entries (device). y is scaled by beta first (beta == 0
// writes zeros without reading y), then one thread per column scatters with atomicAdd:
// NOT deterministic. Bytes: traffic_bytes plus one extra read+write of y.
template <class Value, class Index>
void spmv(const CscDevice<Value, Index>& d, const Value* x, Value* y, Value alpha, Value beta) {
  if (d.rows == 0) return;
  cuda::scale_async(y, d.rows, beta);
  if (d.nnz == 0) return;
  cuda::launch_grid_for("csc_scatter_kernel", csc_scatter_kernel<Value, Index>, d.cols, kBlock,
                        d.cols, d.col_ptr.data(), d.row_idx.data(), d.values.data(), x, y, alpha);
}

SPMAT_DEFINE_CUDA_IMPL(CscStorage, CscDevice)
SPMAT_DEFINE_DEVICE_ONLY_IMPL(CscStorage, CscDevice)

}  // namespace spmat
