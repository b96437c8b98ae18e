// spmat/formats/bro_ell/bro_ell.hpp — BRO-ELL: sliced ELLPACK with delta-coded, bit-packed
// column indices (Tang et al., SC'13; spec bro.md §3 with every §9 fix). Family page: bro.md.
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
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include "spmat/core/csr.hpp"
#include "spmat/core/options.hpp"
#include "spmat/formats/bro_common/bro_common.hpp"
#include "spmat/matrix_impl.hpp"

namespace spmat {

template <class Value, class Index>
struct BroEll {
  using value_type = Value;
  using index_type = Index;
  Index rows = 0;
  Index cols = 0;
  std::int64_t nnz = 0;         ///< stored entries (explicit zeros included, padding not)
  std::int64_t max_row = 0;     ///< k: longest stored row (for η against ELLPACK)
  int h = 256;                  ///< slice height (rows per slice)
  int sym_len = 32;             ///< symbol length in bits: 32 or 64
  std::vector<std::int64_t> width_off{0};  ///< slices+1: widths of slice s at [width_off[s], +l_s)
  std::vector<std::int64_t> sym_off{0};    ///< slices+1: symbols of slice s start here
  std::vector<std::uint8_t> widths;        ///< Σ l_s bit widths (1..32)
  std::vector<std::uint32_t> sym32;        ///< symbols when sym_len == 32 (else empty)
  std::vector<std::uint64_t> sym64;        ///< symbols when sym_len == 64 (else empty)
  std::vector<Value> values;               ///< width_off.back()·h slots (padding = 0)
  std::vector<Index> row_id;               ///< rows: original row of stored row p; empty = identity

  /// Options: h, sym_len, max_fill, bar, bar_algo, bar_window (see bro_ell_entries()).
  /// Throws UnsupportedError when the sliced padding exceeds max_fill·nnz (and 2^20 slots).
  static BroEll build(const Csr<Value, Index>& a, const FormatOptions& o);
  /// The encoder behind build and BRO-HYB: stored row p is original row order[p] (identity when
  /// order is empty) cut to its first max_len entries (-1 = whole rows).
  static BroEll encode(const Csr<Value, Index>& a, int h, int sym_len,
                       const std::vector<std::int64_t>& order, std::int64_t max_len);

  std::int64_t slices() const { return static_cast<std::int64_t>(width_off.size()) - 1; }
  std::int64_t original_row(std::int64_t p) const { return row_id.empty() ? p : row_id[p]; }
  Csr<Value, Index> to_csr() const;
  std::size_t storage_bytes() const;
  Shape shape() const { return {rows, cols, nnz}; }
  /// η of the column indices vs ELLPACK (rows·k·I) and vs nnz·I.
  bro::IndexSavings index_savings() const;
};

/// Calls f(col, value) for each stored entry of stored row t of slice s, in column order, by
/// running the kernels' decode loop on the host (padding skipped, explicit zeros kept).
template <class Sym, class Value, class Index, class F>
inline void bro_ell_decode_row(const BroEll<Value, Index>& e, const Sym* syms, std::int64_t s,
                               std::int64_t t, F&& f) {
  const std::int64_t wo = e.width_off[s], len = e.width_off[s + 1] - wo;
  typename bro::ReaderFor<Sym>::type rd(syms + e.sym_off[s] + t, e.h);
  const Value* v = e.values.data() + wo * e.h + t;
  const std::uint8_t* w = e.widths.data() + wo;
  std::int64_t col = -1;
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
  if (e.sym_len == 32)
    bro_ell_decode_row(e, e.sym32.data(), s, t, f);
  else
    bro_ell_decode_row(e, e.sym64.data(), s, t, f);
}

template <class Value, class Index>
std::size_t traffic_bytes(const BroEll<Value, Index>& s, Op op, std::int64_t k);

// CPU kernels (bro_ell_cpu.cpp), deterministic: spmv sums each row in column order; spmv_t goes
// through scatter_reduce (fixed thread partition).
template <class Value, class Index>
void spmv(const BroEll<Value, Index>& e, const Value* x, Value* y, Value alpha, Value beta);
template <class Value, class Index>
void spmv_t(const BroEll<Value, Index>& e, const Value* x, Value* y, Value alpha, Value beta);
/// spmv with a per-original-row addend: y[r] = alpha*(row sum + extra[r]) + beta*y[r]
/// (extra may be null). Used by BRO-HYB for its COO part.
template <class Value, class Index>
void bro_ell_spmv_plus(const BroEll<Value, Index>& e, const Value* x, Value* y, Value alpha,
                       Value beta, const Value* extra);
/// acc[col] += v·x[orig row] for the rows of slice s (one work item of spmv_t).
template <class Value, class Index>
void bro_ell_scatter_t(const BroEll<Value, Index>& e, std::int64_t s, const Value* x, Value* acc);

template <class Value, class Index>
std::unique_ptr<MatrixImpl<Value>> make_cuda_impl(BroEll<Value, Index>&& host);  // _cuda.cu

/// Reads h, sym_len (validated) from options; shared by BRO-ELL and BRO-HYB.
int bro_option_h(const FormatOptions& o);
int bro_option_sym_len(const FormatOptions& o);

}  // namespace spmat
