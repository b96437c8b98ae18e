// spmat/formats/sell/sell_cuda.cu — CUDA backend of SELL-C-σ: spmv (one thread per row within its
// chunk) and spmv_t (atomic scatter).
// SPDX-License-Identifier: MIT
#include "spmat/cuda/buffer.hpp"
#include "spmat/cuda/device_impl.hpp"
#include "spmat/formats/ell/ell_kernels.cuh"
#include "spmat/formats/sell/sell.hpp"
#include "spmat/formats/sell/sell_device.hpp"

namespace spmat {

namespace {

// Thread p handles sorted position p: chunk p / C, lane p % C. With C = 32 (and blocks of 256)
// a warp is exactly one chunk: its loads of slot j are 32 consecutive entries. spmv: the row's
// sum into y[perm[p]] (alpha, beta applied); Transposed (spmv_t): alpha*v*x[perm[p]] added to
// y[col] with atomicAdd (y scaled by beta beforehand; beta unused).
template <bool Transposed, class Value, class Index>
__global__ void sell_kernel(std::int64_t rows, std::int64_t C, const Index* __restrict__ perm,
                            const std::int64_t* __restrict__ chunk_ptr,
                            const Index* __restrict__ chunk_len, const Index* __restrict__ col_idx,
                            const Value* __restrict__ values, const Value* __restrict__ x,
                            Value* __restrict__ y, Value alpha, Value beta) {
  for (std::int64_t p = cuda::global_thread_id(); p < rows; p += cuda::grid_thread_count()) {
    const std::int64_t c = p / C;
    const std::int64_t base = chunk_ptr[c] + (p - c * C);
    const std::int64_t len = chunk_len[c];
    if constexpr (Transposed) {
      const Value xr = alpha * x[perm[p]];
      for (std::int64_t j = 0; j < len; ++j) {
        const std::int64_t off = base + j * C;
        const Index col = col_idx[off];
        if (col == static_cast<Index>(kEllPadding)) break;
        atomicAdd(&y[col], values[off] * xr);
      }
    } else {
      Value s = 0;
      for (std::int64_t j = 0; j < len; ++j) {
        const std::int64_t off = base + j * C;
        const Index col = col_idx[off];
        if (col == static_cast<Index>(kEllPadding)) break;
        s += values[off] * x[col];
      }
      const std::int64_t r = perm[p];
      cuda::axpby_store(&y[r], alpha, s, beta);
    }
  }
}

/// The launch of sell_kernel over the rows, named `name` in a launch failure.
template <bool Transposed, class Value, class Index>
void launch_sell(cuda::LaunchSite name, const SellDevice<Value, Index>& d, const Value* x, Value* y,
                 Value alpha, Value beta) {
  cuda::launch_grid_cover(name, sell_kernel<Transposed, Value, Index>, d.rows, ell_detail::kBlock,
                          d.rows, d.chunk, d.perm.data(), d.chunk_ptr.data(), d.chunk_len.data(),
                          d.col_idx.data(), d.values.data(), x, y, alpha, beta);
}

}  // namespace

// Contract: as ell_cuda.cu, y in the original row order. spmv deterministic; spmv_t scales y by
// beta (beta == 0 writes zeros) then scatters with atomicAdd: not deterministic.
template <class Value, class Index>
void spmv(const SellDevice<Value, Index>& d, const Value* x, Value* y, Value alpha, Value beta) {
  if (d.rows <= 0) return;
  launch_sell<false>("sell_spmv_kernel", d, x, y, alpha, beta);
}

template <class Value, class Index>
void spmv_t(const SellDevice<Value, Index>& d, const Value* x, Value* y, Value alpha, Value beta) {
  cuda::scale_async(y, d.cols, beta);
  if (d.rows <= 0 || d.col_idx.size() == 0) return;
  launch_sell<true>("sell_spmv_t_kernel", d, x, y, alpha, beta);
}

SPMAT_DEFINE_CUDA_IMPL(Sell, SellDevice)
SPMAT_DEFINE_DEVICE_ONLY_IMPL(Sell, SellDevice)

}  // namespace spmat
