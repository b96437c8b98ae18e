// spmat/formats/bcoo/bcoo.hpp — BCOO: balanced COO for multicore CPUs (spec bccoo.md §3): row-sorted
// triplets cut into chunks of b consecutive nonzeros regardless of rows.
// SPDX-License-Identifier: MIT
//
// Registry name: bcoo (CPU only). Option: chunk (b, nonzeros per chunk, default 1024 [P]).
// Canonical form: the entries of the canonical CSR in row-major order (no duplicates, explicit
// zeros kept). Chunk h holds entries [h·b, min((h+1)·b, nnz)); its first row is row_idx[h·b].
// Layout of the 4×4 example [[1,0,2,0],[0,0,0,0],[3,4,0,5],[0,0,0,6]] with b = 4:
//   row_idx = {0,0,2,2, 2,3}, col_idx = {0,2,0,1, 3,3}, values = {1,2,3,4, 5,6};
//   chunk 0 = entries 0..3 (rows 0, 2), chunk 1 = entries 4..5 (rows 2, 3): row 2 is cut.
// Storage: nnz·(2·I + V) bytes (chunk starts are implicit). Traffic (spmv): storage + x + y.
#pragma once
#include <algorithm>
#include <cstdint>
#include <limits>

#include "spmat/core/csr.hpp"
#include "spmat/core/options.hpp"
#include "spmat/core/typed_options.hpp"
#include "spmat/formats/format_common.hpp"
#include "spmat/matrix_impl.hpp"
#include "spmat/model/traffic.hpp"
#include "spmat/format_options.hpp"

namespace spmat {

template <class Value, class Index>
struct Bcoo {
  Coo<Value, Index> a;        ///< row-major sorted triplets (spmat::to_coo of the CSR)
  std::int64_t chunk = 1024;  ///< b: nonzeros per chunk

  /// Options: chunk = b >= 1 (default 1024, the paper's value).
  static Bcoo build(const Csr<Value, Index>& a, const FormatOptions& o);
  /// The entries are in canonical order: only row_ptr is rebuilt (O(nnz + rows)).
  Csr<Value, Index> to_csr() const { return detail::sorted_coo_to_csr(a); }
  std::size_t storage_bytes() const { return spmat::storage_bytes(a); }
  Shape shape() const { return {a.rows, a.cols, a.nnz()}; }
  std::int64_t chunks() const { return (static_cast<std::int64_t>(a.values.size()) + chunk - 1) / chunk; }

  /// Calls f(row, col, value) for the entries of chunk h in order.
  template <class F>
  void visit(std::int64_t h, F&& f) const {
    const std::int64_t end = std::min<std::int64_t>(static_cast<std::int64_t>(a.values.size()), (h + 1) * chunk);
    for (std::int64_t k = h * chunk; k < end; ++k) f(a.row_idx[k], a.col_idx[k], a.values[k]);
  }
};

/// Option `chunk` (b >= 1 nonzeros per chunk, default: the member's, 1024) of bcoo, bccoo and
/// bccoo-gpu.
template <class Opts>
OptionField<Opts> chunk_option(std::int64_t Opts::*member) {
  return int_option("chunk", member, 1, std::numeric_limits<std::int64_t>::max(),
                    "nonzeros per chunk (b)");
}

template <class Value, class Index>
std::size_t traffic_bytes(const Bcoo<Value, Index>& s, Op op, std::int64_t k) {
  return default_traffic(s.storage_bytes(), op, s.shape(), k, sizeof(Value));
}

// CPU kernels (bcoo_cpu.cpp), both deterministic (chunk_driver.hpp):
//   spmv: static schedule over chunks; interior rows written directly; first/last row partials
//         of each chunk combined in chunk order (no atomics). Independent of the thread count.
//   spmv_t: scatter_reduce over chunks.
SPMAT_DECLARE_CPU_KERNELS(Bcoo);

}  // namespace spmat
