// spmat/formats/csb/csb_cuda_common.cuh — CUDA helpers shared by csb and gcsb: y scaling, launch sizes.
// SPDX-License-Identifier: MIT
#pragma once
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "spmat/cuda/check.hpp"

namespace spmat::csb_cuda {

/// y[i] = beta*y[i] for i < n; beta == 0 writes zeros without reading y (NaN poison stays out).
template <class Value>
__global__ void scale_kernel(std::int64_t n, Value* __restrict__ y, Value beta) {
  for (std::int64_t i = std::int64_t{blockIdx.x} * blockDim.x + threadIdx.x; i < n;
       i += std::int64_t{gridDim.x} * blockDim.x)
    y[i] = beta == Value(0) ? Value(0) : beta * y[i];
}

/// Grid for a grid-stride loop over n items with `block` threads (n > 0). The cap keeps the grid
/// legal for any n; the loop covers the rest.
inline unsigned grid_for(std::int64_t n, int block) {
  const std::int64_t g = (n + block - 1) / block;
  return static_cast<unsigned>(std::min<std::int64_t>(std::max<std::int64_t>(g, 1), 1 << 22));
}

/// Pre-scales y (the atomic kernels accumulate into it). No launch for n == 0.
template <class Value>
void scale(Value* y, std::int64_t n, Value beta) {
  if (n <= 0 || beta == Value(1)) return;
  scale_kernel<<<grid_for(n, 256), 256>>>(n, y, beta);
  SPMAT_CUDA_CHECK_LAUNCH("csb scale_kernel");
}

}  // namespace spmat::csb_cuda
