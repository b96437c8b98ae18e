// spmat/formats/bro_csr/bro_csr.hpp — BRO-CSR: CSR (row_ptr over raw values) whose column
// indices are delta-coded and bit-packed per warp-sized group of rows, decoded by a sub-warp
// per row (beyond the paper). Family page: docs/formats/bro.md.
// SPDX-License-Identifier: MIT
//
// Layout. W = `tpr` lanes per row (1, 2, 4, ..., 32), G = 32/W rows per group, one warp per
// group: lane t of group g owns row r = g·G + t/W and, with i = t mod W, the entries
// e_j = row_ptr[r] + i + j·W (j = 0, 1, ...), exactly the entries csr's sub-warp kernel gives
// it, so the values (raw, CSR order) load coalesced. Lane t's column fields:
//   f_0 = c(e_0) − base[g] − i                  (base[g] = smallest first column of the group;
//                                                 c(e_0) ≥ c(row start) + i ≥ base + i)
//   f_j = c(e_j) − c(e_{j−1}) − W   (j ≥ 1)     (W entries apart in a strictly increasing row)
// so contiguous runs cost 0 bits. Fields past a lane's last entry are 0. Step j of group g has
// one width b_j = max over the 32 lanes of Γ(f_j) (0..32; 0 = no bits), stored as uint8 at
// widths[width_off[g] + j], j < steps_g = max over the group's rows of ⌈len/W⌉. Each lane's
// stream (the fields MSB first) is padded to S_g = ⌈Σ_j b_j / sym_len⌉ symbols; symbol q of
// lane t sits at sym_off[g] + 32·q + t (multiplexed: a warp loads 32 consecutive words).
// Decode: col = base + i − W; per step col += next(b_j) + W — the refill branch depends only on
// the widths, so it is warp-uniform; lanes past their row's end decode zeros and skip the FMA.
//
// Example: the paper's 4×5 matrix [[3,0,2,0,0],[2,6,5,4,1],[0,1,9,0,7],[0,0,0,8,3]] with W = 2
// (one group, lanes 8..31 empty), base = 0:
//   lane fields: t0 {0} t1 {1} t2 {0,0,0} t3 {0,0} t4 {1,1} t5 {1} t6 {3} t7 {3}
//   widths {2,1,0} (3 bits, S = 1): sym32 = {0, 0x40000000, 0, 0, 0x60000000, 0x40000000,
//   0xC0000000, 0xC0000000, 0 × 24};  row_ptr {0,2,7,10,12}, values as CSR.
// With W = 1: widths {2,1,1,0,0}, sym32 = {0x20000000, 0, 0x50000000, 0xC0000000, 0 × 28}.
// A row much longer than its group's others pads every lane of the group to its step count
// (the cost is bits, not loads: the kernel still walks those steps). Traffic (spmv):
// storage_bytes + x + y.
#pragma once
#include <cstdint>
#include <memory>
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
struct BroCsr : MatrixDims<Value, Index> {
  int tpr = 4;                             ///< W: lanes per row (power of two, 1..32)
  int sym_len = 32;                        ///< 32 or 64
  std::vector<Index> row_ptr{0};           ///< rows+1
  std::vector<Value> values;               ///< nnz, CSR order
  std::vector<Index> base;                 ///< groups: smallest first column of the group's rows
  std::vector<std::int64_t> width_off{0};  ///< groups+1
  std::vector<std::uint8_t> widths;        ///< Σ steps_g, 0..32
  std::vector<std::int64_t> sym_off{0};    ///< groups+1 (in symbols, 32 lanes per symbol row)
  std::vector<std::uint32_t> sym32;        ///< symbols when sym_len == 32
  std::vector<std::uint64_t> sym64;        ///< symbols when sym_len == 64

  /// Options: tpr (0 = auto: largest power of two <= mean row length, in 1..32), sym_len,
  /// max_skew (row_limits.hpp: UnsupportedError when the longest row is over max_skew times
  /// the mean and takes more than 64 steps of its tpr lanes).
  static BroCsr build(const Csr<Value, Index>& a, const FormatOptions& o);
  /// The encoder: W lanes per row (1..32, power of two), sym_len 32 or 64.
  static BroCsr encode(const Csr<Value, Index>& a, int tpr, int sym_len);

  int rows_per_group() const { return 32 / tpr; }
  std::int64_t groups() const { return static_cast<std::int64_t>(base.size()); }
  std::int64_t nnz() const { return static_cast<std::int64_t>(values.size()); }
  Csr<Value, Index> to_csr() const;
  std::size_t storage_bytes() const;
  Shape shape() const { return {this->rows, this->cols, nnz()}; }
  /// η of the column indices vs CSR's col_idx (nnz·I); row_ptr is kept raw and not counted.
  bro::IndexSavings index_savings() const;
};

/// Decodes the columns of group g into cols_out[e − row_ptr[g·G]] (cols_out holds the group's
/// entries) with the kernels' reader, lane by lane.
template <class Sym, class Value, class Index>
inline void bro_csr_decode_group(const BroCsr<Value, Index>& m, const Sym* syms, std::int64_t g,
                                 std::int64_t* cols_out) {
  const int w = m.tpr, rpg = m.rows_per_group();
  const std::int64_t r0 = g * rpg, first = m.row_ptr[r0];
  const std::int64_t wo = m.width_off[g], steps = m.width_off[g + 1] - wo;
  for (int t = 0; t < 32; ++t) {
    const std::int64_t r = r0 + t / w, i = t % w;
    if (r >= m.rows) break;
    const std::int64_t end = m.row_ptr[r + 1];
    typename bro::ReaderFor<Sym>::type rd(syms + m.sym_off[g] + t, 32);
    std::int64_t col = static_cast<std::int64_t>(m.base[g]) + i - w;
    std::int64_t e = m.row_ptr[r] + i;
    for (std::int64_t j = 0; j < steps; ++j, e += w) {
      col += static_cast<std::int64_t>(rd.next(m.widths[wo + j])) + w;
      if (e < end) cols_out[e - first] = col;
    }
  }
}

template <class Value, class Index>
inline void bro_csr_decode(const BroCsr<Value, Index>& m, std::int64_t g, std::int64_t* cols_out) {
  bro::with_symbols(m, [&](const auto* syms) { bro_csr_decode_group(m, syms, g, cols_out); });
}

// CPU kernels (bro_csr_cpu.cpp), deterministic: spmv decodes a group's columns and sums each
// row in CSR order; spmv_t goes through scatter_reduce over groups.
SPMAT_FORMAT_FUNCTIONS(BroCsr);

}  // namespace spmat
