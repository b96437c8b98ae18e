// spmat/formats/hisparse/hisparse_device_util.cuh — small host-side steps shared by the GPU add
// and serializer (hisparse_add_cuda.cu) and the GPU build (hisparse_build_cuda.cu): a grid-stride
// loop, one element read back, an exclusive scan. CUDA builds only.
// SPDX-License-Identifier: MIT
#pragma once
#include <cub/device/device_scan.cuh>

#include <cstddef>
#include <cstdint>

#include "spmat/cuda/buffer.hpp"
#include "spmat/cuda/primitives.cuh"

/// for i = this thread's global index, + the grid's thread count, … < n (64-bit indices).
#define SPMAT_GRID_LOOP(i, n)                                                           \
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; \
       i < (n); i += static_cast<std::int64_t>(gridDim.x) * blockDim.x)

namespace spmat::hisparse_gpu {

/// The value at device address p, copied to the host.
template <class T>
T read_back(const T* p) {
  T v;
  cuda::copy_to_host(&v, p, 1);
  return v;
}

/// out[0..n) = exclusive prefix sums of in[0..n), with CUB's temporary in a `Buffer` (a byte
/// buffer type: cuda::DeviceBuffer or cuda::ScratchBuffer) named `what` in allocation errors.
template <class Buffer, class T>
void exclusive_scan(const T* in, T* out, std::int64_t n, const char* what) {
  const auto tmp = cuda::run_cub<Buffer>(what, [&](void* temp, std::size_t& bytes) {
    return cub::DeviceScan::ExclusiveSum(temp, bytes, in, out, n, cuda::stream());
  });
}

}  // namespace spmat::hisparse_gpu
