// spmat/formats/hyb/hyb_device_build.cu — HYB built on the GPU from a device CSR, and its value
// updates.
// SPDX-License-Identifier: MIT
//
// The width K is the host's choice (hyb_width: CUSP's rule on the row lengths, or the forced K
// option, with the breakeven / max_fill options), which depends on the lengths only through
// their histogram. So the device counts the rows of each length (one pass over row_ptr; the
// lengths from some bound B up share the last bin, B chosen so that the rule never reads past
// it, see length_bins) and the host runs the rule on the downloaded histogram, B+1 counts,
// typically a few dozen. Where B+1 would exceed the rows (few rows holding many entries), the
// row lengths themselves are downloaded and hyb_width runs on them. Then the ELL part is filled
// like ell's device builder, and the COO tail (each row's entries past K, in CSR order) is
// written one thread per tail entry, its row found by a binary search of the tail offsets (a CUB
// scan) narrowed to the rows of its block (ell_build::block_segment_of). No column index or value leaves the device; the
// arrays equal upload(Hyb::build(csr)) byte for byte.
#include "spmat/cuda/device_builder.hpp"
#include "spmat/cuda/device_impl.hpp"
#include "spmat/formats/ell/ell_device_build.cuh"
#include "spmat/formats/ell/row_length_histogram.cuh"
#include "spmat/core/typed_options.hpp"
#include "spmat/formats/hyb/hyb_device.hpp"

namespace spmat {

namespace {

constexpr int kBlock = 256;

/// over[r] = the entries of row r past `width`.
template <class Index>
__global__ void tail_lengths_kernel(const Index* __restrict__ row_ptr, std::int64_t rows,
                                    std::int64_t width, Index* __restrict__ over) {
  for (std::int64_t r = cuda::global_thread_id(); r < rows; r += cuda::grid_thread_count()) {
    const std::int64_t len = static_cast<std::int64_t>(row_ptr[r + 1] - row_ptr[r]);
    over[r] = static_cast<Index>(len > width ? len - width : 0);
  }
}

/// One thread per tail entry i, its row the last r with over_ptr[r] <= i
/// (ell_build::block_segment_of: a short search per entry).
template <class Value, class Index>
__global__ void __launch_bounds__(kBlock)
    coo_tail_kernel(const Index* __restrict__ row_ptr, const Index* __restrict__ col_idx,
                    const Value* __restrict__ values, std::int64_t rows, std::int64_t width,
                    const std::int64_t* __restrict__ over_ptr, std::int64_t n,
                    Index* __restrict__ coo_row, Index* __restrict__ coo_col,
                    Value* __restrict__ coo_val) {
  __shared__ std::int64_t span[2];
  for (std::int64_t base = static_cast<std::int64_t>(blockIdx.x) * blockDim.x; base < n;
       base += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const std::int64_t r = ell_build::block_segment_of(over_ptr, rows, base, n, span);
    if (r < 0) continue;
    const std::int64_t i = base + threadIdx.x;
    const std::int64_t k = static_cast<std::int64_t>(row_ptr[r]) + width + (i - over_ptr[r]);
    coo_row[i] = static_cast<Index>(r);
    coo_col[i] = col_idx[k];
    coo_val[i] = values[k];
  }
}

/// The width K and the ELL part's entries, as Hyb::build chooses them, for the matrix `a`.
struct HybSplit {
  std::int64_t width = 0, ell_nnz = 0;
};

/// The split from the downloaded row lengths (hyb_width itself): where the histogram would be
/// larger than the row lengths.
template <class Value, class Index>
HybSplit split_from_lengths(const DeviceCsrView<Value, Index>& a, const FormatOptions& o) {
  cuda::ScratchBuffer<Index> len(static_cast<std::size_t>(a.rows), "hyb build: row lengths");
  ell_build::csr_row_lengths(a.row_ptr, a.rows, len.data());
  const std::vector<Index> host_len = len.download();
  HybSplit s;
  s.width = hyb_width(host_len, a.nnz, o);
  for (const Index l : host_len) s.ell_nnz += std::min<std::int64_t>(l, s.width);
  return s;
}

/// The split from the histogram of the row lengths. hyb_width's rule (cusp_ell_width, CUSP's
/// relative speed 3) takes the smallest i < max_len with 3·R(i) < rows or R(i) < breakeven,
/// R(i) = rows longer than i, else max_len; a forced K is clamped to max_len and its padding
/// checked. Both read the counts of lengths 0..B-1 only, and every length from B up counts the
/// same min(length, K) = K ELL entries, for B = the clamped forced K, or for the rule
/// min(max_len, floor(3·nnz/rows) + 1): R(i)·(i+1) <= nnz, so at i = B-1 >= 3·nnz/rows - 1 the
/// rule has 3·R(i) < rows and stops there at the latest.
template <class Value, class Index>
HybSplit split_from_histogram(const DeviceCsrView<Value, Index>& a, const HybOptions& opt,
                              std::int64_t max_len, std::int64_t bound) {
  const std::vector<std::int64_t> h =
      length_histogram::histogram(length_histogram::RowLengths<Index>{a.row_ptr}, a.rows, bound,
                                  "hyb build: row-length histogram")
          .count;  // waits for the stream
  HybSplit s;
  if (opt.K) {
    s.width = std::min(*opt.K, max_len);  // wider would only add padding columns
    check_padding("hyb (forced K)", static_cast<double>(a.rows) * static_cast<double>(s.width),
                  a.nnz, a.rows, opt.max_fill, "hyb with K=auto or csr");
  } else {
    s.width = cusp_ell_width(h, max_len, 3.0, opt.breakeven);  // hyb_width's relative speed
  }
  for (std::size_t l = 0; l < h.size(); ++l)
    s.ell_nnz += h[l] * std::min<std::int64_t>(static_cast<std::int64_t>(l), s.width);
  return s;
}

/// The arrays of upload built on the GPU from a validated device CSR.
template <class Value, class Index>
HybDevice<Value, Index> build_on_device(const DeviceCsrView<Value, Index>& a,
                                         const FormatOptions& o) {
  HybDevice<Value, Index> d;
  d.rows = a.rows;
  d.cols = a.cols;
  d.pitch = ell_pitch(a.rows);
  const auto opt = parse_options<HybOptions>(o);
  HybSplit split;
  if (a.rows > 0) {
    const std::int64_t max_len = ell_build::max_row_length(a.row_ptr, a.rows);
    const std::int64_t bound =
        opt.K ? std::clamp<std::int64_t>(*opt.K, 0, max_len)
              : std::min<std::int64_t>(max_len, 3 * a.nnz / a.rows + 1);
    split = bound + 1 <= a.rows ? split_from_histogram(a, opt, max_len, bound)
                                : split_from_lengths(a, o);
  } else {
    split.width = hyb_width(std::vector<Index>{}, a.nnz, o);
  }
  d.width = split.width;
  d.ell_nnz = split.ell_nnz;
  d.coo_nnz = a.nnz - d.ell_nnz;

  ell_build::allocate_and_fill(a, d.width, d.pitch, d.ell_col, d.ell_val, "hyb ell col_idx",
                               "hyb ell values");

  const auto n = static_cast<std::size_t>(d.coo_nnz);
  d.coo_row = cuda::DeviceBuffer<Index>(n, "hyb coo row");
  d.coo_col = cuda::DeviceBuffer<Index>(n, "hyb coo col");
  d.coo_val = cuda::DeviceBuffer<Value>(n, "hyb coo values");
  if (d.coo_nnz > 0) {
    // Scratch: freed in stream order after the kernels that read them, no wait here.
    cuda::ScratchBuffer<Index> over(static_cast<std::size_t>(a.rows), "hyb build: tail lengths");
    cuda::ScratchBuffer<std::int64_t> over_ptr(static_cast<std::size_t>(a.rows) + 1,
                                               "hyb build: tail offsets");
    cuda::launch_grid_for("tail_lengths_kernel", tail_lengths_kernel<Index>, a.rows, kBlock,
                          a.row_ptr, a.rows, d.width, over.data());
    ell_build::offsets(over.data(), a.rows, over_ptr.data());
    cuda::launch("coo_tail_kernel", coo_tail_kernel<Value, Index>,
                 cuda::grid_cover(d.coo_nnz, kBlock), kBlock, a.row_ptr, a.col_idx, a.values,
                 a.rows, d.width, over_ptr.data(), d.coo_nnz, d.coo_row.data(), d.coo_col.data(),
                 d.coo_val.data());
  }
  return d;
}

/// ptr[r] = ell_ptr[r] + the tail entries of the rows before r (the first COO entry of a row
/// >= r, by a binary search of the sorted coo_row), for r = 0..rows: the CSR row offsets.
template <class Index>
__global__ void csr_offsets_kernel(const Index* __restrict__ coo_row, std::int64_t n,
                                   std::int64_t rows, const std::int64_t* __restrict__ ell_ptr,
                                   std::int64_t* __restrict__ ptr) {
  for (std::int64_t r = cuda::global_thread_id(); r <= rows; r += cuda::grid_thread_count()) {
    std::int64_t lo = 0, hi = n;
    while (lo < hi) {
      const std::int64_t mid = lo + (hi - lo) / 2;
      if (static_cast<std::int64_t>(coo_row[mid]) < r) lo = mid + 1;
      else hi = mid;
    }
    ptr[r] = ell_ptr[r] + lo;
  }
}

/// coo_val[i] = src[i + width + ell_ptr[coo_row[i]]], one thread per tail entry: tail entry i
/// of row r is CSR entry ptr[r] + width + (i - t), t the row's first tail entry, and
/// ptr[r] - t = ell_ptr[r] (the rows before r hold ell_ptr[r] entries in the ELL part and t in
/// the tail). Coalesced loads and stores within a row's tail, however long.
template <class Value, class Index>
__global__ void tail_values_kernel(const Index* __restrict__ coo_row, std::int64_t n,
                                   const std::int64_t* __restrict__ ell_ptr, std::int64_t width,
                                   const Value* __restrict__ src, Value* __restrict__ coo_val) {
  for (std::int64_t i = cuda::global_thread_id(); i < n; i += cuda::grid_thread_count())
    coo_val[i] = src[i + width + ell_ptr[coo_row[i]]];
}

}  // namespace

template <class Value, class Index>
void update_values(HybDevice<Value, Index>& d, const Value* values, Memory where) {
  ell_build::update_values_by_rows(
      d.row_offsets, d.ell_nnz + d.coo_nnz, values, where,
      [&d] {
        cuda::ScratchBuffer<Index> len(static_cast<std::size_t>(d.rows), "hyb update: ELL row lengths");
        ell_build::stored_lengths(d.ell_col.data(), d.rows, d.width, d.pitch, len.data());
        auto ell_ptr = ell_build::row_offsets(len.data(), d.rows, "hyb update: ELL row offsets");
        if (d.coo_nnz == 0) {  // every entry in the ELL part: its offsets are the CSR ones
          d.row_offsets = std::move(ell_ptr);
          return;
        }
        cuda::DeviceBuffer<std::int64_t> ptr(static_cast<std::size_t>(d.rows) + 1,
                                             "hyb update: row offsets");
        cuda::launch_grid_for("csr_offsets_kernel", csr_offsets_kernel<Index>, d.rows + 1, kBlock,
                              d.coo_row.data(), d.coo_nnz, d.rows, ell_ptr.data(), ptr.data());
        cuda::synchronize_stream();  // complete before either is kept
        d.ell_offsets = std::move(ell_ptr);
        d.row_offsets = std::move(ptr);
      },
      [&d](const Value* src) {
        ell_build::update_rows(d.row_offsets.data(), d.rows, d.width, d.pitch, src,
                               d.ell_val.data());
        if (d.coo_nnz > 0) {
          cuda::launch_grid_for("tail_values_kernel", tail_values_kernel<Value, Index>, d.coo_nnz,
                                kBlock, d.coo_row.data(), d.coo_nnz, d.ell_offsets.data(), d.width,
                                src, d.coo_val.data());
        }
      });
}

SPMAT_DEFINE_DEVICE_BUILDER(Hyb, HybDevice)
#define SPMAT_INSTANTIATE(V, I) SPMAT_INSTANTIATE_DEVICE_BUILDER(Hyb, HybDevice, V, I)
SPMAT_FOR_EACH_TYPE_PAIR(SPMAT_INSTANTIATE)
#undef SPMAT_INSTANTIATE

}  // namespace spmat
