// spmat/formats/ell/ell.hpp — ELLPACK storage (column-major, padded to the longest row) and its kernels.
// SPDX-License-Identifier: MIT
//
// Registry name: ell. Layout: width K = max row length; entry j of row i sits at j*pitch + i,
// pitch = rows rounded up to a multiple of 32 (one warp of rows per aligned segment, so GPU loads
// of a warp coalesce). Rows are left-packed in column order; padding slots (after a row's last
// entry, and the rows pitch-rows..pitch-1) hold column kEllPadding (-1) and value 0. Explicit
// zeros are stored entries (their column is >= 0), so the round trip is exact.
//
// Example (4×4)  [[1,0,2,0],[0,0,0,0],[3,4,0,5],[0,0,0,6]]:  K = 3, pitch = 32,
//   col_idx[j*32 + i] for rows i=0..3:  j=0: { 0,-1, 0, 3}  j=1: { 2,-1, 1,-1}  j=2: {-1,-1, 3,-1}
//   values [j*32 + i]:                  j=0: { 1, 0, 3, 6}  j=1: { 2, 0, 4, 0}  j=2: { 0, 0, 5, 0}
//   (rows 4..31 of every column j are padding.)
//
// Padding limit (row_limits.hpp): build throws UnsupportedError when rows·K > max_fill·(nnz +
// rows) (option max_fill, default 8; inf disables the check), before allocating: one long row
// would cost rows × its length in storage and make its thread walk it alone. Rounding rows up
// to the pitch adds at most 31·K slots on top and is not counted.
// Traffic (spmv): pitch·K·(I+V) + cols·V (x) + rows·V (y).
#pragma once
#include <cstdint>
#include <memory>
#include <type_traits>
#include <vector>

#include "spmat/core/csr.hpp"
#include "spmat/core/device_csr.hpp"
#include "spmat/core/options.hpp"
#include "spmat/formats/ell/row_limits.hpp"
#include "spmat/formats/format_common.hpp"
#include "spmat/matrix_impl.hpp"
#include "spmat/model/traffic.hpp"
#include "spmat/format_options.hpp"

namespace spmat {

/// Column index of an ELL padding slot.
inline constexpr int kEllPadding = -1;
/// Row count of the aligned segments of ELL storage (pitch is a multiple of it).
inline constexpr std::int64_t kEllAlign = 32;

template <class Value, class Index>
struct Ell : MatrixDims<Value, Index> {
  Index nnz = 0;            ///< stored (non-padding) entries
  Index width = 0;          ///< K: slots per row
  std::int64_t pitch = 0;   ///< rows rounded up to kEllAlign
  std::vector<Index> col_idx;  ///< pitch*width, column-major, kEllPadding in padding slots
  std::vector<Value> values;   ///< pitch*width, column-major, 0 in padding slots

  /// Options: max_fill (see the file comment).
  static Ell build(const Csr<Value, Index>& a, const FormatOptions& o);
  /// The first `width` entries of each row of `a` (rows longer than width are cut: HYB's ELL
  /// part). No fill check; the caller decides the width.
  static Ell build_width(const Csr<Value, Index>& a, Index width);
  Csr<Value, Index> to_csr() const;
  std::size_t storage_bytes() const {
    return col_idx.size() * sizeof(Index) + values.size() * sizeof(Value);
  }
  Shape shape() const { return {this->rows, this->cols, nnz}; }
};

/// rows rounded up to kEllAlign.
inline std::int64_t ell_pitch(std::int64_t rows) {
  return (rows + kEllAlign - 1) / kEllAlign * kEllAlign;
}

// CPU kernels (ell_cpu.cpp). Deterministic: spmv sums each row in slot order; spmv_t uses
// scatter_reduce over 32-row segments (fixed partition for a fixed thread count).
SPMAT_FORMAT_FUNCTIONS(Ell);

/// Row-block helpers shared with hyb: rows [r0, r1) with r1 - r0 <= kEllAlign.
/// ell_block_sums: sum[i - r0] = Σ values·x over row i's stored slots (slot order).
/// ell_block_scatter: acc[col] += values·x[i] over the same slots.
template <class Value, class Index>
void ell_block_sums(const Ell<Value, Index>& s, std::int64_t r0, std::int64_t r1, const Value* x,
                    Value* sum);
template <class Value, class Index>
void ell_block_scatter(const Ell<Value, Index>& s, std::int64_t r0, std::int64_t r1,
                       const Value* x, Value* acc);

/// update_values: new values in CSR order (into the slots of each row, padding untouched;
/// ell_values.cpp).
/// build_cuda_from_device: the same arrays built on the GPU from a validated device CSR, refused
/// like build (ell_device_build.cu).
SPMAT_DECLARE_VALUE_UPDATE_AND_DEVICE_BUILD(Ell);

}  // namespace spmat
