// spmat/formats/bro_csr/bro_csr_cuda.cu — CUDA BRO-CSR: a sub-warp of W lanes per row decodes
// its lane streams on the fly (SpMV, fixed shuffle tree), and SpMVᵀ through the same decode
// with atomicAdd.
// SPDX-License-Identifier: MIT
//
// Kernel contract (both kernels): row_ptr rows+1, values nnz, base groups, width_off/sym_off
// groups+1, widths Σ steps_g, symbols sym_off[groups]; x cols (spmv_t: rows), y rows (spmv_t:
// cols); all device memory, allocated by upload (matrix) or the caller (x, y). One warp per
// group of G = 32/W rows (grid-stride over groups); lane t owns row g·G + t/W and its entries
// i, i+W, ... (i = t mod W) — the csr sub-warp mapping, so values load coalesced. Widths are
// uint8 in global memory, one broadcast load per step for the whole warp, and the refill
// branch depends only on them: warp-uniform. Lanes past their row's end (or past `rows`) decode
// zeros and skip the multiply. Explicit zeros are multiplied; empty rows give y = beta*y
// (beta == 0 never reads y). spmv deterministic (lane sums in order, fixed subwarp_sum tree);
// spmv_t NOT (atomicAdd order). Offsets 64-bit. Bytes: storage_bytes + x (gathered) + y.
#include <algorithm>

#include "spmat/cuda/buffer.hpp"
#include "spmat/cuda/device_impl.hpp"
#include "spmat/cuda/primitives.cuh"
#include "spmat/formats/bro_common/bro_symbols.hpp"
#include "spmat/formats/bro_csr/bro_csr.hpp"

namespace spmat {

template <class Value, class Index>
struct BroCsrDevice {
  std::int64_t rows = 0, cols = 0, groups = 0;
  int tpr = 4, sym_len = 32;
  cuda::DeviceBuffer<Index> row_ptr, base;              // rows+1, groups
  cuda::DeviceBuffer<Value> values;                     // nnz
  cuda::DeviceBuffer<std::int64_t> width_off, sym_off;  // groups+1 each
  cuda::DeviceBuffer<std::uint8_t> widths;              // Σ steps
  cuda::DeviceBuffer<std::uint32_t> sym32;              // sym_len == 32
  cuda::DeviceBuffer<std::uint64_t> sym64;              // sym_len == 64

  /// Every device byte held (spmat/cuda/device_impl.hpp).
  std::size_t storage_bytes() const {
    return row_ptr.bytes() + base.bytes() + values.bytes() + width_off.bytes() + sym_off.bytes() +
           widths.bytes() + sym32.bytes() + sym64.bytes();
  }

  static BroCsrDevice upload(const BroCsr<Value, Index>& m);
};

namespace {

using cuda::axpby_store;
using cuda::ldg;

constexpr int kBlock = 256;  ///< 8 warps = 8 groups per block, as csr's row kernels

template <int W, class Value>
__device__ __forceinline__ Value group_sum(Value v) {
  if constexpr (W == 1)
    return v;
  else
    return cuda::subwarp_sum<W>(v);
}

template <int W, bool Transpose, class Sym, class Value, class Index>
__global__ void __launch_bounds__(kBlock)
    bro_csr_kernel(std::int64_t groups, std::int64_t rows, const Index* __restrict__ row_ptr,
                   const Index* __restrict__ base, const std::int64_t* __restrict__ width_off,
                   const std::uint8_t* __restrict__ widths, const std::int64_t* __restrict__ sym_off,
                   const Sym* __restrict__ syms, const Value* __restrict__ values,
                   const Value* __restrict__ x, Value* __restrict__ y, Value alpha, Value beta) {
  constexpr int kRowsPerGroup = 32 / W;
  const int t = static_cast<int>(threadIdx.x) & 31, i = t % W;
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * (kBlock / 32);
  for (std::int64_t g = (static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
       g < groups; g += stride) {  // warp-uniform loop
    const std::int64_t r = g * kRowsPerGroup + t / W;
    std::int64_t e = 0, end = 0;
    if (r < rows) {
      e = static_cast<std::int64_t>(ldg(row_ptr + r)) + i;
      end = ldg(row_ptr + r + 1);
    }
    const std::int64_t wo = ldg(width_off + g), steps = ldg(width_off + g + 1) - wo;
    typename bro::ReaderFor<Sym>::type rd(syms + ldg(sym_off + g) + t, 32);
    std::int64_t col = static_cast<std::int64_t>(ldg(base + g)) + i - W;
    Value acc = 0;
    if constexpr (Transpose) {
      if (r < rows) acc = alpha * ldg(x + r);
    }
    for (std::int64_t j = 0; j < steps; ++j, e += W) {
      col += static_cast<std::int64_t>(rd.next(ldg(widths + wo + j))) + W;
      if (e < end) {
        if constexpr (Transpose)
          atomicAdd(y + col, ldg(values + e) * acc);
        else
          acc += ldg(values + e) * ldg(x + col);
      }
    }
    if constexpr (!Transpose) {
      acc = group_sum<W>(acc);
      if (i == 0 && r < rows) axpby_store(y + r, alpha, acc, beta);
    }
  }
}

template <int W, bool Transpose, class Value, class Index>
void launch_w(const BroCsrDevice<Value, Index>& d, const Value* x, Value* y, Value alpha,
              Value beta) {
  const unsigned grid = cuda::grid_for(d.groups * 32, kBlock);
  bro::with_symbols(d, [&](const auto* syms) {
    bro_csr_kernel<W, Transpose><<<grid, kBlock, 0, cuda::stream()>>>(
        d.groups, d.rows, d.row_ptr.data(), d.base.data(), d.width_off.data(), d.widths.data(),
        d.sym_off.data(), syms, d.values.data(), x, y, alpha, beta);
  });
  if constexpr (Transpose)
    SPMAT_CUDA_CHECK_LAUNCH("bro_csr_kernel (spmv_t)");
  else
    SPMAT_CUDA_CHECK_LAUNCH("bro_csr_kernel (spmv)");
}

template <bool Transpose, class Value, class Index>
void launch(const BroCsrDevice<Value, Index>& d, const Value* x, Value* y, Value alpha, Value beta) {
  switch (d.tpr) {
    case 1: return launch_w<1, Transpose>(d, x, y, alpha, beta);
    case 2: return launch_w<2, Transpose>(d, x, y, alpha, beta);
    case 4: return launch_w<4, Transpose>(d, x, y, alpha, beta);
    case 8: return launch_w<8, Transpose>(d, x, y, alpha, beta);
    case 16: return launch_w<16, Transpose>(d, x, y, alpha, beta);
    default: return launch_w<32, Transpose>(d, x, y, alpha, beta);
  }
}

}  // namespace

template <class Value, class Index>
BroCsrDevice<Value, Index> BroCsrDevice<Value, Index>::upload(const BroCsr<Value, Index>& m) {
  BroCsrDevice d;
  d.rows = m.rows;
  d.cols = m.cols;
  d.groups = m.groups();
  d.tpr = m.tpr;
  d.sym_len = m.sym_len;
  if (m.tpr < 1 || m.tpr > 32 || (m.tpr & (m.tpr - 1)) != 0 || (m.sym_len != 32 && m.sym_len != 64))
    throw UnsupportedError("bro-csr: the CUDA kernels need tpr a power of two in 1..32 and "
                           "sym_len 32 or 64");
  cuda::upload_arrays(
      "bro-csr",
      std::tuple{cuda::Field{"row_ptr", d.row_ptr}, cuda::Field{"group bases", d.base},
                 cuda::Field{"values", d.values}, cuda::Field{"width offsets", d.width_off},
                 cuda::Field{"symbol offsets", d.sym_off}, cuda::Field{"bit widths", d.widths},
                 cuda::Field{"symbols", d.sym32}, cuda::Field{"symbols", d.sym64}},
      std::tie(m.row_ptr, m.base, m.values, m.width_off, m.sym_off, m.widths, m.sym32, m.sym64));
  return d;
}

/// y = alpha*A*x + beta*y. Example: the paper's 4×5 matrix (bro_csr.hpp) with x = (1,2,3,4,5)
/// gives y = (9, 50, 64, 47) for every tpr. Deterministic.
template <class Value, class Index>
void spmv(const BroCsrDevice<Value, Index>& d, const Value* x, Value* y, Value alpha, Value beta) {
  if (d.groups == 0) return;
  launch<false>(d, x, y, alpha, beta);
}

/// y = alpha*Aᵀ*x + beta*y: y scaled by beta (beta == 0 writes zeros), then atomic scatter.
/// NOT deterministic.
template <class Value, class Index>
void spmv_t(const BroCsrDevice<Value, Index>& d, const Value* x, Value* y, Value alpha, Value beta) {
  cuda::scale_async(y, d.cols, beta);
  if (d.groups == 0 || d.cols == 0) return;
  launch<true>(d, x, y, alpha, Value(0));
}

SPMAT_DEFINE_CUDA_IMPL(BroCsr, BroCsrDevice)

#define SPMAT_INSTANTIATE(V, I)                                              \
  template struct BroCsrDevice<V, I>;                                        \
  template void spmv(const BroCsrDevice<V, I>&, const V*, V*, V, V);         \
  template void spmv_t(const BroCsrDevice<V, I>&, const V*, V*, V, V);
SPMAT_FOR_EACH_TYPE_PAIR(SPMAT_INSTANTIATE)
#undef SPMAT_INSTANTIATE

}  // namespace spmat
