// spmat/formats/coo/coo.hpp — COO (coordinate) as a registered format: sorted triplets + a GPU kernel choice.
// SPDX-License-Identifier: MIT
//
// Registry names (one storage, two GPU kernels for spmv):
//   coo       CPU: row-partitioned loop over the sorted entries.  CUDA: one thread per nonzero,
//             atomicAdd into y (not deterministic).
//   coo-seg   CUDA: each warp reduces a contiguous interval of nonzeros with a warp segmented
//             scan over row_idx; rows cut by interval boundaries are finished by a second
//             fix-up pass over the per-warp carries (deterministic, no atomics).
// Canonical form: the entries of the canonical CSR in row-major order (row_idx non-decreasing,
// col_idx strictly increasing within a row, no duplicates, explicit zeros kept).
// Layout of the 4×4 example [[1,0,2,0],[0,0,0,0],[3,4,0,5],[0,0,0,6]]:
//   row_idx = {0,0,2,2,2,3}, col_idx = {0,2,0,1,3,3}, values = {1,2,3,4,5,6}.
// Storage: nnz·(2·I + V) bytes.  Traffic (spmv): nnz·(2·I+V) + cols·V (x) + rows·V (y).
#pragma once
#include <algorithm>
#include <memory>
#include <type_traits>

#include "spmat/core/csr.hpp"
#include "spmat/core/device_csr.hpp"
#include "spmat/core/options.hpp"
#include "spmat/core/typed_options.hpp"
#include "spmat/formats/format_common.hpp"
#include "spmat/matrix_impl.hpp"
#include "spmat/model/traffic.hpp"
#include "spmat/format_options.hpp"

namespace spmat {

template <class Value, class Index>
struct CooStorage {
  Coo<Value, Index> a;  ///< sorted row-major, as to_coo(canonical CSR) returns it
  CooKernel kernel = CooKernel::atomic;

  /// Options: kernel = atomic | segmented (default atomic).
  static CooStorage build(const Csr<Value, Index>& a, const FormatOptions& o);
  /// The entries are in canonical order: only row_ptr is rebuilt (O(nnz + rows)).
  Csr<Value, Index> to_csr() const { return detail::sorted_coo_to_csr(a); }
  std::size_t storage_bytes() const { return spmat::storage_bytes(a); }
  Shape shape() const { return {a.rows, a.cols, a.nnz()}; }
};

// CPU kernels (coo_cpu.cpp), both deterministic.
//   spmv:   the nonzero range is cut at row boundaries into one piece per thread (balanced on
//           rows + nnz, merge-path style), so every row is summed by one thread in storage
//           order: the result does not even depend on the thread count.
//   spmv_t: scatter_reduce over the nonzeros (fixed thread partition).
SPMAT_FORMAT_FUNCTIONS(CooStorage);

/// update_values: new values in CSR order; the stored order is CSR order, so a copy (below).
/// build_cuda_from_device: the same arrays built on the GPU from a validated device CSR
/// (coo_device_build.cu).
SPMAT_DECLARE_VALUE_UPDATE_AND_DEVICE_BUILD(CooStorage);

template <class Value, class Index>
void update_values(CooStorage<Value, Index>& s, const Value* values) {
  std::copy_n(values, s.a.values.size(), s.a.values.begin());
}

}  // namespace spmat
