// spmat/formats/sell/sell.hpp — SELL-C-σ (Kreutzer et al., SIAM J. Sci. Comput. 2014) and its kernels.
// SPDX-License-Identifier: MIT
//
// Registry name: sell. Options: C (rows per chunk, default 32 = one warp), sigma (sorting
// window, default auto = 256 rounded up to a multiple of C; 1 = no sorting, otherwise a multiple
// of C),
// max_skew and max_fill (row_limits.hpp, default 8 each: one thread walks each row, so build
// refuses a longest row over 8 times the mean and 64 entries, and slots over 8·(nnz + rows)).
// Build: within each window of sigma consecutive rows, rows are stably sorted by decreasing
// length (ties keep their order); perm[p] = the original row stored at position p. Positions
// are cut into chunks of C; chunk c is padded to its longest row chunk_len[c] and stored
// column-major: slot j of position p sits at chunk_ptr[c] + j*C + (p mod C), c = p / C. The last
// chunk is stored with all C lanes. Padding slots hold column -1 (kEllPadding) and value 0.
// Kernels write y in the ORIGINAL row order (y[perm[p]]): the permutation is internal.
//
// Example (4×4)  [[1,0,2,0],[0,0,0,0],[3,4,0,5],[0,0,0,6]],  C = 2, sigma = 4:
//   lengths {2,0,3,1} → perm = {2, 0, 3, 1};  chunk_len = {3, 1};  chunk_ptr = {0, 6, 8}
//   col_idx = { 0, 0,  1, 2,  3,-1,   3,-1 }    values = { 3, 1,  4, 2,  5, 0,   6, 0 }
// Traffic (spmv): slots·(I+V) + rows·I (perm) + chunks·(8+I) + cols·V + rows·V.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <type_traits>
#include <vector>

#include "spmat/formats/ell/ell.hpp"
#include "spmat/formats/ell/row_limits.hpp"
#include "spmat/formats/format_common.hpp"
#include "spmat/model/traffic.hpp"
#include "spmat/format_options.hpp"

namespace spmat {

template <class Value, class Index>
struct Sell : MatrixDims<Value, Index> {
  Index nnz = 0;
  std::int64_t chunk = 32;   ///< C
  std::int64_t sigma = 256;  ///< σ
  std::vector<Index> perm;                ///< rows: original row of position p
  std::vector<std::int64_t> chunk_ptr{0};  ///< chunks+1: first slot of each chunk
  std::vector<Index> chunk_len;           ///< chunks: slots per row in the chunk
  std::vector<Index> col_idx;             ///< chunk_ptr.back() slots, kEllPadding in padding
  std::vector<Value> values;              ///< chunk_ptr.back() slots, 0 in padding

  std::int64_t chunks() const { return static_cast<std::int64_t>(chunk_len.size()); }
  /// Options: C, sigma, max_skew, max_fill (see the file comment). ParseError on invalid
  /// values, UnsupportedError beyond the limits.
  static Sell build(const Csr<Value, Index>& a, const FormatOptions& o);
  Csr<Value, Index> to_csr() const;
  std::size_t storage_bytes() const {
    return perm.size() * sizeof(Index) + chunk_ptr.size() * sizeof(std::int64_t) +
           chunk_len.size() * sizeof(Index) + col_idx.size() * sizeof(Index) +
           values.size() * sizeof(Value);
  }
  Shape shape() const { return {this->rows, this->cols, nnz}; }
};

// CPU kernels (sell_cpu.cpp). Deterministic: each row summed in slot order; spmv_t uses
// scatter_reduce over chunks.
SPMAT_FORMAT_FUNCTIONS(Sell);

/// update_values: new values in CSR order (into the slots of each row, wherever its chunk and
/// permutation put it; sell_values.cpp).
/// build_cuda_from_device: the same arrays built on the GPU from a validated device CSR
/// (sell_device_build.cu).
SPMAT_DECLARE_VALUE_UPDATE_AND_DEVICE_BUILD(Sell);

}  // namespace spmat
