// spmat/formats/csr/csr.hpp — CSR as a registered format (the canonical storage plus a kernel choice).
// SPDX-License-Identifier: MIT
//
// Registry names (one storage, several GPU kernels):
//   csr          CPU: OpenMP row loop.  CUDA: adaptive (sub-warp per row by mean row length,
//                long rows split over a block; on skewed rows, medium rows get a warp each).
//   csr-scalar   CUDA: one thread per row (the GCSB thesis's baseline).
//   csr-vector   CUDA: one warp per row.
//   csr-merge    CUDA: merge-path, nnz-balanced, tiles staged in shared memory (skewed rows).
// Layout of the 4×4 example [[1,0,2,0],[0,0,0,0],[3,4,0,5],[0,0,0,6]]:
//   row_ptr = {0,2,2,5,6}, col_idx = {0,2,0,1,3,3}, values = {1,2,3,4,5,6}.
// Traffic (spmv): (rows+1)·I + nnz·(I+V) + cols·V (x) + rows·V (y).
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
struct CsrStorage {
  Csr<Value, Index> a;
  CsrKernel kernel = CsrKernel::automatic;
  int threads_per_row = 0;  ///< adaptive GPU kernel: lanes per row (2..32); 0 = from mean row length
  CsrBins bins = CsrBins::automatic;  ///< adaptive GPU kernel: row-length bins
  /// GPU storage of 64-bit-index matrices: 32-bit column indices (csr_device.hpp)
  CsrNarrowCols narrow_cols = CsrNarrowCols::automatic;

  static CsrStorage build(const Csr<Value, Index>& a, const FormatOptions& o);
  Csr<Value, Index> to_csr() const { return a; }
  std::size_t storage_bytes() const { return spmat::storage_bytes(a); }
  Shape shape() const { return {a.rows, a.cols, a.nnz()}; }
};

// CPU kernels (csr_cpu.cpp). Deterministic: spmv is a per-row sum in storage order; spmv_t uses
// scatter_reduce (fixed thread partition).
SPMAT_FORMAT_FUNCTIONS(CsrStorage);
template <class Value, class Index>
void spmm(const CsrStorage<Value, Index>& s, const Value* b, Value* c, std::int64_t k,
          DenseLayout layout, Value alpha, Value beta);
template <class Value, class Index>
CsrStorage<Value, Index> add(const CsrStorage<Value, Index>& a, const CsrStorage<Value, Index>& b,
                             Value alpha, Value beta);

/// C = alpha*A + beta*B on canonical CSR: sorted merge per row, entries present in either
/// operand are stored (a cancellation to 0 stays as an explicit zero). Shared reference.
template <class Value, class Index>
Csr<Value, Index> csr_add(const Csr<Value, Index>& a, const Csr<Value, Index>& b, Value alpha,
                          Value beta);

/// update_values: new values in CSR order, copied over the stored ones (below).
/// build_cuda_from_device adopts the arrays of a validated device CSR without copying them
/// (csr_device_build.cu).
SPMAT_DECLARE_VALUE_UPDATE_AND_DEVICE_BUILD(CsrStorage);

template <class Value, class Index>
void update_values(CsrStorage<Value, Index>& s, const Value* values) {
  std::copy_n(values, s.a.values.size(), s.a.values.begin());
}

/// The device storage uploaded from `a` (validated) with no host copy kept: a CUDA csr holds
/// its matrix in device memory only, and to_csr downloads it (csr_device_build.cu).
template <class Value, class Index>
std::unique_ptr<MatrixImpl<Value>> build_cuda_from_host(std::type_identity<CsrStorage<Value, Index>>,
                                                        const Csr<Value, Index>& a,
                                                        const FormatOptions& o);

}  // namespace spmat
