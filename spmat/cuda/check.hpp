// spmat/cuda/check.hpp — CUDA error checks that name the failing call and where it was made.
// SPDX-License-Identifier: MIT
#pragma once
#include <cuda_runtime_api.h>

#include <string>

#include "spmat/core/error.hpp"

namespace spmat::cuda {

/// Throws OutOfMemoryError for cudaErrorMemoryAllocation, CudaError otherwise.
[[noreturn]] void throw_cuda_error(cudaError_t status, const char* call, const char* file, int line);

inline void check(cudaError_t status, const char* call, const char* file, int line) {
  if (status != cudaSuccess) throw_cuda_error(status, call, file, line);
}

}  // namespace spmat::cuda

/// SPMAT_CUDA_CHECK(cudaMalloc(&p, n)) — throws spmat::CudaError("cudaMalloc(&p, n) failed at
/// file:line: out of memory (cudaErrorMemoryAllocation)").
#define SPMAT_CUDA_CHECK(call) ::spmat::cuda::check((call), #call, __FILE__, __LINE__)
/// After a kernel launch: reports launch-configuration errors naming the kernel.
#define SPMAT_CUDA_CHECK_LAUNCH(name) \
  ::spmat::cuda::check(cudaGetLastError(), "launch of " name, __FILE__, __LINE__)
