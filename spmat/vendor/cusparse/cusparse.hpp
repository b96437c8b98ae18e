// spmat/vendor/cusparse/cusparse.hpp — cuSPARSE registered as spmat formats (the GPU yardstick).
// SPDX-License-Identifier: MIT
//
// Registry names (CUDA backend only; see cusparse.md):
//   cusparse-csr       CSR, cusparseSpMV CUSPARSE_SPMV_CSR_ALG1; SpMM CSR_ALG1/2/3 (spmm_alg);
//                      add through csrgeam2.
//   cusparse-csr-alg2  CSR, cusparseSpMV CUSPARSE_SPMV_CSR_ALG2 (deterministic for op N).
//   cusparse-coo       COO, cusparseSpMV CUSPARSE_SPMV_COO_ALG1; SpMM COO_ALG1..4 (spmm_alg).
// spmv_t is cusparseSpMV with CUSPARSE_OPERATION_TRANSPOSE on the same arrays. Built from a
// device CSR, the arrays are copied device to device (COO's row indices expanded on the GPU).
// Only compiled with CUDA (sources under spmat/vendor/ are CUDA-only).
#pragma once
#include <cusparse.h>

#include <memory>
#include <vector>

#include "spmat/core/csr.hpp"
#include "spmat/core/options.hpp"
#include "spmat/matrix_impl.hpp"
#include "spmat/registry.hpp"

namespace spmat {

namespace vendor {
/// Throws UnsupportedError for CUSPARSE_STATUS_NOT_SUPPORTED, OutOfMemoryError for
/// CUSPARSE_STATUS_ALLOC_FAILED / INSUFFICIENT_RESOURCES, CudaError otherwise; the message
/// names the call, the place and cusparseGetErrorString(status).
[[noreturn]] void throw_cusparse_error(cusparseStatus_t status, const char* call, const char* file,
                                       int line);
inline void check_cusparse(cusparseStatus_t status, const char* call, const char* file, int line) {
  if (status != CUSPARSE_STATUS_SUCCESS) throw_cusparse_error(status, call, file, line);
}

/// Which cuSPARSE storage and SpMV algorithm a registry entry uses.
enum class CusparseKind { csr_alg1, csr_alg2, coo };

/// Builds the cuSPARSE-backed matrix (uploads the arrays; descriptors and work buffers are made
/// in prepare() or lazily on first use). Options: spmm_alg (default, 1, 2, 3 for CSR; default,
/// 1..4 for COO). Throws UnsupportedError for an unknown spmm_alg.
template <class Value, class Index>
std::unique_ptr<MatrixImpl<Value>> make_cusparse_impl(const Csr<Value, Index>& a, CusparseKind kind,
                                                      const FormatOptions& options);
}  // namespace vendor

/// The registry entries cusparse-csr, cusparse-csr-alg2, cusparse-coo (registry.cpp lists it).
std::vector<FormatEntry> cusparse_entries();

}  // namespace spmat

/// SPMAT_CUSPARSE_CHECK(cusparseSpMV(...)) — throws naming the call and cuSPARSE's message.
#define SPMAT_CUSPARSE_CHECK(call) ::spmat::vendor::check_cusparse((call), #call, __FILE__, __LINE__)
