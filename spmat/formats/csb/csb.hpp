// spmat/formats/csb/csb.hpp — CSB-baseline: β×β blocks in row-major order, Morton order inside a block.
// SPDX-License-Identifier: MIT
//
// CSB-baseline is the GPU port of Buluç's Compressed Sparse Blocks defined in Izawa's GCSB thesis
// (JAIST 2023, §3.2). One storage serves y = A·x and y = Aᵀ·x: the
// kernels swap the roles of the in-block row and column.
//
// Arrays (m×n, β = 2^d, n_block_rows = ⌈m/β⌉, n_block_cols = ⌈n/β⌉, n_blocks = their product):
//   values      (nnz)          the entries, block by block (row-major block order),
//                              Morton (Z) order inside a block (row bit above column bit)
//   comb        (nnz, int32)   (row_in_block << d) | col_in_block  ("comb_row_col_indices")
//   block_offset(n_stored + 1) start of each stored block in values/comb (Index)
// Two block grids (option empty=):
//   full grid (empty=keep, the thesis): every block is stored, empty ones included, so
//     n_stored = n_blocks and block id = br·n_block_cols + bc is the position; block_row_ptr and
//     block_col are empty.
//   sparse grid (empty=drop): only non-empty blocks are stored, row-major order (CSR over blocks):
//     block_row_ptr (n_block_rows + 1)  range of block row br's stored blocks
//     block_col     (n_stored)          block column of each stored block
//   empty=auto (default) takes the smaller of the two (the full grid when it does not fit Index).
//   Real sparse matrices have almost only empty blocks (lap2d 4M×4M, β = 16: 6.25·10^10 blocks,
//   7.5·10^5 non-empty), so the full grid is only for small or dense-block matrices.
// 6×6 example of the spec (β = 2, letters a..l = 1..12; full grid, the default here):
//   a b . . c d      values       = a b e | f | c d g | h i | j | k | l
//   e . f . g .      comb         = 00 01 10 | 10 | 00 01 10 | 01 11 | 11 | 11 | 11  (binary)
//   . h . . . .      block_offset = 0 3 4 7 9 10 10 11 11 12
//   . i . j . .      sparse grid: block_row_ptr = 0 3 5 7, block_col = 0 1 2 0 1 0 2,
//   . . . . . .                   block_offset = 0 3 4 7 9 10 11 12
//   . k . . . l
// Memory: full grid nnz·(V + 4) + (n_blocks + 1)·I (thesis Eq. 3.1; comb is int32 for every
// Index type); sparse grid nnz·(V + 4) + (n_block_rows + 1 + 2·n_stored + 1)·I.
// Canonical form: built from canonical CSR, so no duplicates; explicit zeros are stored entries.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "spmat/core/csr.hpp"
#include "spmat/core/options.hpp"
#include "spmat/core/typed_options.hpp"
#include "spmat/formats/format_common.hpp"
#include "spmat/matrix_impl.hpp"
#include "spmat/model/traffic.hpp"
#include "spmat/format_options.hpp"

namespace spmat {

/// Block parameters shared by csb and gcsb (thesis Eq. 3.3/3.4).
struct BlockParams {
  int beta_log2 = 5;   ///< β = 2^beta_log2
  int group_size = 32;  ///< gcsb only
  int beta() const { return 1 << beta_log2; }
};

/// Defaults from the L1 line: β = largest power of two ≤ l1_line_bytes / sizeof(Value) (Eq. 3.3,
/// the thesis picks the bound itself: 128 B / 4 B = 32), group_size = l1_line_bytes /
/// sizeof(Value) (Eq. 3.4). fp32: β = 32, group_size = 32; fp64: β = 16, group_size = 16.
/// beta and group_size empty ("auto"): these defaults. Throws ParseError when l1_line_bytes is
/// below the value size.
BlockParams block_params(std::optional<std::int64_t> beta, std::optional<std::int64_t> group_size,
                         std::int64_t l1_line_bytes, std::size_t value_size);

/// The same from an options struct with members beta, l1_line_bytes and (gcsb) group_size.
template <class Opts>
BlockParams block_params(const Opts& o, std::size_t value_size) {
  std::optional<std::int64_t> group_size;
  if constexpr (requires { o.group_size; }) group_size = o.group_size;
  return block_params(o.beta, group_size, o.l1_line_bytes, value_size);
}

namespace csb_detail {
/// comb of a zero-padding slot (gcsb): bit 30 set, decodes (with the masks below) to (0, 0),
/// which is inside every block, so kernels that do not test for it stay in bounds.
/// Real entries use only the low 2·d ≤ 30 bits, so padding and stored zeros are told apart.
inline constexpr std::int32_t kPad = std::int32_t{1} << 30;
inline constexpr int kMaxBetaLog2 = 15;

inline std::int32_t pack(std::int32_t r, std::int32_t c, int d) { return (r << d) | c; }
/// Morton key of in-block (r, c): bits interleaved, the row bit above the column bit.
inline std::uint32_t morton_key(std::uint32_t r, std::uint32_t c, int d) {
  std::uint32_t k = 0;
  for (int b = 0; b < d; ++b) k |= (((r >> b) & 1u) << (2 * b + 1)) | (((c >> b) & 1u) << (2 * b));
  return k;
}
/// The non-empty blocks in row-major order (a sparse block grid), entries in Morton order inside
/// each block. Shared by the csb and gcsb builds; never materialises the n_blocks grid.
template <class Value, class Index>
struct Blocked {
  std::int64_t n_block_rows = 0, n_block_cols = 0;
  std::vector<std::int64_t> block_row_ptr;  // n_block_rows + 1, ranges of stored blocks
  std::vector<std::int64_t> block_col;      // n_stored
  std::vector<std::int64_t> block_offset;   // n_stored + 1
  std::vector<Value> values;                // nnz
  std::vector<std::int32_t> comb;           // nnz
  std::int64_t n_stored() const { return static_cast<std::int64_t>(block_col.size()); }
};
template <class Value, class Index>
Blocked<Value, Index> block_csr(const Csr<Value, Index>& a, int beta_log2);
/// n_block_rows·n_block_cols, or −1 when the product overflows int64.
std::int64_t grid_blocks(std::int64_t n_block_rows, std::int64_t n_block_cols);
/// Throws OutOfMemoryError / IndexOverflowError when a full grid of n_blocks cannot be stored.
void check_block_count(std::int64_t n_blocks, std::int64_t index_limit, std::size_t index_size,
                       const char* format, int beta);
}  // namespace csb_detail

/// Option fields shared by csb and gcsb (spmat/core/typed_options.hpp), on the members beta,
/// l1_line_bytes, empty and, `with_group_size`, group_size of `Opts`; `empty_help` says what
/// empty does in that format.
template <class Opts>
OptionTable<Opts> block_fields(bool with_group_size, std::string empty_help) {
  OptionTable<Opts> t{int_choice_option("beta", &Opts::beta,
                                        {1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096,
                                         8192, 16384, 32768},
                                        "block size, a power of two (thesis Eq. 3.3; auto: L1 line / "
                                        "sizeof(value), fp32 32, fp64 16)")};
  if constexpr (requires { &Opts::group_size; })
    if (with_group_size)
      t.push_back(int_option("group_size", &Opts::group_size, 1, 1024,
                             "blocks per group, 1..1024 (thesis Eq. 3.4; auto: L1 line / "
                             "sizeof(value), fp32 32, fp64 16)"));
  t.push_back(int_option("l1_line_bytes", &Opts::l1_line_bytes, 1, 1 << 20,
                         "L1 line size the defaults derive from (at least the value size)"));
  t.push_back(enum_option("empty", &Opts::empty,
                          {{"keep", csb_detail::EmptyBlocks::keep},
                           {"drop", csb_detail::EmptyBlocks::drop},
                           {"auto", csb_detail::EmptyBlocks::automatic}},
                          std::move(empty_help)));
  return t;
}

template <class Value, class Index>
struct Csb : MatrixDims<Value, Index> {
  int beta_log2 = 5;
  Index n_block_rows = 0, n_block_cols = 0;
  bool sparse_grid = false;          // true: only non-empty blocks (block_row_ptr, block_col)
  std::vector<Value> values;         // nnz
  std::vector<std::int32_t> comb;    // nnz
  std::vector<Index> block_offset;   // n_stored + 1
  std::vector<Index> block_row_ptr;  // sparse grid: n_block_rows + 1; full grid: empty
  std::vector<Index> block_col;      // sparse grid: n_stored; full grid: empty

  /// Options: CsbOptions (beta, l1_line_bytes: block_params; empty=keep|drop|auto).
  static Csb build(const Csr<Value, Index>& a, const FormatOptions& o);
  Csr<Value, Index> to_csr() const;
  std::size_t storage_bytes() const {
    return values.size() * sizeof(Value) + comb.size() * sizeof(std::int32_t) +
           (block_offset.size() + block_row_ptr.size() + block_col.size()) * sizeof(Index);
  }
  Shape shape() const {
    return {this->rows, this->cols, static_cast<std::int64_t>(values.size())};
  }
  int beta() const { return 1 << beta_log2; }
  /// Blocks of the full grid (stored or not).
  std::int64_t n_blocks() const { return std::int64_t{n_block_rows} * n_block_cols; }
  std::int64_t n_stored() const { return static_cast<std::int64_t>(block_offset.size()) - 1; }
  /// Stored blocks of block row br: [first, last); block column of stored block j.
  std::int64_t row_begin(std::int64_t br) const {
    return sparse_grid ? std::int64_t{block_row_ptr[br]} : br * n_block_cols;
  }
  std::int64_t row_end(std::int64_t br) const { return row_begin(br + 1); }
  std::int64_t col_of(std::int64_t j) const {
    return sparse_grid ? std::int64_t{block_col[j]} : j % n_block_cols;
  }
};

// traffic_bytes (SPMAT_FORMAT_FUNCTIONS): storage read once + x + y (the thesis kernels read
// every array exactly once).
// CPU kernels (csb_cpu.cpp). Contract: x has cols (spmv) / rows (spmv_t) entries, y the other;
// caller allocates; beta == 0 never reads y. spmv: one thread owns a block row (β rows of y),
// walks its blocks left to right in storage order (deterministic for any thread count). spmv_t:
// full grid: one thread owns a block column (deterministic for any thread count); sparse grid:
// block rows scatter with scatter_reduce (deterministic for a fixed thread count, threads×cols
// work memory). Work 2·nnz flops.
SPMAT_FORMAT_FUNCTIONS(Csb);

}  // namespace spmat
