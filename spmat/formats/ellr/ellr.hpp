// spmat/formats/ellr/ellr.hpp — ELLPACK-R: ELLPACK plus a row-length array, and its kernels.
// SPDX-License-Identifier: MIT
//
// Registry name: ellr. Storage = the ELL arrays of formats/ell (column-major, pitch = rows
// rounded up to 32, padding column -1 / value 0) plus row_len (rows entries). Kernels loop
// row_len[i] times, so they never test a padding slot (Vázquez et al.'s ELLPACK-R).
//
// Example (4×4)  [[1,0,2,0],[0,0,0,0],[3,4,0,5],[0,0,0,6]]:  the ELL arrays of ell.hpp
// (K = 3, pitch = 32) plus row_len = {2, 0, 3, 1}.
// Same padding limit as ell (option max_fill, row_limits.hpp). Traffic (spmv): pitch·K·(I+V) +
// rows·I + cols·V + rows·V.
#pragma once
#include <memory>
#include <type_traits>
#include <vector>

#include "spmat/formats/ell/ell.hpp"
#include "spmat/formats/format_common.hpp"
#include "spmat/model/traffic.hpp"
#include "spmat/format_options.hpp"

namespace spmat {

template <class Value, class Index>
struct Ellr {
  Ell<Value, Index> ell;
  std::vector<Index> row_len;  ///< rows entries: stored slots of each row

  /// Options: max_fill (as ell).
  static Ellr build(const Csr<Value, Index>& a, const FormatOptions& o);
  Csr<Value, Index> to_csr() const { return ell.to_csr(); }
  std::size_t storage_bytes() const { return ell.storage_bytes() + row_len.size() * sizeof(Index); }
  Shape shape() const { return ell.shape(); }
};

// CPU kernels (ellr_cpu.cpp), deterministic (as ell).
SPMAT_FORMAT_FUNCTIONS(Ellr);

/// update_values: new values in CSR order (into the slots of each row, padding untouched;
/// ellr_values.cpp).
/// build_cuda_from_device: the same arrays built on the GPU from a validated device CSR, refused
/// like build (ellr_device_build.cu).
SPMAT_DECLARE_VALUE_UPDATE_AND_DEVICE_BUILD(Ellr);

}  // namespace spmat
