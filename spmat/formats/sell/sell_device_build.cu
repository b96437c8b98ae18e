// spmat/formats/sell/sell_device_build.cu — SELL-C-σ built on the GPU from a device CSR, and its
// value updates.
// SPDX-License-Identifier: MIT
//
// The host builder's steps, each a device pass:
//   1. the longest row (one pass over row_ptr, one scalar downloaded), then the row lengths;
//   2. perm: the rows stably sorted by (window of σ rows, decreasing length) — one stable CUB
//      radix sort on the key window·(max+1) + (max − length), which orders the rows exactly as
//      the host's std::stable_sort of each window by decreasing length;
//   3. chunk_len (the longest row of each chunk of C positions) and chunk_ptr (a CUB scan of
//      C·chunk_len; its last entry, the slot count, downloaded);
//   4. one thread per slot (its chunk by a binary search of chunk_ptr, narrowed to the chunks
//      of its block) writes entry or padding.
// The arrays equal upload(Sell::build(csr)) byte for byte.
#include <cub/device/device_radix_sort.cuh>

#include "spmat/cuda/device_builder.hpp"
#include "spmat/cuda/device_impl.hpp"
#include "spmat/formats/ell/ell_device_build.cuh"
#include "spmat/formats/sell/sell_device.hpp"

namespace spmat {

namespace {

constexpr int kBlock = 256;

template <class Index>
__global__ void sort_keys_kernel(const Index* __restrict__ len, std::int64_t rows,
                                 std::int64_t sigma, std::int64_t max_len,
                                 std::uint64_t* __restrict__ key, Index* __restrict__ iota) {
  for (std::int64_t r = cuda::global_thread_id(); r < rows; r += cuda::grid_thread_count()) {
    key[r] = static_cast<std::uint64_t>(r / sigma) * static_cast<std::uint64_t>(max_len + 1) +
             static_cast<std::uint64_t>(max_len - len[r]);
    iota[r] = static_cast<Index>(r);
  }
}

template <class Index>
__global__ void identity_kernel(std::int64_t rows, Index* __restrict__ perm) {
  for (std::int64_t r = cuda::global_thread_id(); r < rows; r += cuda::grid_thread_count())
    perm[r] = static_cast<Index>(r);
}

/// chunk_len[c] = the longest row at positions c·C .. c·C+C-1; slots[c] = C·chunk_len[c].
template <class Index>
__global__ void chunk_len_kernel(const Index* __restrict__ len, const Index* __restrict__ perm,
                                 std::int64_t rows, std::int64_t C, std::int64_t n_chunks,
                                 Index* __restrict__ chunk_len, std::int64_t* __restrict__ slots) {
  for (std::int64_t c = cuda::global_thread_id(); c < n_chunks; c += cuda::grid_thread_count()) {
    Index w = 0;
    const std::int64_t end = (c + 1) * C < rows ? (c + 1) * C : rows;
    for (std::int64_t p = c * C; p < end; ++p) {
      const Index l = len[perm[p]];
      w = l > w ? l : w;
    }
    chunk_len[c] = w;
    slots[c] = C * static_cast<std::int64_t>(w);
  }
}

/// One thread per slot s, its chunk the last c with chunk_ptr[c] <= s
/// (ell_build::block_segment_of: a short search per slot).
template <class Value, class Index>
__global__ void __launch_bounds__(kBlock)
    sell_fill_kernel(const Index* __restrict__ row_ptr, const Index* __restrict__ col_idx,
                     const Value* __restrict__ values, std::int64_t rows, std::int64_t C,
                     std::int64_t n_chunks, const std::int64_t* __restrict__ chunk_ptr,
                     const Index* __restrict__ perm, std::int64_t slots,
                     Index* __restrict__ out_col, Value* __restrict__ out_val) {
  __shared__ std::int64_t span[2];
  for (std::int64_t base = static_cast<std::int64_t>(blockIdx.x) * blockDim.x; base < slots;
       base += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const std::int64_t c = ell_build::block_segment_of(chunk_ptr, n_chunks, base, slots, span);
    if (c < 0) continue;
    const std::int64_t s = base + threadIdx.x, off = s - chunk_ptr[c];
    const std::int64_t p = c * C + off % C, j = off / C;
    ell_build::fill_slot(row_ptr, col_idx, values, p < rows ? std::int64_t{perm[p]} : -1, j,
                         &out_col[s], &out_val[s]);
  }
}

/// out[0] = chunk_ptr[n_chunks] (the slots), out[1] = chunk_len[n_chunks - 1]: one thread.
template <class Index>
__global__ void sell_totals_kernel(const std::int64_t* __restrict__ chunk_ptr,
                                   const Index* __restrict__ chunk_len, std::int64_t n_chunks,
                                   std::int64_t* __restrict__ out) {
  out[0] = chunk_ptr[n_chunks];
  out[1] = static_cast<std::int64_t>(chunk_len[n_chunks - 1]);
}

/// Stored entries of the row at each position (its slots before the first padding), by row.
template <class Index>
__global__ void sell_lengths_kernel(const Index* __restrict__ col, const std::int64_t* __restrict__ chunk_ptr,
                                    const Index* __restrict__ chunk_len, const Index* __restrict__ perm,
                                    std::int64_t rows, std::int64_t C, Index* __restrict__ len) {
  for (std::int64_t p = cuda::global_thread_id(); p < rows; p += cuda::grid_thread_count()) {
    const std::int64_t base = chunk_ptr[p / C] + p % C, w = chunk_len[p / C];
    std::int64_t n = 0;
    while (n < w && col[base + n * C] != static_cast<Index>(kEllPadding)) ++n;
    len[perm[p]] = static_cast<Index>(n);
  }
}

/// The value update: the row at position p (row perm[p], lane p % C of chunk p / C) copies its
/// values src[ptr[r] + j] (ptr: CSR row offsets) to slot chunk_ptr + j*C + lane, one thread per
/// position. Consecutive threads are consecutive lanes, so their stores are coalesced.
template <class Value, class Index>
__global__ void sell_row_values_kernel(const Index* __restrict__ perm,
                                       const std::int64_t* __restrict__ chunk_ptr,
                                       const std::int64_t* __restrict__ ptr, std::int64_t rows,
                                       std::int64_t C, const Value* __restrict__ src,
                                       Value* __restrict__ dst) {
  for (std::int64_t p = cuda::global_thread_id(); p < rows; p += cuda::grid_thread_count()) {
    const std::int64_t r = static_cast<std::int64_t>(perm[p]);
    const std::int64_t base = chunk_ptr[p / C] + p % C, b = ptr[r], n = ptr[r + 1] - b;
    for (std::int64_t j = 0; j < n; ++j) dst[base + j * C] = src[b + j];
  }
}

/// The arrays of upload built on the GPU from a validated device CSR.
template <class Value, class Index>
SellDevice<Value, Index> build_on_device(const DeviceCsrView<Value, Index>& a,
                                          const FormatOptions& o) {
  const auto opts = cuda::parsed_options<Sell<Value, Index>>(o);  // C and σ
  SellDevice<Value, Index> d;
  cuda::copy_shape(d, a);
  d.chunk = opts.chunk;
  d.sigma = opts.sigma;
  const std::int64_t rows = a.rows, C = d.chunk, n_chunks = (rows + C - 1) / C;
  const auto nr = static_cast<std::size_t>(rows);
  // The host builder's limits, checked before anything is allocated: one thread walks each
  // row, so a row far longer than the mean stalls every call.
  const std::int64_t max_len = ell_build::max_row_length(a.row_ptr, rows);
  check_row_skew("sell", max_len, a.nnz, rows, 1,
                 row_limit_option("sell", o, "max_skew", kDefaultMaxSkew), "hyb or csr");
  // Temporaries are scratch (spmat/cuda/buffer.hpp): released in stream order, no waits.
  cuda::ScratchBuffer<Index> len(nr, "sell build: row lengths");
  ell_build::csr_row_lengths(a.row_ptr, rows, len.data());
  d.perm = cuda::DeviceBuffer<Index>(nr, "sell perm");
  if (rows > 0 && d.sigma > 1) {
    cuda::ScratchBuffer<std::uint64_t> key(nr, "sell build: sort keys"), key_sorted(nr, "sell build: sorted keys");
    cuda::ScratchBuffer<Index> iota(nr, "sell build: row ids");
    cuda::launch_grid_for("sort_keys_kernel", sort_keys_kernel<Index>, rows, kBlock, len.data(),
                          rows, d.sigma, max_len, key.data(), iota.data());
    const auto windows = static_cast<std::uint64_t>((rows - 1) / d.sigma + 1);
    if (windows > ~std::uint64_t{0} / static_cast<std::uint64_t>(max_len + 1))
      throw UnsupportedError("sell: " + std::to_string(windows) + " windows of rows up to " +
                             std::to_string(max_len) + " long overflow the 64-bit sort key of the "
                             "device builder; build from a host CSR");
    const std::uint64_t key_bound = windows * static_cast<std::uint64_t>(max_len + 1);
    int end_bit = 1;  // only the bits the keys use: fewer radix passes
    while (end_bit < 64 && (std::uint64_t{1} << end_bit) < key_bound) ++end_bit;
    const auto tmp = cuda::run_cub<cuda::ScratchBuffer<std::byte>>(
        "sell build: radix sort workspace", [&](void* temp, std::size_t& bytes) {
          return cub::DeviceRadixSort::SortPairs(temp, bytes, key.data(), key_sorted.data(),
                                                 iota.data(), d.perm.data(), rows, 0, end_bit,
                                                 cuda::stream());
        });
  } else if (rows > 0) {
    cuda::launch_grid_for("identity_kernel", identity_kernel<Index>, rows, kBlock, rows,
                          d.perm.data());
  }
  d.chunk_len = cuda::DeviceBuffer<Index>(static_cast<std::size_t>(n_chunks), "sell chunk_len");
  d.chunk_ptr = cuda::DeviceBuffer<std::int64_t>(static_cast<std::size_t>(n_chunks) + 1, "sell chunk_ptr");
  std::int64_t slots = 0;
  if (n_chunks > 0) {
    cuda::ScratchBuffer<std::int64_t> chunk_slots(static_cast<std::size_t>(n_chunks), "sell build: chunk slots");
    cuda::launch_grid_for("chunk_len_kernel", chunk_len_kernel<Index>, n_chunks, kBlock, len.data(),
                          d.perm.data(), rows, C, n_chunks, d.chunk_len.data(), chunk_slots.data());
    ell_build::offsets(chunk_slots.data(), n_chunks, d.chunk_ptr.data());
    // The slot count and the last chunk's width in one download (one wait): the padding
    // counts the slots of real rows only, as on the host, so the last chunk's lanes past the
    // last row are not charged.
    cuda::ScratchBuffer<std::int64_t> totals(2, "sell build: slot count");
    cuda::launch("sell_totals_kernel", sell_totals_kernel<Index>, 1, 1, d.chunk_ptr.data(),
                 d.chunk_len.data(), n_chunks, totals.data());
    const std::vector<std::int64_t> t = totals.download();
    slots = t[0];
    const std::int64_t last_len = t[1];
    const std::int64_t row_slots = slots - (n_chunks * C - rows) * last_len;
    check_padding("sell", static_cast<double>(row_slots), a.nnz, rows,
                  row_limit_option("sell", o, "max_fill", kDefaultMaxFill), "hyb or csr");
  } else {
    cuda::fill_bytes_async(d.chunk_ptr.data(), 0, sizeof(std::int64_t));
  }
  d.col_idx = cuda::DeviceBuffer<Index>(static_cast<std::size_t>(slots), "sell col_idx");
  d.values = cuda::DeviceBuffer<Value>(static_cast<std::size_t>(slots), "sell values");
  if (slots > 0) {
    cuda::launch("sell_fill_kernel", sell_fill_kernel<Value, Index>,
                 cuda::grid_cover(slots, kBlock), kBlock, a.row_ptr, a.col_idx, a.values, rows,
                 C, n_chunks, d.chunk_ptr.data(), d.perm.data(), slots, d.col_idx.data(),
                 d.values.data());
  }
  return d;
}

}  // namespace

template <class Value, class Index>
void update_values(SellDevice<Value, Index>& d, const Value* values, Memory where) {
  ell_build::update_values_by_rows(
      d.row_offsets, d.nnz, values, where,
      [&d] {
        cuda::ScratchBuffer<Index> len(static_cast<std::size_t>(d.rows), "sell update: row lengths");
        cuda::launch_grid_for("sell_lengths_kernel", sell_lengths_kernel<Index>, d.rows, kBlock,
                              d.col_idx.data(), d.chunk_ptr.data(), d.chunk_len.data(),
                              d.perm.data(), d.rows, d.chunk, len.data());
        d.row_offsets = ell_build::row_offsets(len.data(), d.rows, "sell update: row offsets");
      },
      [&d](const Value* src) {
        cuda::launch_grid_for("sell_row_values_kernel", sell_row_values_kernel<Value, Index>,
                              d.rows, kBlock, d.perm.data(), d.chunk_ptr.data(),
                              d.row_offsets.data(), d.rows, d.chunk, src, d.values.data());
      });
}

SPMAT_DEFINE_DEVICE_BUILDER(Sell, SellDevice)
#define SPMAT_INSTANTIATE(V, I) SPMAT_INSTANTIATE_DEVICE_BUILDER(Sell, SellDevice, V, I)
SPMAT_FOR_EACH_TYPE_PAIR(SPMAT_INSTANTIATE)
#undef SPMAT_INSTANTIATE

}  // namespace spmat
