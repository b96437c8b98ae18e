// spmat/formats/csc/csc.hpp — CSC (compressed sparse column) as a registered format.
// SPDX-License-Identifier: MIT
//
// Registry name: csc. The column-major mirror of CSR: its natural product is the transpose.
//   spmv_t   CPU: per-column gather (deterministic).  CUDA: `lanes` threads per column gather
//            with a warp sum (deterministic).
//   spmv     CPU: scatter_reduce over columns (deterministic).  CUDA: one thread per column
//            scattering with atomicAdd (not deterministic).
// Canonical form: spmat::to_csc of the canonical CSR (row indices strictly increasing within a
// column, no duplicates, explicit zeros kept).
// Layout of the 4×4 example [[1,0,2,0],[0,0,0,0],[3,4,0,5],[0,0,0,6]]:
//   col_ptr = {0,2,3,4,6}, row_idx = {0,2,2,0,2,3}, values = {1,3,4,2,5,6}.
// Storage: (cols+1)·I + nnz·(I+V) bytes.  Traffic (spmv or spmv_t): storage + cols·V + rows·V.
#pragma once
#include <memory>
#include <type_traits>

#include "spmat/core/csr.hpp"
#include "spmat/core/device_csr.hpp"
#include "spmat/core/options.hpp"
#include "spmat/formats/format_common.hpp"
#include "spmat/matrix_impl.hpp"
#include "spmat/model/traffic.hpp"

namespace spmat {

template <class Value, class Index>
struct CscStorage {
  Csc<Value, Index> a;

  /// No options.
  static CscStorage build(const Csr<Value, Index>& a, const FormatOptions& o);
  Csr<Value, Index> to_csr() const { return spmat::to_csr(a); }
  std::size_t storage_bytes() const { return spmat::storage_bytes(a); }
  Shape shape() const { return {a.rows, a.cols, a.nnz()}; }
};

// CPU kernels (csc_cpu.cpp), both deterministic.
SPMAT_FORMAT_FUNCTIONS(CscStorage);

/// update_values: new values in CSR order (scattered to their column-major places; csc_values.cpp).
/// build_cuda_from_device: the same arrays built on the GPU from a validated device CSR
/// (csc_device_build.cu).
SPMAT_DECLARE_VALUE_UPDATE_AND_DEVICE_BUILD(CscStorage);

}  // namespace spmat
