// spmat/formats/bro_coo/bro_coo_device_build.cu — BRO-COO built on the GPU from a device CSR, and
// the device encoder that bro-hyb's builder runs on its COO part.
// SPDX-License-Identifier: MIT
//
// BroCoo::encode's passes on the device; the arrays equal upload(BroCoo::build(csr)) byte for
// byte:
//   1. the entries' rows (bro-coo: row_ptr expanded, a binary search per entry; columns and
//      values copied device to device);
//   2. one block per interval: its base row (the row of its first entry) and its width b_q, the
//      largest Γ of a lane's row step (entry e against e − 32, the first step of each lane
//      against the base row), as a warp maximum then a shared atomicMax; every lane's stream
//      has ⌈steps·b_q / sym_len⌉ symbols (steps = ⌈entries / 32⌉);
//   3. sym_off: a CUB scan of the interval symbol counts (32 per lane symbol), whose total is
//      downloaded (one scalar: the symbol array's size);
//   4. one thread per (interval, lane) packs the lane's row steps at b_q bits, MSB first
//      (bro::StridedPacker: BitPacker's symbols), symbol p at sym_off[q] + 32·p + t, lanes past
//      the last entry padded with zero steps as on the host.
// Value updates stay refused (UnsupportedError).
#include <string>

#include "spmat/core/typed_options.hpp"
#include "spmat/cuda/device_builder.hpp"
#include "spmat/cuda/device_impl.hpp"
#include "spmat/formats/bro_common/bro_device_build.cuh"
#include "spmat/formats/bro_coo/bro_coo_device.hpp"
#include "spmat/formats/ell/ell_device_build.cuh"

namespace spmat {

namespace {

constexpr int kPlanBlock = 256;

/// The step of entry e of interval [begin, end): its row minus the row of the entry a lane
/// decoded before it (e − 32), or minus the base row for a lane's first entry.
template <class Index>
__device__ __forceinline__ std::uint32_t row_step(const Index* __restrict__ row_idx,
                                                  std::int64_t begin, std::int64_t e) {
  const std::int64_t prev = row_idx[e - 32 >= begin ? e - 32 : begin];
  return static_cast<std::uint32_t>(static_cast<std::int64_t>(row_idx[e]) - prev);
}

/// Pass 2: one block per interval (grid-stride over intervals).
template <class Index>
__global__ void interval_plan_kernel(const Index* __restrict__ row_idx, std::int64_t n,
                                     std::int64_t interval, std::int64_t intervals, int sym_len,
                                     Index* __restrict__ base_row, std::uint8_t* __restrict__ widths,
                                     std::int64_t* __restrict__ interval_syms) {
  __shared__ unsigned int width;
  for (std::int64_t q = blockIdx.x; q < intervals; q += gridDim.x) {
    const std::int64_t begin = q * interval, end = min(n, begin + interval);
    if (threadIdx.x == 0) width = 0;
    __syncthreads();
    unsigned int g = 0;
    for (std::int64_t e = begin + threadIdx.x; e < end; e += blockDim.x)
      g = max(g, static_cast<unsigned int>(bro::device_gamma(row_step(row_idx, begin, e))));
    for (int o = 16; o > 0; o >>= 1) g = max(g, __shfl_xor_sync(cuda::kFullMask, g, o));
    if (cuda::lane_id() == 0 && g > 0) atomicMax(&width, g);
    __syncthreads();
    if (threadIdx.x == 0) {
      const std::int64_t steps = (end - begin + 31) / 32;
      base_row[q] = row_idx[begin];
      widths[q] = static_cast<std::uint8_t>(width);
      interval_syms[q] = (steps * width + sym_len - 1) / sym_len * 32;
    }
    __syncthreads();  // width is reset for the next interval
  }
}

/// Pass 4: one thread per (interval, lane).
template <class Sym, class Index>
__global__ void interval_pack_kernel(const Index* __restrict__ row_idx, std::int64_t n,
                                     std::int64_t interval, std::int64_t intervals, int sym_len,
                                     const std::uint8_t* __restrict__ widths,
                                     const std::int64_t* __restrict__ sym_off,
                                     Sym* __restrict__ syms) {
  const std::int64_t lanes = intervals * 32;
  for (std::int64_t g = cuda::global_thread_id(); g < lanes; g += cuda::grid_thread_count()) {
    const std::int64_t q = g / 32, t = g % 32;
    const int b = widths[q];
    if (b == 0) continue;  // no bits, no symbols
    const std::int64_t begin = q * interval, end = min(n, begin + interval);
    bro::StridedPacker<Sym> pk(syms + sym_off[q] + t, 32, sym_len);
    for (std::int64_t e = begin + t; e < begin + (end - begin + 31) / 32 * 32; e += 32)
      pk.put(e < end ? row_step(row_idx, begin, e) : 0u, b);  // past the end: 0
    pk.finish();
  }
}

}  // namespace

// row_idx is read by the pack kernel, still queued on return: the caller frees it in stream
// order (a ScratchBuffer) or after the stream is done.
template <class Value, class Index>
BroCooDevice<Value, Index> bro_coo_encode_on_device(std::int64_t rows, std::int64_t cols,
                                                    const Index* row_idx,
                                                    cuda::DeviceBuffer<Index> col_idx,
                                                    cuda::DeviceBuffer<Value> values, int sym_len,
                                                    std::int64_t interval) {
  if (rows > 0 && static_cast<std::uint64_t>(rows - 1) > bro::kMaxDelta)
    throw UnsupportedError("BRO-COO: " + std::to_string(rows) +
                           " rows exceed the 32-bit delta limit of the bit streams");
  if (sym_len != 32 && sym_len != 64)
    throw ParseError("BRO: sym_len=" + std::to_string(sym_len) + " is not 32 or 64");
  BroCooDevice<Value, Index> d;
  d.rows = rows;
  d.cols = cols;
  d.nnz = static_cast<std::int64_t>(values.size());
  d.sym_len = sym_len;
  d.interval = interval;
  d.intervals = (d.nnz + interval - 1) / interval;
  const std::int64_t n = d.nnz, nint = d.intervals;
  const auto ni = static_cast<std::size_t>(nint);
  d.base_row = cuda::DeviceBuffer<Index>(ni, "bro-coo base rows");
  d.widths = cuda::DeviceBuffer<std::uint8_t>(ni, "bro-coo bit widths");
  d.sym_off = cuda::DeviceBuffer<std::int64_t>(ni + 1, "bro-coo symbol offsets");
  cuda::ScratchBuffer<std::int64_t> interval_syms(ni, "bro-coo build: interval symbols");
  if (nint > 0)
    cuda::launch("bro interval_plan_kernel", interval_plan_kernel<Index>,
                 cuda::grid_cover(nint, 1), kPlanBlock, row_idx, n, interval, nint, sym_len,
                 d.base_row.data(), d.widths.data(), interval_syms.data());
  ell_build::offsets(interval_syms.data(), nint, d.sym_off.data());
  std::int64_t nsym = 0;
  cuda::copy_to_host(&nsym, d.sym_off.data() + nint, 1);  // the symbol array's size
  if (sym_len == 32)
    d.sym32 = cuda::DeviceBuffer<std::uint32_t>(static_cast<std::size_t>(nsym), "bro-coo symbols");
  else
    d.sym64 = cuda::DeviceBuffer<std::uint64_t>(static_cast<std::size_t>(nsym), "bro-coo symbols");
  if (nsym > 0) {
    auto pack = [&]<class Sym>(Sym* syms) {
      cuda::launch_grid_for("bro interval_pack_kernel", interval_pack_kernel<Sym, Index>,
                            nint * 32, 256, row_idx, n, interval, nint, sym_len, d.widths.data(),
                            d.sym_off.data(), syms);
    };
    if (sym_len == 32)
      pack(d.sym32.data());
    else
      pack(d.sym64.data());
  }
  d.col_idx = std::move(col_idx);
  d.values = std::move(values);
  return d;
}

namespace {

/// The arrays of upload(BroCoo::build(csr, o)) built on the GPU from a validated device CSR.
template <class Value, class Index>
BroCooDevice<Value, Index> build_on_device(const DeviceCsrView<Value, Index>& a,
                                           const FormatOptions& o) {
  const auto opt = parse_options<BroCooOptions>(o);
  const auto n = static_cast<std::size_t>(a.nnz);
  // Scratch: freed in stream order after the encoder's kernels that read it.
  cuda::ScratchBuffer<Index> row_idx(n, "bro-coo build: entry rows");
  cuda::DeviceBuffer<Index> col_idx(n, "bro-coo columns");
  cuda::DeviceBuffer<Value> values(n, "bro-coo values");
  cuda::expand_rows(a.row_ptr, a.rows, a.nnz, row_idx.data());
  cuda::copy_device(col_idx.data(), a.col_idx, n);
  cuda::copy_device(values.data(), a.values, n);
  return bro_coo_encode_on_device<Value, Index>(a.rows, a.cols, row_idx.data(), std::move(col_idx),
                                                std::move(values), opt.sym_len, opt.interval);
}

}  // namespace

SPMAT_DEFINE_DEVICE_BUILDER(BroCoo, BroCooDevice)

SPMAT_INSTANTIATE_DEVICE_BUILDER_WITHOUT_UPDATES(BroCoo)
// The encoder, for bro-hyb's tail.
#define SPMAT_INSTANTIATE(V, I)                                                                \
  template BroCooDevice<V, I> bro_coo_encode_on_device(std::int64_t, std::int64_t, const I*,   \
                                                       cuda::DeviceBuffer<I>,                  \
                                                       cuda::DeviceBuffer<V>, int,             \
                                                       std::int64_t);
SPMAT_FOR_EACH_TYPE_PAIR(SPMAT_INSTANTIATE)
#undef SPMAT_INSTANTIATE

}  // namespace spmat
