// spmat/formats/bro_hyb/bro_hyb.hpp — BRO-HYB: the HYB split into a BRO-ELL part (the first K
// entries of each row) and a BRO-COO part (the rest); spec bro.md §5. Family page:
// docs/formats/bro.md.
// SPDX-License-Identifier: MIT
//
// Registry names: `bro-hyb` and `bro-hyb-bar` (BAR on the ELL part; y in original row order).
// Split (CUSP's rule, spec §2; computed here by bro_hyb_ell_width, independent of the plain
// `hyb` format): R(i) = #rows longer than i; K = the smallest i < maxlen with 3·R(i) < rows or
// R(i) < 4096, else maxlen. Example: row lengths {2,5,3,2} give R = {4,4,2,1,1}: 3·R(2) = 6 ≥ 4
// but R(0) = 4 < 4096, so K = 0 (small matrices go to COO entirely, as in CUSP); with the
// breakeven term off (breakeven = 0), K = 3 (3·R(3) = 3 < 4): COO holds row 1's columns 3, 4.
// Traffic (spmv): storage_bytes of both parts + x + y.
// From a CSR in device memory the split rule runs on downloaded row-length histograms and both
// parts are encoded on the GPU, the same bytes as build + upload (bro_hyb_device_build.cu);
// bro-hyb-bar (bar=1) downloads the CSR and runs build on the host instead.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "spmat/formats/bro_coo/bro_coo.hpp"
#include "spmat/formats/bro_ell/bro_ell.hpp"
#include "spmat/formats/format_common.hpp"
#include "spmat/model/traffic.hpp"
#include "spmat/format_options.hpp"

namespace spmat {

/// CUSP's HYB ELL width for the row lengths given by row_ptr (rows+1 entries):
/// the smallest i < maxlen with relative_speed·R(i) < rows or R(i) < breakeven, else maxlen.
template <class Index>
std::int64_t bro_hyb_ell_width(std::span<const Index> row_ptr, double relative_speed = 3.0,
                               std::int64_t breakeven = 4096);

/// The byte-cost split (`split=bytes`, the default): K minimising
///   h·Σ_slices min(L_s, K)·(value_bytes + 1)  +  coo_penalty·Σ_rows max(0, len_r − K)·(value_bytes + index_bytes + 1)
/// where L_s is the longest row of slice s (consecutive rows, h per slice). It prices the
/// padding of a *sliced* ELL (CUSP's rule prices a global ELL, whose padding is per matrix, and
/// so moves 5–20 % of a near-uniform matrix's entries into the slow atomic COO part), and the
/// COO part at coo_penalty times its bytes (segmented scan + atomics; default 3). Ties go to the
/// larger K. Example: rows of lengths {2,5,5,5} with h = 2, fp64/int32: K = 5 (no COO part).
template <class Index>
std::int64_t bro_hyb_ell_width_bytes(std::span<const Index> row_ptr, int h, int value_bytes,
                                     int index_bytes, double coo_penalty = 3.0);

/// The two rules on histograms, which is all they read (the device builder downloads these,
/// never row_ptr): hist / row_hist[i] = rows of length i and slice_hist[i] = slices of h rows
/// whose longest row has length i, for i = 0..the longest row (slice_hist may be shorter).
std::int64_t bro_hyb_ell_width_hist(std::span<const std::int64_t> hist, double relative_speed = 3.0,
                                    std::int64_t breakeven = 4096);
std::int64_t bro_hyb_ell_width_bytes_hist(std::span<const std::int64_t> row_hist,
                                          std::span<const std::int64_t> slice_hist, int h,
                                          int value_bytes, int index_bytes,
                                          double coo_penalty = 3.0);
/// bro_hyb_ell_width_bytes_hist's answer from bounded histograms, when they decide it: row_hist
/// and slice_hist hold B+1 bins each, bin B counting the lengths of B or more; max_len is the
/// longest row, nnz the entries, row_excess = Σ_rows max(0, len − B). Empty when the rows past B
/// might hold a K at least as good (the caller then runs the rule on the whole histogram).
std::optional<std::int64_t> bro_hyb_ell_width_bytes_bounded(
    std::span<const std::int64_t> row_hist, std::span<const std::int64_t> slice_hist,
    std::int64_t max_len, std::int64_t nnz, std::int64_t row_excess, int h, int value_bytes,
    int index_bytes, double coo_penalty = 3.0);

template <class Value, class Index>
struct BroHyb : MatrixDims<Value, Index> {
  std::int64_t nnz = 0;
  std::int64_t ell_width = 0;  ///< K
  BroEll<Value, Index> ell;    ///< rows × (≤ K), possibly BAR-permuted (row_id maps back)
  BroCoo<Value, Index> coo;    ///< the overflow, original row indices

  /// Options: h, sym_len, first, kernel, unroll, interval, ell_width (-1 = rule), split (bytes | cusp), bar,
  /// bar_algo, bar_window, max_fill (forced ell_width only: UnsupportedError when the BRO-ELL
  /// part's slots exceed max_fill·(nnz + rows), row_limits.hpp; the rules keep it small).
  static BroHyb build(const Csr<Value, Index>& a, const FormatOptions& o);
  Csr<Value, Index> to_csr() const;
  std::size_t storage_bytes() const { return ell.storage_bytes() + coo.storage_bytes(); }
  Shape shape() const { return {this->rows, this->cols, nnz}; }
  /// η vs HYB (ELL part rows·K·I, COO part 2·nnz_coo·I).
  bro::IndexSavings index_savings() const;
};

// CPU kernels (bro_hyb_cpu.cpp), deterministic: spmv sums the COO part per row with
// scatter_reduce, then the BRO-ELL pass adds it into each row before the epilogue; spmv_t runs
// the slices and the intervals as work items of one scatter_reduce.
SPMAT_FORMAT_FUNCTIONS(BroHyb);
/// The same storage built on the GPU from a validated device CSR (bro_hyb_device_build.cu; see
/// the file comment for what it computes where).
template <class Value, class Index>
std::unique_ptr<MatrixImpl<Value>> build_cuda_from_device(std::type_identity<BroHyb<Value, Index>>,
                                                          const DeviceCsr<Value, Index>& a,
                                                          const FormatOptions& o);

}  // namespace spmat
