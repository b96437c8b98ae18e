// spmat/formats/bro_ell/bro_ell_device_build.cu — BRO-ELL built on the GPU from a device CSR, and
// the device encoder that bro-hyb's builder runs on its ELL part.
// SPDX-License-Identifier: MIT
//
// The host encoder's passes (BroEll::encode, bro::encode_slices), each a device pass; the arrays
// equal upload(BroEll::build(csr)) byte for byte:
//   1. one warp per slice: l_s (the longest stored row, cut to max_len), the first-column base
//      (the smallest first column of the slice's non-empty rows, 0 if none) and, by integer
//      atomics, the longest row, the slots Σ l_s·(rows of s), Σ l_s and the stored entries. These
//      four scalars are downloaded (one sync): the host builder's limits (row skew, padding) are
//      checked on them before anything of the matrix's size is allocated.
//   2. width_off: a CUB scan of l_s. One block of h threads per slice (thread t = row t of the
//      slice): each position's width is the warp maximum of Γ(δ), then the maximum over the
//      block's warps (shared atomicMax), 1024 positions at a time; the slice's bit count (Σ of
//      its widths) gives its symbols per row, ⌈bits / sym_len⌉.
//   3. sym_off: a CUB scan of the slice symbol counts (h per row symbol); their sum and maximum
//      are downloaded (the symbol array's size, and the fit kernel's words per row by
//      bro_ell_fit_words_of, the host's rule).
//   4. one thread per row slot of every slice (padding lanes past the last row included) packs
//      its row's deltas at the slice's widths, MSB first (bro::StridedPacker: BitPacker's
//      symbols), symbol q at sym_off[s] + q·h + t, and writes its values slots (padding 0).
// Explicit zeros are stored entries, as on the host. bro-ell-bar (the option bar=1) is not
// reordered on the device: it downloads the CSR and runs the host builder, then uploads
// (BAR's greedy clustering is sequential). Value updates stay refused (UnsupportedError): the
// storage has no value map.
#include <cub/block/block_reduce.cuh>

#include <algorithm>
#include <string>

#include "spmat/core/typed_options.hpp"
#include "spmat/cuda/device_builder.hpp"
#include "spmat/cuda/device_impl.hpp"
#include "spmat/formats/bro_common/bro_device_build.cuh"
#include "spmat/formats/bro_ell/bro_ell_device.hpp"
#include "spmat/formats/ell/ell_device_build.cuh"

namespace spmat {

namespace {

constexpr int kWarpsPerBlock = 8;
/// Positions whose widths one block of pass 2 gathers in shared memory at a time.
constexpr int kWidthChunk = 1024;

// Indices of the counters (bro::DeviceCounters) of the encoder.
enum : int { kLongest, kSlots, kPositions, kNnz, kSymbols, kMaxSliceSymbols, kCounters };

/// Stored length of row p (0 past the last row): its CSR length cut to max_len (-1: whole).
template <class Index>
__device__ __forceinline__ std::int64_t stored_len(const Index* __restrict__ row_ptr,
                                                   std::int64_t rows, std::int64_t p,
                                                   std::int64_t max_len) {
  if (p >= rows) return 0;
  const std::int64_t len = static_cast<std::int64_t>(row_ptr[p + 1]) - row_ptr[p];
  return max_len >= 0 && len > max_len ? max_len : len;
}

/// Pass 1: one warp per slice (grid-stride over slices).
template <class Index>
__global__ void slice_plan_kernel(const Index* __restrict__ row_ptr,
                                  const Index* __restrict__ col_idx, std::int64_t rows, int h,
                                  std::int64_t slices, std::int64_t max_len, bool first_slice,
                                  std::int64_t* __restrict__ slice_len, Index* __restrict__ col_base,
                                  unsigned long long* __restrict__ counters) {
  const int lane = cuda::lane_id();
  const std::int64_t warp = cuda::global_thread_id() / 32, warps = cuda::grid_thread_count() / 32;
  constexpr std::int64_t kNone = INT64_MAX;
  // The plan's four counters summed in lane 0 over the warp's slices, then over the block: one
  // atomic per block and counter, where one per slice would queue every warp of the grid on
  // the same four addresses.
  std::int64_t longest = 0, slots = 0, positions = 0, nnz = 0;
  for (std::int64_t s = warp; s < slices; s += warps) {
    std::int64_t l = 0, lo = kNone, n = 0;
    for (int t = lane; t < h; t += 32) {
      const std::int64_t p = s * h + t, len = stored_len(row_ptr, rows, p, max_len);
      l = max(l, len);
      n += len;
      if (len > 0) lo = min(lo, static_cast<std::int64_t>(col_idx[row_ptr[p]]));
    }
    l = bro::warp_max64(l);
    lo = bro::warp_min64(lo);
    n = bro::warp_sum64(n);
    if (lane == 0) {
      const std::int64_t in_slice = min(rows, (s + 1) * h) - s * h;
      slice_len[s] = l;
      if (first_slice) col_base[s] = static_cast<Index>(lo == kNone ? 0 : lo);
      longest = max(longest, l);
      slots += l * in_slice;
      positions += l;
      nnz += n;
    }
  }
  __shared__ std::int64_t part[kWarpsPerBlock][4];
  const int w = static_cast<int>(threadIdx.x) / 32;
  if (lane == 0) {
    part[w][0] = longest;
    part[w][1] = slots;
    part[w][2] = positions;
    part[w][3] = nnz;
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    for (int v = 1; v < static_cast<int>(blockDim.x) / 32; ++v) {
      longest = max(longest, part[v][0]);
      slots += part[v][1];
      positions += part[v][2];
      nnz += part[v][3];
    }
    bro::counter_max(counters + kLongest, longest);
    bro::counter_add(counters + kSlots, slots);
    bro::counter_add(counters + kPositions, positions);
    bro::counter_add(counters + kNnz, nnz);
  }
}

/// The accumulator a slice's rows start from: col_base[s] − 1 (−1 with the paper's coding).
template <class Index>
__device__ __forceinline__ std::int64_t start_col(const Index* __restrict__ col_base, std::int64_t s) {
  return (col_base ? static_cast<std::int64_t>(col_base[s]) : 0) - 1;
}

/// Pass 2: one block of h threads per slice (grid-stride over slices); thread t walks row t.
template <class Index>
__global__ void __launch_bounds__(1024)
    slice_widths_kernel(const Index* __restrict__ row_ptr, const Index* __restrict__ col_idx,
                        std::int64_t rows, int h, std::int64_t slices, std::int64_t max_len,
                        int sym_len, const std::int64_t* __restrict__ width_off,
                        const Index* __restrict__ col_base, std::uint8_t* __restrict__ widths,
                        std::int64_t* __restrict__ slice_syms,
                        unsigned long long* __restrict__ counters) {
  __shared__ unsigned int w[kWidthChunk];
  __shared__ std::int64_t bits32[32];
  const int t = static_cast<int>(threadIdx.x), lane = t & 31;
  std::int64_t block_syms = 0, block_max = 0;  // thread 0's, added once per block at the end
  for (std::int64_t s = blockIdx.x; s < slices; s += gridDim.x) {
    const std::int64_t p = s * h + t, len = stored_len(row_ptr, rows, p, max_len);
    const std::int64_t k0 = p < rows ? static_cast<std::int64_t>(row_ptr[p]) : 0;
    const std::int64_t wo = width_off[s], l = width_off[s + 1] - wo;
    std::int64_t prev = start_col(col_base, s), bits = 0;
    for (std::int64_t c0 = 0; c0 < l; c0 += kWidthChunk) {
      const int n = static_cast<int>(min(static_cast<std::int64_t>(kWidthChunk), l - c0));
      for (int i = t; i < n; i += h) w[i] = 0;
      __syncthreads();
      for (int i = 0; i < n; ++i) {  // the same trip count in every thread: the warp is converged
        unsigned int g = 0;
        if (c0 + i < len) {
          const std::int64_t c = col_idx[k0 + c0 + i];
          g = static_cast<unsigned int>(bro::device_gamma(static_cast<std::uint32_t>(c - prev)));
          prev = c;
        }
        for (int o = 16; o > 0; o >>= 1) g = max(g, __shfl_xor_sync(cuda::kFullMask, g, o));
        if (lane == 0 && g > 0) atomicMax(&w[i], g);
      }
      __syncthreads();
      for (int i = t; i < n; i += h) {
        widths[wo + c0 + i] = static_cast<std::uint8_t>(w[i]);
        bits += w[i];
      }
      __syncthreads();  // w is cleared for the next chunk
    }
    bits = cuda::block_sum(bits, bits32);
    if (t == 0) {
      const std::int64_t syms = (bits + sym_len - 1) / sym_len * h;
      slice_syms[s] = syms;
      block_syms += syms;
      block_max = max(block_max, syms);
    }
  }
  if (t == 0) {
    bro::counter_add(counters + kSymbols, block_syms);
    bro::counter_max(counters + kMaxSliceSymbols, block_max);
  }
}

/// Pass 4: one thread per row slot (s, t) of every slice: the row's stream and values.
template <class Sym, class Value, class Index>
__global__ void slice_pack_kernel(const Index* __restrict__ row_ptr,
                                  const Index* __restrict__ col_idx,
                                  const Value* __restrict__ values, std::int64_t rows, int h,
                                  std::int64_t slices, std::int64_t max_len, int sym_len,
                                  const std::int64_t* __restrict__ width_off,
                                  const std::uint8_t* __restrict__ widths,
                                  const std::int64_t* __restrict__ sym_off,
                                  const Index* __restrict__ col_base, Sym* __restrict__ syms,
                                  Value* __restrict__ out_val) {
  const std::int64_t n = slices * h;
  for (std::int64_t g = cuda::global_thread_id(); g < n; g += cuda::grid_thread_count()) {
    const std::int64_t s = g / h, t = g % h, p = g;
    const std::int64_t len = stored_len(row_ptr, rows, p, max_len);
    const std::int64_t k0 = p < rows ? static_cast<std::int64_t>(row_ptr[p]) : 0;
    const std::int64_t wo = width_off[s], l = width_off[s + 1] - wo;
    bro::StridedPacker<Sym> pk(syms + sym_off[s] + t, h, sym_len);
    Value* v = out_val + wo * h + t;
    std::int64_t prev = start_col(col_base, s);
    for (std::int64_t j = 0; j < l; ++j) {
      std::uint32_t d = 0;  // padding
      Value x = 0;
      if (j < len) {
        const std::int64_t c = col_idx[k0 + j];
        d = static_cast<std::uint32_t>(c - prev);
        prev = c;
        x = values[k0 + j];
      }
      pk.put(d, widths[wo + j]);
      v[j * h] = x;
    }
    pk.finish();
  }
}

}  // namespace

template <class Value, class Index>
BroEllDevice<Value, Index> bro_ell_encode_on_device(
    const DeviceCsrView<Value, Index>& a, const BroEll<Value, Index>& shape, std::int64_t max_len,
    const std::function<void(const BroEllDevicePlan&)>& check) {
  const int h = shape.h, sym_len = shape.sym_len;
  BroEllDevice<Value, Index> d;
  d.rows = a.rows;
  d.cols = a.cols;
  d.slices = (a.rows + h - 1) / h;
  d.h = h;
  d.sym_len = sym_len;
  d.first_slice = shape.first_slice ? 1 : 0;
  d.kernel = shape.kernel;
  d.unroll = shape.unroll;
  d.fit_max_words = shape.fit_max_words;
  const std::int64_t slices = d.slices;
  const auto ns = static_cast<std::size_t>(slices);

  // Pass 1: slice lengths, bases, and the plan.
  bro::DeviceCounters counters(kCounters, "bro-ell build: counters");
  // Temporaries are scratch: freed in stream order after the kernels that read them, no wait.
  cuda::ScratchBuffer<std::int64_t> slice_len(ns, "bro-ell build: slice lengths");
  if (shape.first_slice) d.col_base = cuda::DeviceBuffer<Index>(ns, "bro-ell first-column bases");
  if (slices > 0)
    cuda::launch_grid_for("bro slice_plan_kernel", slice_plan_kernel<Index>, slices * 32,
                          32 * kWarpsPerBlock, a.row_ptr, a.col_idx, a.rows, h, slices, max_len,
                          shape.first_slice, slice_len.data(), d.col_base.data(), counters.data());
  std::vector<std::int64_t> c = counters.read();  // synchronizes
  BroEllDevicePlan plan;
  plan.longest = c[kLongest];
  plan.slots = c[kSlots];
  plan.positions = c[kPositions];
  plan.nnz = c[kNnz];
  if (check) check(plan);
  if (static_cast<std::uint64_t>(a.cols) > bro::kMaxDelta)
    throw UnsupportedError("BRO: " + std::to_string(a.cols) +
                           " columns exceed the 32-bit delta limit of the bit streams");
  d.nnz = plan.nnz;
  d.max_row = plan.longest;

  // Pass 2: width offsets, widths, symbols per slice.
  d.width_off = cuda::DeviceBuffer<std::int64_t>(ns + 1, "bro-ell width offsets");
  ell_build::offsets(slice_len.data(), slices, d.width_off.data());
  d.widths = cuda::DeviceBuffer<std::uint8_t>(static_cast<std::size_t>(plan.positions),
                                              "bro-ell bit widths");
  cuda::ScratchBuffer<std::int64_t> slice_syms(ns, "bro-ell build: slice symbols");
  if (slices > 0)
    cuda::launch("bro slice_widths_kernel", slice_widths_kernel<Index>,
                 cuda::grid_for(slices * h, h), static_cast<unsigned>(h), a.row_ptr, a.col_idx,
                 a.rows, h, slices, max_len, sym_len, d.width_off.data(), d.col_base.data(),
                 d.widths.data(), slice_syms.data(), counters.data());

  // Pass 3: symbol offsets.
  d.sym_off = cuda::DeviceBuffer<std::int64_t>(ns + 1, "bro-ell symbol offsets");
  ell_build::offsets(slice_syms.data(), slices, d.sym_off.data());
  c = counters.read();  // waits for pass 2
  d.fit_words = bro_ell_fit_choice(
      bro_ell_fit_words_of(sym_len, h, plan.longest, c[kMaxSliceSymbols]), d.fit_max_words);

  // Pass 4: streams and values.
  const auto nsym = static_cast<std::size_t>(c[kSymbols]);
  d.values = cuda::DeviceBuffer<Value>(static_cast<std::size_t>(plan.positions * h), "bro-ell values");
  if (sym_len == 32)
    d.sym32 = cuda::DeviceBuffer<std::uint32_t>(nsym, "bro-ell symbols");
  else
    d.sym64 = cuda::DeviceBuffer<std::uint64_t>(nsym, "bro-ell symbols");
  if (slices > 0 && plan.positions > 0) {
    auto pack = [&]<class Sym>(Sym* syms) {
      cuda::launch_grid_for("bro slice_pack_kernel", slice_pack_kernel<Sym, Value, Index>,
                            slices * h, 256, a.row_ptr, a.col_idx, a.values, a.rows, h, slices,
                            max_len, sym_len, d.width_off.data(), d.widths.data(),
                            d.sym_off.data(), d.col_base.data(), syms, d.values.data());
    };
    if (sym_len == 32)
      pack(d.sym32.data());
    else
      pack(d.sym64.data());
  }
  return d;
}

namespace {

/// The arrays of upload(BroEll::build(csr, o)) built on the GPU from a validated device CSR;
/// with bar=1 (bro-ell-bar), the host builder on a downloaded copy, then the upload.
template <class Value, class Index>
BroEllDevice<Value, Index> build_on_device(const DeviceCsrView<Value, Index>& a,
                                           const FormatOptions& o) {
  const auto opt = parse_options<BroEllOptions>(o);
  if (opt.bar)
    return BroEllDevice<Value, Index>::upload(BroEll<Value, Index>::build(cuda::download(a), o));
  // BroEll::build's limits, in its order, on the first pass's plan (whole rows: the longest
  // stored row is the longest row).
  const auto limits = [&](const BroEllDevicePlan& p) {
    check_row_skew("bro-ell", p.longest, a.nnz, a.rows, 1, opt.max_skew, "bro-hyb, hyb or csr");
    check_padding("bro-ell", static_cast<double>(p.slots), a.nnz, a.rows, opt.max_fill,
                  "bro-hyb, hyb or csr");
  };
  return bro_ell_encode_on_device(a, bro_ell_shape<Value, Index>(opt), -1, limits);
}

}  // namespace

SPMAT_DEFINE_DEVICE_BUILDER(BroEll, BroEllDevice)

SPMAT_INSTANTIATE_DEVICE_BUILDER_WITHOUT_UPDATES(BroEll)
// The encoder, for bro-hyb's ELL part.
#define SPMAT_INSTANTIATE(V, I)                                                                \
  template BroEllDevice<V, I> bro_ell_encode_on_device(                                        \
      const DeviceCsrView<V, I>&, const BroEll<V, I>&, std::int64_t,                           \
      const std::function<void(const BroEllDevicePlan&)>&);
SPMAT_FOR_EACH_TYPE_PAIR(SPMAT_INSTANTIATE)
#undef SPMAT_INSTANTIATE

}  // namespace spmat
