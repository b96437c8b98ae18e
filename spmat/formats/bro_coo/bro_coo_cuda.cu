// spmat/formats/bro_coo/bro_coo_cuda.cu — CUDA BRO-COO: a warp per interval decodes its row
// streams (warp-uniform: one width per interval), loads columns and values coalesced, and
// reduces row segments with a warp segmented scan flushed by atomicAdd.
// SPDX-License-Identifier: MIT
//
// Kernel contract: base_row/widths intervals, sym_off intervals+1, symbols sym_off[intervals],
// col_idx/values nnz, x cols (transpose: rows), y rows (transpose: cols), y already scaled by
// beta. At step j lane t holds entry begin+32j+t; the lanes' rows are non-decreasing, so an
// inclusive segmented scan over (row, product) pairs (cuda::warp_segmented_sum) gives each row
// segment's sum in its last lane, which atomically adds alpha·sum to y[row] (one atomic per row segment per step; the
// spec's second reduction kernel is replaced by atomics, spec §10). Lanes past the interval's
// end decode padding (δ = 0) and take part in the uniform loop without touching memory.
// b_q = 0 (a single-row interval) reads no symbols and never shifts by 64. NOT deterministic
// (atomic order). Bytes: storage_bytes + x + y.
#include <climits>

#include "spmat/cuda/device_impl.hpp"
#include "spmat/cuda/primitives.cuh"
#include "spmat/formats/bro_common/bro_symbols.hpp"
#include "spmat/formats/bro_coo/bro_coo_device.hpp"

namespace spmat {

namespace {

using cuda::ldg;
constexpr int kBlock = 256;

template <class Sym, class Value, class Index>
__global__ void __launch_bounds__(kBlock)
    bro_coo_kernel(std::int64_t intervals, std::int64_t nnz, std::int64_t interval,
                   const Index* __restrict__ base_row, const std::uint8_t* __restrict__ widths,
                   const std::int64_t* __restrict__ sym_off, const Sym* __restrict__ syms,
                   const Index* __restrict__ col_idx, const Value* __restrict__ values,
                   const Value* __restrict__ x, Value* __restrict__ y, Value alpha,
                   bool transpose) {
  const int lane = static_cast<int>(threadIdx.x) & 31;
  const int wpb = static_cast<int>(blockDim.x) / 32, wid = static_cast<int>(threadIdx.x) / 32;
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * wpb;
  for (std::int64_t q = static_cast<std::int64_t>(blockIdx.x) * wpb + wid; q < intervals; q += stride) {
    const std::int64_t begin = q * interval;
    const std::int64_t end = min(nnz, begin + interval);
    const std::int64_t steps = (end - begin + 31) / 32;
    const int b = ldg(widths + q);
    long long row = static_cast<long long>(ldg(base_row + q));
    typename bro::ReaderFor<Sym>::type rd(syms + ldg(sym_off + q) + lane, 32);
    for (std::int64_t j = 0; j < steps; ++j) {
      const std::int64_t e = begin + 32 * j + lane;
      row += rd.next(b);  // every lane, every step: the refill stays warp-uniform
      const bool valid = e < end;
      if (transpose) {
        if (valid) atomicAdd(y + ldg(col_idx + e), alpha * ldg(values + e) * ldg(x + row));
        continue;
      }
      // Lanes past the end take a key no row has, so they form their own run.
      const long long key = valid ? row : LLONG_MAX;
      bool tail = false;
      const Value p = cuda::warp_segmented_sum(
          key, valid ? ldg(values + e) * ldg(x + ldg(col_idx + e)) : Value(0), &tail);
      if (valid && tail) atomicAdd(y + row, alpha * p);
    }
  }
}

template <class Sym, class Value, class Index>
void launch(const BroCooDevice<Value, Index>& d, const Sym* syms, const Value* x, Value* y,
            Value alpha, bool transpose) {
  const unsigned grid = cuda::grid_for(d.intervals * 32, kBlock);
  bro_coo_kernel<Sym><<<grid, kBlock, 0, cuda::stream()>>>(d.intervals, d.nnz, d.interval,
      d.base_row.data(), d.widths.data(), d.sym_off.data(), syms, d.col_idx.data(), d.values.data(),
      x, y, alpha, transpose);
  SPMAT_CUDA_CHECK_LAUNCH("bro_coo_kernel");
}

}  // namespace

template <class Value, class Index>
void bro_coo_launch(const BroCooDevice<Value, Index>& d, const Value* x, Value* y, Value alpha,
                    bool transpose) {
  if (d.nnz == 0 || d.intervals == 0) return;
  bro::with_symbols(d, [&](const auto* syms) { launch(d, syms, x, y, alpha, transpose); });
}

/// y = alpha*A*x + beta*y: scale (beta == 0 writes zeros, never reads y), then the warp kernel.
/// NOT deterministic (atomics).
template <class Value, class Index>
void spmv(const BroCooDevice<Value, Index>& d, const Value* x, Value* y, Value alpha, Value beta) {
  cuda::scale_async(y, d.rows, beta);
  bro_coo_launch(d, x, y, alpha, false);
}

template <class Value, class Index>
void spmv_t(const BroCooDevice<Value, Index>& d, const Value* x, Value* y, Value alpha, Value beta) {
  cuda::scale_async(y, d.cols, beta);
  bro_coo_launch(d, x, y, alpha, true);
}

SPMAT_DEFINE_CUDA_IMPL(BroCoo, BroCooDevice)
SPMAT_DEFINE_DEVICE_ONLY_IMPL(BroCoo, BroCooDevice)

#define SPMAT_INSTANTIATE(V, I)                                                          \
  template struct BroCooDevice<V, I>;                                                   \
  template void bro_coo_launch(const BroCooDevice<V, I>&, const V*, V*, V, bool);       \
  template void spmv(const BroCooDevice<V, I>&, const V*, V*, V, V);                    \
  template void spmv_t(const BroCooDevice<V, I>&, const V*, V*, V, V);
SPMAT_FOR_EACH_TYPE_PAIR(SPMAT_INSTANTIATE)
#undef SPMAT_INSTANTIATE

}  // namespace spmat
