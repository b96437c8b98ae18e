// spmat/formats/bro_ell/bro_ell_cuda.cu — CUDA BRO-ELL: on-the-fly decode SpMV (one thread per
// row, warp-uniform decode loop) and SpMVᵀ through the same decode with atomicAdd.
// SPDX-License-Identifier: MIT
//
// Kernel contract (both kernels): width_off/sym_off slices+1, widths Σl_s, symbols
// sym_off[slices], values Σl_s·h, row_id rows or null (identity), x cols (spmv_t: rows), y rows
// (spmv_t: cols), col_base slices or null (the paper's first-column coding: base 0); all device
// memory, allocated by upload (matrix) or the caller (x, y). Each row's accumulator starts at
// col_base[s] − 1.
//
// spmv, kernel=batched (default): one warp per 32 stored rows of one slice (h a multiple of 32,
// so slice s has h/32 warps; blocks of 256 threads, grid-stride over warps). The warp reads its
// slice's offsets once, primes every lane's bit reader with its first symbol (a coalesced
// 128 B load, issued together with the width load), loads 32 widths at a time with one
// coalesced uint8 load (lane k holds width c0+k) and broadcasts them by __shfl_sync, and
// decodes U = unroll fields before issuing U value loads and U x loads at once
// (bro_ell_batched.hpp): the loads of a row overlap instead of costing one latency per entry.
// Values of position c sit at slot c·h + t: a warp's loads are 32 consecutive values
// (coalesced). Same sums in the same order as the classic kernel (deterministic).
//
// spmv, kernel=fit (default; only when bro_ell_fit_words > 0 (and ≤ fit_bits/64): every slice
// has l ≤ 32 and every row ≤ 128 bits of stream; else the batched kernel runs). Templated on
// W = words per row, chosen per matrix at upload: W = 1 (≤ 64 bits): one word per row; W = 2
// loads up to 4 (sym_len 32) or 2 (64) symbols per row into a 128-bit shift register
// (bro::FitBits128, still shift-only, no refill branch). The same warp-per-32-rows mapping,
// without a grid-stride loop (one warp = one group of 32 stored rows, like ELL's thread per
// row), every row's stream loaded once into one 64-bit register (1 or 2 coalesced 128 B symbol
// loads, issued with the width load), then bro::fit_row: shift-only decode of 4 fields (widths
// by shuffle), 4 value + 4 x loads, 4 FMAs. No reader state (pointer, stride, bit count), no
// refill branch, 32-bit loop counters: __launch_bounds__(256, 6) caps it at 40 registers, so
// 48 warps per SM are resident (the batched kernel: 24) to hide the three dependent latencies
// (offsets → symbols/widths/values → x).
//
// spmv, kernel=classic, and spmv_t (always): slice s is handled by h consecutive threads of one block (h a multiple of 32, so a warp never
// straddles slices); blocks hold max(1, 256/h) slices and grid-stride over slice groups. Thread
// t of slice s decodes stored row s·h+t with the spec §3.5 loop: widths are read from global
// memory as uint8 (spec §9.7) — the same address for the whole warp, so one broadcast load —
// and the refill branch (rb < b) depends only on the widths, so it is warp-uniform. Padding
// (δ = 0) is skipped; explicit zeros are multiplied. Rows past `rows` in the last slice decode
// to nothing and write nothing. spmv writes y at the row's original index (BAR is invisible);
// beta == 0 never reads y. spmv deterministic (row sums in column order); spmv_t is NOT
// (atomicAdd order). Offsets are 64-bit. Bytes: storage_bytes + x (gathered) + y.
#include <algorithm>

#include "spmat/cuda/device_impl.hpp"
#include "spmat/cuda/primitives.cuh"
#include "spmat/formats/bro_common/bro_symbols.hpp"
#include "spmat/formats/bro_ell/bro_ell_batched.hpp"
#include "spmat/formats/bro_ell/bro_ell_device.hpp"

namespace spmat {

namespace {

using cuda::axpby_store;
using cuda::ldg;

/// Threads per block: 256 (several slices) when h divides 256, else h (one slice per block).
inline int block_for(int h) { return 256 % h == 0 ? 256 : h; }

template <class Sym, class Value, class Index>
__global__ void __launch_bounds__(1024)
    bro_ell_spmv_kernel(std::int64_t slices, std::int64_t rows, int h,
                        const std::int64_t* __restrict__ width_off,
                        const std::uint8_t* __restrict__ widths,
                        const std::int64_t* __restrict__ sym_off, const Sym* __restrict__ syms,
                        const Value* __restrict__ values, const Index* __restrict__ row_id,
                        const Index* __restrict__ col_base, const Value* __restrict__ x,
                        Value* __restrict__ y, Value alpha, Value beta) {
  const int spb = static_cast<int>(blockDim.x) / h;
  const int local = static_cast<int>(threadIdx.x) / h, t = static_cast<int>(threadIdx.x) % h;
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * spb;
  for (std::int64_t s = static_cast<std::int64_t>(blockIdx.x) * spb + local; s < slices; s += stride) {
    const std::int64_t wo = ldg(width_off + s), len = ldg(width_off + s + 1) - wo;
    typename bro::ReaderFor<Sym>::type rd(syms + ldg(sym_off + s) + t, h);
    const Value* v = values + wo * h + t;
    const std::uint8_t* w = widths + wo;
    std::int64_t col = (col_base ? static_cast<std::int64_t>(ldg(col_base + s)) : 0) - 1;
    Value sum = 0;
    for (std::int64_t c = 0; c < len; ++c) {
      const std::uint32_t d = rd.next(ldg(w + c));
      if (d) {
        col += d;
        sum += ldg(v + c * h) * ldg(x + col);
      }
    }
    const std::int64_t p = s * h + t;
    if (p < rows) {
      const std::int64_t r = row_id ? static_cast<std::int64_t>(ldg(row_id + p)) : p;
      axpby_store(y + r, alpha, sum, beta);
    }
  }
}

template <class Sym, class Value, class Index>
__global__ void __launch_bounds__(1024)
    bro_ell_spmv_t_kernel(std::int64_t slices, std::int64_t rows, int h,
                          const std::int64_t* __restrict__ width_off,
                          const std::uint8_t* __restrict__ widths,
                          const std::int64_t* __restrict__ sym_off, const Sym* __restrict__ syms,
                          const Value* __restrict__ values, const Index* __restrict__ row_id,
                          const Index* __restrict__ col_base, const Value* __restrict__ x,
                          Value* __restrict__ y, Value alpha) {
  const int spb = static_cast<int>(blockDim.x) / h;
  const int local = static_cast<int>(threadIdx.x) / h, t = static_cast<int>(threadIdx.x) % h;
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * spb;
  for (std::int64_t s = static_cast<std::int64_t>(blockIdx.x) * spb + local; s < slices; s += stride) {
    const std::int64_t wo = ldg(width_off + s), len = ldg(width_off + s + 1) - wo;
    const std::int64_t p = s * h + t;
    Value xr = 0;  // padded rows past `rows` decode only zeros (no atomics)
    if (p < rows) xr = alpha * ldg(x + (row_id ? static_cast<std::int64_t>(ldg(row_id + p)) : p));
    typename bro::ReaderFor<Sym>::type rd(syms + ldg(sym_off + s) + t, h);
    const Value* v = values + wo * h + t;
    const std::uint8_t* w = widths + wo;
    std::int64_t col = (col_base ? static_cast<std::int64_t>(ldg(col_base + s)) : 0) - 1;
    for (std::int64_t c = 0; c < len; ++c) {
      const std::uint32_t d = rd.next(ldg(w + c));
      if (d) {
        col += d;
        atomicAdd(y + col, ldg(v + c * h) * xr);
      }
    }
  }
}

/// Device width source of the batched decode: lane k holds width c0+k of the warp's slice.
struct WarpWidths {
  const std::uint8_t* w;
  std::int64_t len;
  int mine = 0;
  __device__ __forceinline__ void load(std::int64_t c0) {
    const std::int64_t c = c0 + (threadIdx.x & 31);
    mine = c < len ? static_cast<int>(ldg(w + c)) : 0;
  }
  __device__ __forceinline__ int get(int k) const { return __shfl_sync(0xffffffffu, mine, k); }
};

constexpr int kBatchedBlock = 256;
// Min-blocks hint 3 (≤ 85 registers): ptxas -v for sm_90 capped the fp64/int32/sym32/U=8
// instance at 64 registers with 20 B of spills without it; with it, 72-80 registers and no
// spills in all 16 instances (U=4: 56-68). Occupancy 24 warps/SM at U=8, each lane with up to 16
// loads in flight. Not yet measured on a GPU; unroll=4 is the alternative to time.

template <int U, class Sym, class Value, class Index>
__global__ void __launch_bounds__(kBatchedBlock, 3)
    bro_ell_spmv_batched_kernel(std::int64_t slices, std::int64_t rows, int h,
                                const std::int64_t* __restrict__ width_off,
                                const std::uint8_t* __restrict__ widths,
                                const std::int64_t* __restrict__ sym_off,
                                const Sym* __restrict__ syms, const Value* __restrict__ values,
                                const Index* __restrict__ row_id,
                                const Index* __restrict__ col_base, const Value* __restrict__ x,
                                Value* __restrict__ y, Value alpha, Value beta) {
  const int lane = static_cast<int>(threadIdx.x) & 31;
  const std::int64_t wps = h / 32;  // warps per slice
  const std::int64_t warps = slices * wps;
  const std::int64_t wstride = static_cast<std::int64_t>(gridDim.x) * (blockDim.x / 32);
  // The loop bound is warp-uniform, so all 32 lanes stay converged for the shuffles.
  for (std::int64_t gw = (static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
       gw < warps; gw += wstride) {
    const std::int64_t s = gw / wps;
    const std::int64_t t = (gw - s * wps) * 32 + lane;
    const std::int64_t wo = ldg(width_off + s), len = ldg(width_off + s + 1) - wo;
    const std::int64_t so = ldg(sym_off + s), nsym = ldg(sym_off + s + 1) - so;
    const std::int64_t col = (col_base ? static_cast<std::int64_t>(ldg(col_base + s)) : 0) - 1;
    typename bro::ReaderFor<Sym>::type rd(syms + so + t, h);
    if (nsym > 0) rd.prime();  // uniform: the whole slice has the same stream length
    WarpWidths wd{widths + wo, len};
    const Value sum =
        bro::batched_row<U, Index>(rd, wd, len, values + wo * h + t, h, x, col);
    const std::int64_t p = s * h + t;
    if (p < rows) {
      const std::int64_t r = row_id ? static_cast<std::int64_t>(ldg(row_id + p)) : p;
      axpby_store(y + r, alpha, sum, beta);
    }
  }
}

/// Width source of the fit kernel: lane k holds width k of the warp's slice (0 past l ≤ 32).
struct FitWidths {
  int mine;
  __device__ __forceinline__ int get(int k) const { return __shfl_sync(0xffffffffu, mine, k); }
};

constexpr int kFitBlock = 256;
constexpr int kFitU = 4;

// Min-blocks hint: W = 1 (one 64-bit word per row) 6 → ≤ 40 registers, 48 warps/SM; W = 2
// (128-bit shift register: two more 64-bit registers) 5 → ≤ 48 registers, 40 warps/SM.
template <int W>
constexpr int kFitMinBlocks = W == 1 ? 6 : 5;

template <int W, class Sym, class Value, class Index>
__global__ void __launch_bounds__(kFitBlock, kFitMinBlocks<W>)
    bro_ell_spmv_fit_kernel(std::int64_t warps, std::int64_t rows, int h,
                            const std::int64_t* __restrict__ width_off,
                            const std::uint8_t* __restrict__ widths,
                            const std::int64_t* __restrict__ sym_off,
                            const Sym* __restrict__ syms, const Value* __restrict__ values,
                            const Index* __restrict__ row_id, const Index* __restrict__ col_base,
                            const Value* __restrict__ x, Value* __restrict__ y, Value alpha,
                            Value beta) {
  const std::int64_t gw =
      (static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) >> 5;
  if (gw >= warps) return;  // warp-uniform: the 32 lanes of a warp stay together
  const int lane = static_cast<int>(threadIdx.x) & 31;
  const int wps = h >> 5;
  const std::int64_t s = gw / wps;
  const std::int64_t t = (gw - s * wps) * 32 + lane;
  const std::int64_t wo = ldg(width_off + s), so = ldg(sym_off + s);
  const int len = static_cast<int>(ldg(width_off + s + 1) - wo);
  const std::int64_t nsym = ldg(sym_off + s + 1) - so;
  const Index start = (col_base ? ldg(col_base + s) : Index(0)) - Index(1);
  const FitWidths wd{lane < len ? static_cast<int>(ldg(widths + wo + lane)) : 0};
  Value sum;
  if constexpr (W == 1) {
    const std::uint64_t buf = bro::fit_word(syms + so + t, h, nsym);
    sum = bro::fit_row<kFitU, Index>(buf, wd, len, values + wo * h + t, h, x, start);
  } else {
    const bro::FitBits128 bits = bro::fit_bits128(syms + so + t, h, nsym);
    sum = bro::fit_row_bits<kFitU, Index>(bits, wd, len, values + wo * h + t, h, x, start);
  }
  const std::int64_t p = s * h + t;
  if (p < rows) {
    const std::int64_t r = row_id ? static_cast<std::int64_t>(ldg(row_id + p)) : p;
    axpby_store(y + r, alpha, sum, beta);
  }
}

template <int W, class Sym, class Value, class Index>
void launch_fit(const BroEllDevice<Value, Index>& d, const Sym* syms, const Value* x, Value* y,
                Value alpha, Value beta) {
  const std::int64_t warps = d.slices * (d.h / 32);
  const std::int64_t blocks = (warps * 32 + kFitBlock - 1) / kFitBlock;
  bro_ell_spmv_fit_kernel<W, Sym><<<static_cast<unsigned>(blocks), kFitBlock, 0, cuda::stream()>>>(
      warps, d.rows, d.h, d.width_off.data(), d.widths.data(), d.sym_off.data(), syms,
      d.values.data(), d.row_id.data(), d.col_base.data(), x, y, alpha, beta);
  SPMAT_CUDA_CHECK_LAUNCH("bro_ell_spmv_fit_kernel");
}

template <int U, class Sym, class Value, class Index>
void launch_batched(const BroEllDevice<Value, Index>& d, const Sym* syms, const Value* x, Value* y,
                    Value alpha, Value beta) {
  const unsigned grid = cuda::grid_for(d.slices * d.h, kBatchedBlock);
  bro_ell_spmv_batched_kernel<U, Sym><<<grid, kBatchedBlock, 0, cuda::stream()>>>(
      d.slices, d.rows, d.h, d.width_off.data(), d.widths.data(), d.sym_off.data(), syms,
      d.values.data(), d.row_id.data(), d.col_base.data(), x, y, alpha, beta);
  SPMAT_CUDA_CHECK_LAUNCH("bro_ell_spmv_batched_kernel");
}

template <class Sym, class Value, class Index>
void launch(const BroEllDevice<Value, Index>& d, const Sym* syms, const Value* x, Value* y,
            Value alpha, Value beta, bool transpose) {
  const int block = block_for(d.h);
  const std::int64_t spb = block / d.h;
  const unsigned grid = cuda::grid_for((d.slices + spb - 1) / spb * block, block);
  if (!transpose) {
    bro_ell_spmv_kernel<Sym><<<grid, block, 0, cuda::stream()>>>(d.slices, d.rows, d.h,
        d.width_off.data(), d.widths.data(), d.sym_off.data(), syms, d.values.data(),
        d.row_id.data(), d.col_base.data(), x, y, alpha, beta);
    SPMAT_CUDA_CHECK_LAUNCH("bro_ell_spmv_kernel");
  } else {
    bro_ell_spmv_t_kernel<Sym><<<grid, block, 0, cuda::stream()>>>(d.slices, d.rows, d.h,
        d.width_off.data(), d.widths.data(), d.sym_off.data(), syms, d.values.data(),
        d.row_id.data(), d.col_base.data(), x, y, alpha);
    SPMAT_CUDA_CHECK_LAUNCH("bro_ell_spmv_t_kernel");
  }
}

}  // namespace

template <class Value, class Index>
BroEllDevice<Value, Index> BroEllDevice<Value, Index>::upload(const BroEll<Value, Index>& e) {
  if (e.h < 32 || e.h > 1024 || e.h % 32 != 0 || (e.sym_len != 32 && e.sym_len != 64))
    throw UnsupportedError("bro-ell: the CUDA kernels need h a multiple of 32 in 32..1024 and "
                           "sym_len 32 or 64");
  return Listed::upload(e);
}

template <class Value, class Index>
void bro_ell_launch_spmv(const BroEllDevice<Value, Index>& d, const Value* x, Value* y,
                         Value alpha, Value beta) {
  if (d.slices == 0 || d.rows == 0) return;
  bro::with_symbols(d, [&](const auto* syms) {
    if (d.kernel == 2 && d.fit_words == 1)
      launch_fit<1>(d, syms, x, y, alpha, beta);
    else if (d.kernel == 2 && d.fit_words == 2)
      launch_fit<2>(d, syms, x, y, alpha, beta);
    else if (d.kernel >= 1 && d.unroll == 4)
      launch_batched<4>(d, syms, x, y, alpha, beta);
    else if (d.kernel >= 1)
      launch_batched<8>(d, syms, x, y, alpha, beta);
    else
      launch(d, syms, x, y, alpha, beta, false);
  });
}

template <class Value, class Index>
void bro_ell_launch_spmv_t(const BroEllDevice<Value, Index>& d, const Value* x, Value* y,
                           Value alpha) {
  if (d.slices == 0 || d.rows == 0 || d.cols == 0) return;
  bro::with_symbols(d, [&](const auto* syms) { launch(d, syms, x, y, alpha, Value(0), true); });
}

/// y = alpha*A*x + beta*y. Example: the paper's 4×5 matrix (bro_ell.hpp) with x = (1,2,3,4,5)
/// gives y = (9, 50, 64, 47). Deterministic.
template <class Value, class Index>
void spmv(const BroEllDevice<Value, Index>& d, const Value* x, Value* y, Value alpha, Value beta) {
  bro_ell_launch_spmv(d, x, y, alpha, beta);
}

/// y = alpha*Aᵀ*x + beta*y: y scaled by beta (beta == 0 writes zeros), then atomic scatter.
/// NOT deterministic.
template <class Value, class Index>
void spmv_t(const BroEllDevice<Value, Index>& d, const Value* x, Value* y, Value alpha, Value beta) {
  cuda::scale_async(y, d.cols, beta);
  bro_ell_launch_spmv_t(d, x, y, alpha);
}

SPMAT_DEFINE_CUDA_IMPL(BroEll, BroEllDevice)
SPMAT_DEFINE_DEVICE_ONLY_IMPL(BroEll, BroEllDevice)

#define SPMAT_INSTANTIATE(V, I)                                                               \
  template struct BroEllDevice<V, I>;                                                        \
  template void bro_ell_launch_spmv(const BroEllDevice<V, I>&, const V*, V*, V, V);          \
  template void bro_ell_launch_spmv_t(const BroEllDevice<V, I>&, const V*, V*, V);           \
  template void spmv(const BroEllDevice<V, I>&, const V*, V*, V, V);                         \
  template void spmv_t(const BroEllDevice<V, I>&, const V*, V*, V, V);
SPMAT_FOR_EACH_TYPE_PAIR(SPMAT_INSTANTIATE)
#undef SPMAT_INSTANTIATE

}  // namespace spmat
