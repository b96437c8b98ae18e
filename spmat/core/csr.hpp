// spmat/core/csr.hpp — the canonical host sparse types Csr, Coo, Csc and the conversions between them.
// SPDX-License-Identifier: MIT
//
// Canonical form (what every format builds from and round-trips to):
//   * Csr: row_ptr has rows+1 entries, row_ptr[0] = 0, non-decreasing, row_ptr[rows] = nnz;
//     column indices strictly increasing within a row (sorted, no duplicates);
//     explicit zeros are kept as stored entries.
//   * Coo: any order, duplicates allowed; `to_csr` sorts and sums duplicates.
//   * Csc: the column-major mirror of Csr (col_ptr / row_idx), same rules per column.
//
// Example (3×3):            Csr{rows=3, cols=3,
//   [ 1 0 2 ]                   row_ptr = {0, 2, 3, 5},
//   [ 0 3 0 ]                   col_idx = {0, 2, 1, 0, 2},
//   [ 4 0 5 ]                   values  = {1, 2, 3, 4, 5}}
#pragma once
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "spmat/core/types.hpp"

namespace spmat {

/// The head of the matrix types and of the format storages that keep their own dimensions: the
/// member types (as the standard containers name them), then rows and cols.
/// As a base of an aggregate it keeps positional brace initialization ({rows, cols, ...}); a
/// template deriving from it names the members this->rows and this->cols.
template <class Value, class Index>
struct MatrixDims {
  using value_type = Value;
  using index_type = Index;
  Index rows = 0;
  Index cols = 0;
  bool operator==(const MatrixDims&) const = default;
};

template <class Value, class Index>
struct Csr : MatrixDims<Value, Index> {
  std::vector<Index> row_ptr{0};
  std::vector<Index> col_idx;
  std::vector<Value> values;

  Index nnz() const { return static_cast<Index>(col_idx.size()); }
  /// Throws InvalidMatrixError naming the first violation of the canonical form.
  void validate(std::string_view what = "matrix") const;
  bool operator==(const Csr&) const = default;
};

template <class Value, class Index>
struct Coo : MatrixDims<Value, Index> {
  std::vector<Index> row_idx;
  std::vector<Index> col_idx;
  std::vector<Value> values;

  Index nnz() const { return static_cast<Index>(col_idx.size()); }
  /// Checks array lengths and that every index is in range.
  void validate(std::string_view what = "matrix") const;
  bool operator==(const Coo&) const = default;
};

template <class Value, class Index>
struct Csc : MatrixDims<Value, Index> {
  std::vector<Index> col_ptr{0};
  std::vector<Index> row_idx;
  std::vector<Value> values;

  Index nnz() const { return static_cast<Index>(row_idx.size()); }
  bool operator==(const Csc&) const = default;
};

/// COO (any order, duplicates) -> canonical CSR: stable sort by (row, col), duplicates summed.
template <class Value, class Index>
Csr<Value, Index> to_csr(const Coo<Value, Index>& a);
/// CSR -> COO in row-major order (row_idx expanded from row_ptr).
template <class Value, class Index>
Coo<Value, Index> to_coo(const Csr<Value, Index>& a);
/// CSR -> CSC (a counting-sort transpose of the arrays; O(nnz + rows + cols)).
template <class Value, class Index>
Csc<Value, Index> to_csc(const Csr<Value, Index>& a);
/// CSC -> CSR.
template <class Value, class Index>
Csr<Value, Index> to_csr(const Csc<Value, Index>& a);
/// Aᵀ as canonical CSR.
template <class Value, class Index>
Csr<Value, Index> transpose(const Csr<Value, Index>& a);
/// Sorts columns within rows and sums duplicates, in place (for hand-made CSR input).
template <class Value, class Index>
void canonicalize(Csr<Value, Index>& a);

/// Converts value and/or index type. Throws IndexOverflowError if the target index is too small.
template <class V2, class I2, class V1, class I1>
Csr<V2, I2> convert(const Csr<V1, I1>& a, std::string_view what = "matrix") {
  check_index_range<I2>(a.rows, a.cols, static_cast<std::int64_t>(a.col_idx.size()), what);
  Csr<V2, I2> b;
  b.rows = static_cast<I2>(a.rows);
  b.cols = static_cast<I2>(a.cols);
  b.row_ptr.assign(a.row_ptr.begin(), a.row_ptr.end());
  b.col_idx.assign(a.col_idx.begin(), a.col_idx.end());
  b.values.resize(a.values.size());
  for (std::size_t i = 0; i < a.values.size(); ++i) b.values[i] = static_cast<V2>(a.values[i]);
  return b;
}

/// Row lengths (rows entries).
template <class Value, class Index>
std::vector<Index> row_lengths(const Csr<Value, Index>& a) {
  std::vector<Index> len(static_cast<std::size_t>(a.rows));
  for (Index r = 0; r < a.rows; ++r) len[r] = a.row_ptr[r + 1] - a.row_ptr[r];
  return len;
}

/// Exact bytes of two index arrays and a value array: the storage of a Csr, Coo or Csc.
template <class Index, class Value>
std::size_t array_bytes(const std::vector<Index>& i, const std::vector<Index>& j,
                        const std::vector<Value>& v) {
  return (i.size() + j.size()) * sizeof(Index) + v.size() * sizeof(Value);
}
template <class Value, class Index>
std::size_t storage_bytes(const Csr<Value, Index>& a) {
  return array_bytes(a.row_ptr, a.col_idx, a.values);
}
template <class Value, class Index>
std::size_t storage_bytes(const Coo<Value, Index>& a) {
  return array_bytes(a.row_idx, a.col_idx, a.values);
}
template <class Value, class Index>
std::size_t storage_bytes(const Csc<Value, Index>& a) {
  return array_bytes(a.col_ptr, a.row_idx, a.values);
}

}  // namespace spmat
