// spmat/formats/hyb/hyb.hpp — HYB (Bell & Garland): an ELL part of width K plus a COO overflow.
// SPDX-License-Identifier: MIT
//
// Registry name: hyb. The ELL part (formats/ell layout: column-major, pitch = rows rounded up
// to 32, padding column -1 / value 0) holds the first K entries of every row; the entries past
// K go to a COO part sorted by (row, column). K is CUSP's rule (hyb_ell_width below) unless
// forced with option K=<n> (the width is then min(n, max row length)). Options: K (auto |
// n >= 0), breakeven (4096), max_fill (8, checked as in ell only for a forced K: the
// automatic K keeps rows·K <= 3·nnz, since at least rows/3 rows are K or more long, and the
// COO part is walked by warps over entries, so no row is walked by one thread).
//
// Example (4×4)  [[1,0,2,0],[0,0,0,0],[3,4,0,5],[0,0,0,6]]  with K = 2 forced:
//   ELL (pitch 32): col_idx j=0: { 0,-1, 0, 3}  j=1: { 2,-1, 1,-1}
//                   values  j=0: { 1, 0, 3, 6}  j=1: { 2, 0, 4, 0}
//   COO: row = {2}, col = {3}, val = {5}.
// (The automatic K for this matrix is 0 — every row count is below breakeven = 4096, so a
// matrix this small goes entirely to COO; with breakeven=0 the rule gives K = 2.)
// Traffic (spmv): pitch·K·(I+V) + nnz_coo·(2I+V) + cols·V + rows·V.
#pragma once
#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <type_traits>
#include <vector>

#include "spmat/core/error.hpp"
#include "spmat/formats/ell/ell.hpp"
#include "spmat/formats/format_common.hpp"
#include "spmat/model/traffic.hpp"
#include "spmat/format_options.hpp"

namespace spmat {

/// CUSP's HYB width (cusp compute_optimal_entries_per_row) from a histogram of the row lengths,
/// the one form of the rule that hyb, its device builder and bro-hyb's split=cusp share: with
/// R(i) = rows longer than i, K = the smallest i < max_len with relative_speed·R(i) < rows or
/// R(i) < breakeven; max_len if there is none; 0 without rows. hist[l] = rows of length l for
/// l < B = hist.size() − 1, hist[B] = rows of length B or more (B = max_len: the whole
/// histogram), rows = their sum. The rule reads hist[i] for i < K only; a bounded histogram whose
/// B the rule passes is a caller's error (Error).
inline std::int64_t cusp_ell_width(std::span<const std::int64_t> hist, std::int64_t max_len,
                                   double relative_speed = 3.0, std::int64_t breakeven = 4096) {
  std::int64_t rows = 0;
  for (const std::int64_t n : hist) rows += n;
  if (rows <= 0) return 0;
  const auto bound = static_cast<std::int64_t>(hist.size()) - 1;
  std::int64_t longer = rows;  // R(i)
  for (std::int64_t i = 0; i < max_len; ++i) {
    if (i >= bound) throw Error("cusp_ell_width: the rule read past its bounded histogram");
    longer -= hist[static_cast<std::size_t>(i)];
    if (relative_speed * static_cast<double>(longer) < static_cast<double>(rows) ||
        longer < breakeven)
      return i;
  }
  return max_len;
}

/// cusp_ell_width of the row lengths `row_len`. Defaults 3 and 4096 are CUSP's.
/// Example: lengths {2,5,3,2}: breakeven 4096 → 0 (R(0) = 4 < 4096); breakeven 0 → 3.
template <class Index>
std::int64_t hyb_ell_width(const std::vector<Index>& row_len, std::int64_t breakeven = 4096,
                           std::int64_t relative_speed = 3) {
  std::int64_t maxlen = 0;
  for (Index l : row_len) maxlen = std::max<std::int64_t>(maxlen, l);
  std::vector<std::int64_t> histogram(static_cast<std::size_t>(maxlen) + 1, 0);
  for (Index l : row_len) ++histogram[static_cast<std::size_t>(l)];
  return cusp_ell_width(histogram, maxlen, static_cast<double>(relative_speed), breakeven);
}

/// The ELL width K that Hyb::build chooses for rows of lengths `len` holding `nnz` entries
/// under options `o` (K, breakeven, max_fill); throws as build does. Shared with the device
/// builder, which downloads the row lengths to call it.
template <class Index>
std::int64_t hyb_width(const std::vector<Index>& len, std::int64_t nnz, const FormatOptions& o);

template <class Value, class Index>
struct Hyb {
  Ell<Value, Index> ell;        ///< first K entries of each row (ell.width = K)
  std::vector<Index> coo_row;   ///< overflow entries, sorted by (row, column)
  std::vector<Index> coo_col;
  std::vector<Value> coo_val;

  static Hyb build(const Csr<Value, Index>& a, const FormatOptions& o);
  Csr<Value, Index> to_csr() const;
  std::size_t storage_bytes() const {
    return ell.storage_bytes() + (coo_row.size() + coo_col.size()) * sizeof(Index) +
           coo_val.size() * sizeof(Value);
  }
  Shape shape() const {
    return {ell.rows, ell.cols, static_cast<std::int64_t>(ell.nnz) +
                                    static_cast<std::int64_t>(coo_val.size())};
  }
};

// CPU kernels (hyb_cpu.cpp). Deterministic: ELL rows as ell, then each COO row segment is
// summed in order by one thread and added to y; spmv_t uses scatter_reduce.
SPMAT_FORMAT_FUNCTIONS(Hyb);

/// update_values: new values in CSR order (the first K of each row into the ELL part, the rest into
/// the COO tail; hyb_values.cpp).
/// build_cuda_from_device: the same arrays built on the GPU from a validated device CSR
/// (hyb_device_build.cu).
SPMAT_DECLARE_VALUE_UPDATE_AND_DEVICE_BUILD(Hyb);

}  // namespace spmat
