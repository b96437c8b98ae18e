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
#include <memory>
#include <type_traits>

#include "spmat/core/csr.hpp"
#include "spmat/core/device_csr.hpp"
#include "spmat/core/options.hpp"
#include "spmat/core/typed_options.hpp"
#include "spmat/matrix_impl.hpp"
#include "spmat/model/traffic.hpp"
#include "spmat/format_options.hpp"

namespace spmat {

template <class Value, class Index>
struct CooStorage {
  using value_type = Value;
  using index_type = Index;
  Coo<Value, Index> a;  ///< sorted row-major, as to_coo(canonical CSR) returns it
  CooKernel kernel = CooKernel::atomic;

  /// Options: kernel = atomic | segmented (default atomic).
  static CooStorage build(const Csr<Value, Index>& a, const FormatOptions& o);
  Csr<Value, Index> to_csr() const;
  std::size_t storage_bytes() const {
    return a.row_idx.size() * sizeof(Index) + a.col_idx.size() * sizeof(Index) +
           a.values.size() * sizeof(Value);
  }
  Shape shape() const { return {a.rows, a.cols, a.nnz()}; }
};

template <class Value, class Index>
std::size_t traffic_bytes(const CooStorage<Value, Index>& s, Op op, std::int64_t k) {
  return default_traffic(s.storage_bytes(), op, s.shape(), k, sizeof(Value));
}

// CPU kernels (coo_cpu.cpp), both deterministic.
//   spmv:   the nonzero range is cut at row boundaries into one piece per thread (balanced on
//           rows + nnz, merge-path style), so every row is summed by one thread in storage
//           order: the result does not even depend on the thread count.
//   spmv_t: scatter_reduce over the nonzeros (fixed thread partition).
template <class Value, class Index>
void spmv(const CooStorage<Value, Index>& s, const Value* x, Value* y, Value alpha, Value beta);
template <class Value, class Index>
void spmv_t(const CooStorage<Value, Index>& s, const Value* x, Value* y, Value alpha, Value beta);

template <class Value, class Index>
std::unique_ptr<MatrixImpl<Value>> make_cuda_impl(CooStorage<Value, Index>&& host);  // coo_cuda.cu

/// New values in CSR order (the stored order is CSR order: a copy; coo_values.cpp).
template <class Value, class Index>
void update_values(CooStorage<Value, Index>& s, const Value* values);

/// The same arrays built on the GPU from a validated device CSR (coo_device_build.cu).
template <class Value, class Index>
std::unique_ptr<MatrixImpl<Value>> build_cuda_from_device(std::type_identity<CooStorage<Value, Index>>,
                                                          const DeviceCsr<Value, Index>& a,
                                                          const FormatOptions& o);

}  // namespace spmat
