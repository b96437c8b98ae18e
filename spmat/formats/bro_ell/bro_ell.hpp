// spmat/formats/bro_ell/bro_ell.hpp — BRO-ELL: sliced ELLPACK with delta-coded, bit-packed
// column indices (Tang et al., SC'13; spec bro.md §3 with every §9 fix). Family page: docs/formats/bro.md.
// SPDX-License-Identifier: MIT
//
// Registry names: `bro-ell` and `bro-ell-bar` (the same with BAR row reordering; y still comes
// out in the original row order).
//
// Layout of the paper's example (0-based here) [[3,0,2,0,0],[2,6,5,4,1],[0,1,9,0,7],[0,0,0,8,3]]
// with h = 2 (tests only; the registry allows h = 32..1024, multiples of 32):
//   deltas (first = column+1, then differences; 0 = padding):
//     slice 0: {1,2,0,0,0} {1,1,1,1,1}   widths {1,2,1,1,1}
//     slice 1: {2,1,2,0,0}→l=3 {4,1,0}   widths {3,1,2}
//   width_off = {0,5,8}, values (slot (s,c,t) at width_off[s]·h + c·h + t) =
//     {3,2, 2,6, 0,5, 0,4, 0,1,  1,8, 9,3, 7,0}
// Traffic (spmv): storage_bytes (streams + widths + offsets + values + row map) + x + y.
// From a CSR in device memory (Matrix::build of a DeviceCsr) the arrays are encoded on the GPU,
// the same bytes as build + upload (bro_ell_device_build.cu); bro-ell-bar (bar=1) downloads the
// CSR and runs build on the host instead. Value updates are refused (UnsupportedError).
#pragma once
#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "spmat/core/csr.hpp"
#include "spmat/core/options.hpp"
#include "spmat/formats/bro_common/bro_common.hpp"
#include "spmat/formats/bro_common/bro_symbols.hpp"
#include "spmat/formats/ell/row_limits.hpp"
#include "spmat/formats/format_common.hpp"
#include "spmat/matrix_impl.hpp"
#include "spmat/model/traffic.hpp"
#include "spmat/format_options.hpp"

namespace spmat {

template <class Value, class Index>
struct BroEll : MatrixDims<Value, Index> {
  std::int64_t nnz = 0;         ///< stored entries (explicit zeros included, padding not)
  std::int64_t max_row = 0;     ///< k: longest stored row (for η against ELLPACK)
  int h = 32;                   ///< slice height (rows per slice; paper: 256)
  int sym_len = 32;             ///< symbol length in bits: 32 or 64
  /// First-column coding: false = the paper's (first delta = column + 1); true = relative to
  /// the slice's smallest first column (first delta = column − col_base[s] + 1, beyond the
  /// paper). The decoder is the same: the accumulator starts at col_base[s] − 1.
  bool first_slice = true;
  /// CUDA spmv kernel (run-time choice, not part of the code): 2 = fit (default; every row's
  /// stream in one 64-bit word, shift-only decode, see bro_ell_fit_eligible — matrices that do
  /// not fit run the batched kernel), 1 = batched (decode U fields, then U value/x loads at
  /// once; widths by warp shuffle), 0 = classic (spec §3.5 loop).
  int kernel = 2;
  int unroll = 8;               ///< U of the batched kernel: 4 or 8
  /// Largest row stream the fit kernel takes, in 64-bit words: 2 (default, option fit_bits=128:
  /// rows of up to 128 bits, e.g. G3_circuit and 7-point 3-D stencils) or 1 (fit_bits=64: one
  /// 64-bit word per row). See bro_ell_fit_words.
  int fit_max_words = 2;
  std::vector<std::int64_t> width_off{0};  ///< slices+1: widths of slice s at [width_off[s], +l_s)
  std::vector<std::int64_t> sym_off{0};    ///< slices+1: symbols of slice s start here
  std::vector<std::uint8_t> widths;        ///< Σ l_s bit widths (1..32)
  std::vector<std::uint32_t> sym32;        ///< symbols when sym_len == 32 (else empty)
  std::vector<std::uint64_t> sym64;        ///< symbols when sym_len == 64 (else empty)
  std::vector<Value> values;               ///< width_off.back()·h slots (padding = 0)
  std::vector<Index> row_id;               ///< rows: original row of stored row p; empty = identity
  std::vector<Index> col_base;             ///< slices when first_slice (else empty = all 0)

  /// Options: BroEllOptions (h, sym_len, first, kernel, unroll, fit_bits, max_fill, max_skew,
  /// bar, bar_algo, bar_window). Throws UnsupportedError when the sliced padding exceeds
  /// max_fill·(nnz + rows) slots or the longest row exceeds max_skew times the mean and 64
  /// entries (row_limits.hpp; one thread walks each row).
  static BroEll build(const Csr<Value, Index>& a, const FormatOptions& o);
  /// The encoder behind build and BRO-HYB: stored row p is original row order[p] (identity when
  /// order is empty) cut to its first max_len entries (-1 = whole rows); first_slice picks the
  /// first-column coding (false = the paper's).
  static BroEll encode(const Csr<Value, Index>& a, int h, int sym_len,
                       const std::vector<std::int64_t>& order, std::int64_t max_len,
                       bool first_slice = false);

  std::int64_t slices() const { return static_cast<std::int64_t>(width_off.size()) - 1; }
  std::int64_t original_row(std::int64_t p) const { return row_id.empty() ? p : row_id[p]; }
  /// The decoder's starting column of slice s: col_base[s] − 1 (−1 with the paper's coding).
  std::int64_t start_col(std::int64_t s) const {
    return (col_base.empty() ? 0 : static_cast<std::int64_t>(col_base[s])) - 1;
  }
  Csr<Value, Index> to_csr() const;
  std::size_t storage_bytes() const;
  Shape shape() const { return {this->rows, this->cols, nnz}; }
  /// η of the column indices vs ELLPACK (rows·k·I) and vs nnz·I.
  bro::IndexSavings index_savings() const;
};

/// bro_ell_fit_words (below) from the statistics it reads: the most positions of a slice (l_s)
/// and the most symbols of a slice (sym_off[s+1] − sym_off[s], all h rows). The device builder
/// computes them on the GPU and decides by the same rule.
inline int bro_ell_fit_words_of(int sym_len, int h, std::int64_t max_positions,
                                std::int64_t max_slice_symbols) {
  if (sym_len != 32 && sym_len != 64) return 0;
  if (max_positions > 32) return 0;
  const std::int64_t bits = (max_slice_symbols + h - 1) / h * sym_len;  // per row
  return bits <= 64 ? 1 : (bits <= 128 ? 2 : 0);
}

/// 64-bit words the exact-fit CUDA kernel (kernel=fit) needs to hold every row's stream of e:
/// 1 when every slice has at most 32 positions and every row at most 64 bits (sym_len 32: ≤ 2
/// symbols per row; 64: ≤ 1), 2 when at most 128 bits (≤ 4 / ≤ 2 symbols), 0 otherwise (more
/// positions or bits: the batched kernel runs). Examples with h = 32, first=slice:
/// gen:lap2d:2000 → 1 (30 bits per interior row); gen:lap3d:60 and G3_circuit → 2 (0.9 % and
/// 6.1 % of their slices need 3 symbols: 7-point rows next to a grid boundary, 56 + 22 bits;
/// circuit rows with far columns); random columns over a wide matrix with > 8 entries → 0.
template <class Value, class Index>
inline int bro_ell_fit_words(const BroEll<Value, Index>& e) {
  std::int64_t max_positions = 0, max_sym = 0;
  for (std::int64_t s = 0; s < e.slices(); ++s) {
    max_positions = std::max(max_positions, e.width_off[s + 1] - e.width_off[s]);
    max_sym = std::max<std::int64_t>(max_sym, e.sym_off[s + 1] - e.sym_off[s]);
  }
  return bro_ell_fit_words_of(e.sym_len, e.h, max_positions, max_sym);
}

/// The fit kernel's words per row that the CUDA storage keeps: `words` (bro_ell_fit_words), or 0
/// (the batched kernel) when the rows need more than the fit_bits option allows.
inline int bro_ell_fit_choice(int words, int fit_max_words) {
  return words > fit_max_words ? 0 : words;
}

/// True when the one-word fit kernel (one 64-bit word per row) can decode e: bro_ell_fit_words
/// is 1. Example: gen:lap2d:2000 with h = 32, first=slice (30 bits per interior row) fits; 7-point
/// 3-D stencils do not (boundary slices need 78 bits), see bro_ell_fit_words.
template <class Value, class Index>
inline bool bro_ell_fit_eligible(const BroEll<Value, Index>& e) {
  return bro_ell_fit_words(e) == 1;
}

/// Calls f(col, value) for each stored entry of stored row t of slice s, in column order, by
/// running the kernels' decode loop on the host (padding skipped, explicit zeros kept).
template <class Sym, class Value, class Index, class F>
inline void bro_ell_decode_row(const BroEll<Value, Index>& e, const Sym* syms, std::int64_t s,
                               std::int64_t t, F&& f) {
  const std::int64_t wo = e.width_off[s], len = e.width_off[s + 1] - wo;
  typename bro::ReaderFor<Sym>::type rd(syms + e.sym_off[s] + t, e.h);
  const Value* v = e.values.data() + wo * e.h + t;
  const std::uint8_t* w = e.widths.data() + wo;
  std::int64_t col = e.start_col(s);
  for (std::int64_t c = 0; c < len; ++c) {
    const std::uint32_t d = rd.next(w[c]);
    if (d) {
      col += d;
      f(col, v[c * e.h]);
    }
  }
}

/// Same, dispatching on the symbol length.
template <class Value, class Index, class F>
inline void bro_ell_for_row(const BroEll<Value, Index>& e, std::int64_t s, std::int64_t t, F&& f) {
  bro::with_symbols(e, [&](const auto* syms) { bro_ell_decode_row(e, syms, s, t, f); });
}

// CPU kernels (bro_ell_cpu.cpp), deterministic: spmv sums each row in column order; spmv_t goes
// through scatter_reduce (fixed thread partition).
SPMAT_FORMAT_FUNCTIONS(BroEll);
/// The same storage built on the GPU from a validated device CSR (bro_ell_device_build.cu; see
/// the file comment for what it computes where).
template <class Value, class Index>
std::unique_ptr<MatrixImpl<Value>> build_cuda_from_device(std::type_identity<BroEll<Value, Index>>,
                                                          const DeviceCsr<Value, Index>& a,
                                                          const FormatOptions& o);
/// spmv with a per-original-row addend: y[r] = alpha*(row sum + extra[r]) + beta*y[r]
/// (extra may be null). Used by BRO-HYB for its COO part.
template <class Value, class Index>
void bro_ell_spmv_plus(const BroEll<Value, Index>& e, const Value* x, Value* y, Value alpha,
                       Value beta, const Value* extra);
/// acc[col] += v·x[orig row] for the rows of slice s (one work item of spmv_t).
template <class Value, class Index>
void bro_ell_scatter_t(const BroEll<Value, Index>& e, std::int64_t s, const Value* x, Value* acc);

/// Slots of the sliced ELL that encode() builds, for the padding limit before anything is
/// allocated: Σ over slices of the slice's rows × its longest stored row (rows in `order`, cut
/// to max_len unless it is -1). The lanes of the last slice past the last row are not counted
/// (as ELL's pitch: a 3-row matrix is not charged for 29 empty lanes). Example: rows of lengths
/// {2,5,3,2,4}, h = 2 → 2·5 + 2·3 + 1·4 = 20 slots (max_len 3: 2·3 + 2·3 + 1·3 = 15).
template <class Value, class Index>
std::int64_t bro_ell_slots(const Csr<Value, Index>& a, int h, const std::vector<std::int64_t>& order,
                           std::int64_t max_len);

/// Sets the CUDA spmv choice of e: kernel (fit / batched / classic), unroll (U of batched, 4 or
/// 8) and fit_bits (64 or 128), as read by a field table (bro_common.hpp).
template <class Value, class Index>
void bro_apply_kernel_options(BroEll<Value, Index>& e, const std::string& kernel, int unroll,
                              int fit_bits);

}  // namespace spmat
