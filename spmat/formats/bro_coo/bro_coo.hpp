// spmat/formats/bro_coo/bro_coo.hpp — BRO-COO: COO with delta-coded, bit-packed row indices in
// warp intervals (spec bro.md §4 and §9.8). Family page: docs/formats/bro.md.
// SPDX-License-Identifier: MIT
//
// Entries in row-major order are cut into intervals of `interval` entries (a multiple of 32;
// one warp each). Lane t of interval q owns entries begin+32j+t (j = 0..J-1), so at every step
// the 32 lanes hold 32 consecutive entries — what a warp's segmented reduction needs. Lane t's
// row stream is δ[t][0] = R[t][0] − base_row[q], δ[t][j] = R[t][j] − R[t][j−1] (≥ 0; 0 is a
// valid delta here), packed with one width b_q = max Γ(δ) per interval; lanes past the end pad
// with δ = 0. Lane streams have S_q = ⌈J·b_q/sym_len⌉ symbols, symbol p of lane t at
// sym_off[q] + 32·p + t. Columns and values stay raw (nnz each).
// Example: rows {0,0,1,1,1,1,1,2,2,2,3,3} (the paper's 4×5 matrix, 12 entries), interval 32:
//   one interval, J = 1, base_row 0, lane deltas {0,0,1,1,1,1,1,2,2,2,3,3, 0...} → b = 2.
// Traffic (spmv): storage_bytes + x + y.
// From a CSR in device memory the row streams are encoded on the GPU, the same bytes as build +
// upload (bro_coo_device_build.cu).
#pragma once
#include <algorithm>
#include <cstdint>
#include <memory>
#include <vector>

#include "spmat/core/csr.hpp"
#include "spmat/core/options.hpp"
#include "spmat/formats/bro_common/bro_common.hpp"
#include "spmat/formats/bro_common/bro_symbols.hpp"
#include "spmat/formats/format_common.hpp"
#include "spmat/matrix_impl.hpp"
#include "spmat/model/traffic.hpp"
#include "spmat/format_options.hpp"

namespace spmat {

template <class Value, class Index>
struct BroCoo : MatrixDims<Value, Index> {
  std::int64_t nnz = 0;
  int sym_len = 32;
  std::int64_t interval = 1024;            ///< entries per interval (multiple of 32)
  std::vector<Index> base_row;             ///< n_intervals: row of the interval's first entry
  std::vector<std::uint8_t> widths;        ///< n_intervals: b_q (0..32)
  std::vector<std::int64_t> sym_off{0};    ///< n_intervals+1
  std::vector<std::uint32_t> sym32;        ///< symbols when sym_len == 32
  std::vector<std::uint64_t> sym64;        ///< symbols when sym_len == 64
  std::vector<Index> col_idx;              ///< nnz, row-major order
  std::vector<Value> values;               ///< nnz

  /// Options: sym_len (32/64), interval (entries per warp interval, multiple of 32).
  static BroCoo build(const Csr<Value, Index>& a, const FormatOptions& o);
  /// Encodes entries given in row-major order (row_idx non-decreasing).
  static BroCoo encode(Index rows, Index cols, const std::vector<Index>& row_idx,
                       std::vector<Index> col_idx, std::vector<Value> values, int sym_len,
                       std::int64_t interval);

  std::int64_t intervals() const { return static_cast<std::int64_t>(widths.size()); }
  Csr<Value, Index> to_csr() const;
  std::size_t storage_bytes() const;
  Shape shape() const { return {this->rows, this->cols, nnz}; }
  /// η of the index data vs COO (2·nnz·I): row streams + raw columns vs row + column arrays.
  bro::IndexSavings index_savings() const;
};

/// Calls f(entry, row) for every entry of interval q, lane by lane, with the kernels' reader.
template <class Sym, class Value, class Index, class F>
inline void bro_coo_decode_interval(const BroCoo<Value, Index>& c, const Sym* syms,
                                    std::int64_t q, F&& f) {
  const std::int64_t begin = q * c.interval, end = std::min(c.nnz, begin + c.interval);
  const int b = c.widths[q];
  for (std::int64_t t = 0; t < 32 && begin + t < end; ++t) {
    typename bro::ReaderFor<Sym>::type rd(syms + c.sym_off[q] + t, 32);
    std::int64_t row = c.base_row[q];
    for (std::int64_t e = begin + t; e < end; e += 32) {
      row += rd.next(b);
      f(e, row);
    }
  }
}

template <class Value, class Index, class F>
inline void bro_coo_for_interval(const BroCoo<Value, Index>& c, std::int64_t q, F&& f) {
  bro::with_symbols(c, [&](const auto* syms) { bro_coo_decode_interval(c, syms, q, f); });
}

// CPU kernels (bro_coo_cpu.cpp): both through scatter_reduce over intervals (deterministic).
SPMAT_FORMAT_FUNCTIONS(BroCoo);
/// The same storage built on the GPU from a validated device CSR (bro_coo_device_build.cu).
template <class Value, class Index>
std::unique_ptr<MatrixImpl<Value>> build_cuda_from_device(std::type_identity<BroCoo<Value, Index>>,
                                                          const DeviceCsr<Value, Index>& a,
                                                          const FormatOptions& o);
/// acc[row] += v·x[col] over interval q (a work item of spmv).
template <class Value, class Index>
void bro_coo_scatter(const BroCoo<Value, Index>& c, std::int64_t q, const Value* x, Value* acc);
/// acc[col] += v·x[row] over interval q (a work item of spmv_t).
template <class Value, class Index>
void bro_coo_scatter_t(const BroCoo<Value, Index>& c, std::int64_t q, const Value* x, Value* acc);

}  // namespace spmat
