// spmat/formats/bro_hyb/bro_hyb_device_build.cu — BRO-HYB built on the GPU from a device CSR.
// SPDX-License-Identifier: MIT
//
// BroHyb::build's steps; the arrays equal upload(BroHyb::build(csr)) byte for byte:
//   1. the ELL width K: the option ell_width when given, else the split rule, which reads only
//      histograms: bounded histograms of the row lengths and, for split=bytes, of the slices'
//      longest rows (length_histogram: the lengths from a bound B up share one bin, B chosen so
//      that the rule's answer is the full histogram's, see split_width), downloaded together,
//      go through the host's own rule (cusp_ell_width / the bytes rule's walk): the same K. No
//      column index or value leaves the device;
//   2. the BRO-ELL part: bro_ell_encode_on_device with rows cut to K (bro_ell_device_build.cu),
//      a forced width checked against max_fill on its first pass, as on the host;
//   3. the BRO-COO part: each row's entries past K, in CSR order (tail offsets by a CUB scan,
//      one thread per tail entry finding its row by a binary search), then
//      bro_coo_encode_on_device (bro_coo_device_build.cu).
// bro-hyb-bar (the option bar=1) is not reordered on the device: it downloads the CSR and runs
// the host builder, then uploads. Value updates stay refused (UnsupportedError).
#include <string>
#include <vector>

#include "spmat/core/typed_options.hpp"
#include "spmat/cuda/device_builder.hpp"
#include "spmat/cuda/device_impl.hpp"
#include "spmat/formats/bro_common/bro_device_build.cuh"
#include "spmat/formats/bro_hyb/bro_hyb_device.hpp"
#include "spmat/formats/ell/ell_device_build.cuh"
#include "spmat/formats/ell/row_length_histogram.cuh"
#include "spmat/formats/hyb/hyb.hpp"

namespace spmat {

namespace {

constexpr int kBlock = 256;

/// The longest row of each slice of h rows (one warp per slice).
template <class Index>
__global__ void slice_longest_kernel(const Index* __restrict__ len, std::int64_t rows, int h,
                                     std::int64_t slices, Index* __restrict__ out) {
  const std::int64_t warp = cuda::global_thread_id() / 32, warps = cuda::grid_thread_count() / 32;
  for (std::int64_t s = warp; s < slices; s += warps) {
    std::int64_t l = 0;
    for (std::int64_t p = s * h + cuda::lane_id(); p < min(rows, (s + 1) * h); p += 32)
      l = max(l, static_cast<std::int64_t>(len[p]));
    l = bro::warp_max64(l);
    if (cuda::lane_id() == 0) out[s] = static_cast<Index>(l);
  }
}

template <class Index>
__global__ void tail_lengths_kernel(const Index* __restrict__ len, std::int64_t rows,
                                    std::int64_t width, Index* __restrict__ over) {
  for (std::int64_t r = cuda::global_thread_id(); r < rows; r += cuda::grid_thread_count())
    over[r] = static_cast<Index>(len[r] > width ? len[r] - width : 0);
}

/// Tail entry i: the entry width + (i − tail_ptr[r]) of its row r.
template <class Value, class Index>
__global__ void tail_gather_kernel(const Index* __restrict__ row_ptr,
                                   const Index* __restrict__ col_idx,
                                   const Value* __restrict__ values, std::int64_t rows,
                                   std::int64_t width, const std::int64_t* __restrict__ tail_ptr,
                                   std::int64_t n, Index* __restrict__ out_row,
                                   Index* __restrict__ out_col, Value* __restrict__ out_val) {
  for (std::int64_t i = cuda::global_thread_id(); i < n; i += cuda::grid_thread_count()) {
    const std::int64_t r = cuda::segment_of(tail_ptr, rows, i);
    const std::int64_t k = static_cast<std::int64_t>(row_ptr[r]) + width + (i - tail_ptr[r]);
    out_row[i] = static_cast<Index>(r);
    out_col[i] = col_idx[k];
    out_val[i] = values[k];
  }
}

/// K by the split rule of `opt` (split=cusp or bytes), as BroHyb::build computes it from row_ptr,
/// here from bounded histograms (length_histogram) of the row lengths `len` and, for bytes, of
/// the slices' longest rows, downloaded together (the one wait). The bounds:
///   cusp: B = floor(3·nnz/rows) + 1. R(i) = rows longer than i has R(i)·(i+1) <= nnz, so at
///     i = B−1 (> 3·nnz/rows − 1) 3·R(i) < rows: the rule stops at i <= B−1 (or earlier at
///     max_len) and reads the counts below B only, which the bounded histogram holds exactly;
///   bytes: the bins of shared memory (B = 2045); the rule up to B is the full rule's walk, and
///     past B the bound of bro_hyb_ell_width_bytes_bounded (from Σ max(0, len − B), the one
///     extra number downloaded) shows that no longer K reaches the best one; where it does not
///     show it, the host rule runs on a downloaded row_ptr.
/// Histograms longer than row_ptr (few rows) are not made: row_ptr is downloaded instead.
template <class Value, class Index>
std::int64_t split_width(const DeviceCsrView<Value, Index>& a, const Index* len,
                         const BroHybOptions& opt) {
  if (a.rows <= 0) return 0;
  const bool cusp = opt.split == "cusp";
  const int vb = static_cast<int>(sizeof(Value)), ib = static_cast<int>(sizeof(Index));
  const auto host_rule = [&] {
    std::vector<Index> row_ptr(static_cast<std::size_t>(a.rows) + 1);
    cuda::copy_to_host(row_ptr.data(), a.row_ptr, row_ptr.size());
    return cusp ? bro_hyb_ell_width<Index>(row_ptr)
                : bro_hyb_ell_width_bytes<Index>(row_ptr, opt.h, vb, ib);
  };
  const std::int64_t bound =
      cusp ? 3 * a.nnz / a.rows + 1 : length_histogram::kSharedBins - 3;
  const std::int64_t bins = bound + 3;  // the counts, the excess, the longest
  if (bins > a.rows + 1) return host_rule();
  const std::int64_t slices = cusp ? 0 : (a.rows + opt.h - 1) / opt.h;
  cuda::ScratchBuffer<unsigned long long> hist(static_cast<std::size_t>(cusp ? bins : 2 * bins),
                                               "bro-hyb build: length histograms");
  cuda::ScratchBuffer<Index> slice_longest(static_cast<std::size_t>(slices),
                                           "bro-hyb build: slice lengths");
  length_histogram::queue_histogram(length_histogram::StoredLengths<Index>{len}, a.rows, bound,
                                    hist.data());
  if (!cusp) {
    cuda::launch_grid_for("bro slice_longest_kernel", slice_longest_kernel<Index>, slices * 32,
                          kBlock, len, a.rows, opt.h, slices, slice_longest.data());
    length_histogram::queue_histogram(length_histogram::StoredLengths<Index>{slice_longest.data()},
                                      slices, bound, hist.data() + bins);
  }
  const std::vector<unsigned long long> h = hist.download();  // waits for the stream
  const length_histogram::Histogram row_hist = length_histogram::read_histogram(h.data(), bound);
  if (cusp) return cusp_ell_width(row_hist.count, row_hist.longest);
  const length_histogram::Histogram slice_hist =
      length_histogram::read_histogram(h.data() + bins, bound);
  if (const auto k = bro_hyb_ell_width_bytes_bounded(row_hist.count, slice_hist.count,
                                                     row_hist.longest, a.nnz, row_hist.excess,
                                                     opt.h, vb, ib))
    return *k;
  return host_rule();
}

/// The arrays of upload(BroHyb::build(csr, o)) built on the GPU from a validated device CSR;
/// with bar=1 (bro-hyb-bar), the host builder on a downloaded copy, then the upload.
template <class Value, class Index>
BroHybDevice<Value, Index> build_on_device(const DeviceCsrView<Value, Index>& a,
                                           const FormatOptions& o) {
  const auto opt = parse_options<BroHybOptions>(o);
  if (opt.bar)
    return BroHybDevice<Value, Index>::upload(BroHyb<Value, Index>::build(cuda::download(a), o));
  const auto rows = static_cast<std::size_t>(a.rows);
  // Temporaries are scratch: freed in stream order after the kernels that read them, no wait.
  cuda::ScratchBuffer<Index> len(rows, "bro-hyb build: row lengths");
  ell_build::csr_row_lengths(a.row_ptr, a.rows, len.data());
  const bool forced = opt.ell_width >= 0;
  const std::int64_t k = forced ? opt.ell_width : split_width(a, len.data(), opt);

  BroHybDevice<Value, Index> d;
  cuda::copy_shape(d, a);
  d.ell_width = k;
  // Both split rules keep the ELL part's padding small; a forced width may not (BroHyb::build).
  const auto limits = [&](const BroEllDevicePlan& p) {
    if (forced)
      check_padding("bro-hyb (forced ell_width)", static_cast<double>(p.slots), a.nnz, a.rows,
                    opt.max_fill, "bro-hyb with ell_width=-1, hyb or csr");
  };
  d.ell = bro_ell_encode_on_device(a, bro_ell_shape<Value, Index>(opt), k, limits);

  const std::int64_t n = a.nnz - d.ell.nnz;  // the entries past K
  const auto nn = static_cast<std::size_t>(n);
  cuda::ScratchBuffer<Index> tail_row(nn, "bro-hyb build: tail rows");
  cuda::DeviceBuffer<Index> tail_col(nn, "bro-coo columns");
  cuda::DeviceBuffer<Value> tail_val(nn, "bro-coo values");
  if (n > 0) {
    cuda::ScratchBuffer<Index> over(rows, "bro-hyb build: tail lengths");
    cuda::ScratchBuffer<std::int64_t> tail_ptr(rows + 1, "bro-hyb build: tail offsets");
    cuda::launch_grid_for("bro tail_lengths_kernel", tail_lengths_kernel<Index>, a.rows, kBlock,
                          len.data(), a.rows, k, over.data());
    ell_build::offsets(over.data(), a.rows, tail_ptr.data());
    cuda::launch_grid_for("bro tail_gather_kernel", tail_gather_kernel<Value, Index>, n, kBlock,
                          a.row_ptr, a.col_idx, a.values, a.rows, k, tail_ptr.data(), n,
                          tail_row.data(), tail_col.data(), tail_val.data());
  }
  // tail_row is read by the encoder's queued kernels; scratch, it is freed after them.
  d.coo = bro_coo_encode_on_device<Value, Index>(a.rows, a.cols, tail_row.data(),
                                                 std::move(tail_col), std::move(tail_val),
                                                 opt.sym_len, opt.interval);
  return d;
}

}  // namespace

SPMAT_DEFINE_DEVICE_BUILDER(BroHyb, BroHybDevice)

SPMAT_INSTANTIATE_DEVICE_BUILDER_WITHOUT_UPDATES(BroHyb)

}  // namespace spmat
