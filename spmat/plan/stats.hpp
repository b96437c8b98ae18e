// spmat/plan/stats.hpp — the matrix statistics the planner decides from (one pass over the CSR).
// SPDX-License-Identifier: MIT
#pragma once
#include <cstdint>
#include <string>

#include "spmat/core/csr.hpp"

namespace spmat {

/// Structure of a matrix as the planner sees it, from row_ptr and col_idx; values are never read.
/// Row lengths use every row; the locality figures (spread, sectors, shifted rows) are
/// estimated from evenly spaced rows holding about 2 M entries.
struct MatrixStats {
  std::int64_t rows = 0, cols = 0, nnz = 0;
  double mean_row = 0;          ///< nnz / rows
  std::int64_t max_row = 0;     ///< longest row
  double row_cv = 0;            ///< standard deviation / mean of the row lengths
  double empty_rows = 0;        ///< share of rows without entries
  /// Share of the nonzeros held by rows longer than 4x the mean (0 for even rows): how much of
  /// the work a row-per-lane kernel would give to a few lanes.
  double heavy_share = 0;
  /// Share of the nonzeros in rows longer than 32x the mean and 1024: what a row-parallel
  /// kernel must split across blocks.
  double long_share = 0;
  /// Mean distance of an entry's column from the diagonal, relative to the column count (0 for
  /// a band, about 1/3 for uniformly random columns): how far x gathers wander.
  double col_spread = 0;
  /// Distinct 32-byte sectors of fp64 x touched per nonzero within a row (1 when every entry
  /// needs its own sector, 1/4 for runs of consecutive columns).
  double sectors_per_nnz = 0;
  /// Share of rows whose column set equals the previous row's shifted by one (stencils, bands):
  /// the structure ELL-like and diagonal formats exploit.
  double shifted_rows = 0;
  /// nnz / padded slots when rows are padded to the longest row (ELL) and to the longest row
  /// of each slice of 32 consecutive rows (sliced ELL): 1 for even rows.
  double ell_fill = 0, slice_fill = 0;
  /// The column counts' statistics (the row statistics of Aᵀ): longest column, their
  /// coefficient of variation, heavy and long shares and empty share, as for rows above.
  std::int64_t max_col = 0;
  double col_cv = 0, col_heavy_share = 0, col_long_share = 0, empty_cols = 0;

  /// The statistics of Aᵀ (rows and columns swapped; locality figures kept).
  MatrixStats transposed() const;
  std::string summary() const;
};

/// Row statistics always; the column counts' statistics only `with_columns` (one more pass
/// over the column indices; without it they are left at zero).
template <class Value, class Index>
MatrixStats matrix_stats(const Csr<Value, Index>& a, bool with_columns = true);

/// 64-bit structural fingerprint: shape, row pointers and column indices (values excluded), so
/// that a plan cached for one matrix is reused for the same structure with new values.
template <class Value, class Index>
std::uint64_t structure_fingerprint(const Csr<Value, Index>& a);

}  // namespace spmat
