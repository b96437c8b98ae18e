// spmat/formats/coo/coo_device.hpp — the CUDA storage of COO, built by upload (from the host
// storage) or on the GPU from a device CSR (coo_device_build.cu): same arrays.
// SPDX-License-Identifier: MIT
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include "spmat/cuda/array_list.hpp"
#include "spmat/cuda/buffer.hpp"
#include "spmat/cuda/device_builder.hpp"
#include "spmat/cuda/device_csr.hpp"
#include "spmat/formats/coo/coo.hpp"
#include "spmat/model/traffic.hpp"

namespace spmat {

/// Nonzeros per warp interval of the segmented kernel: 8 chunks of 32. Untuned (pending the
/// benchmark run); longer intervals mean fewer carries, shorter ones more parallelism.
inline constexpr std::int64_t kCooSegInterval = 8 * 32;

template <class Value, class Index>
struct CooDevice : cuda::ListedStorage<CooDevice<Value, Index>, CooStorage<Value, Index>> {
  using Listed = cuda::ListedStorage<CooDevice, CooStorage<Value, Index>>;
  static constexpr const char* format = "coo";  ///< names its arrays in allocation errors
  Index rows = 0, cols = 0;
  std::int64_t nnz = 0;
  CooKernel kernel = CooKernel::atomic;
  cuda::DeviceBuffer<Index> row_idx, col_idx;
  cuda::DeviceBuffer<Value> values;
  // Segmented kernel workspace (not a stored array; storage_bytes counts it): per warp
  // interval, the partial sum of its first row (head) and of its last row (tail). Reused by
  // every call.
  mutable cuda::DeviceBuffer<Value> head, tail;

  /// The listed arrays, then the workspace of the segmented kernel.
  static CooDevice upload(const CooStorage<Value, Index>& s) {
    CooDevice d = Listed::upload(s);
    d.allocate_workspace();
    return d;
  }

  void allocate_workspace() {
    if (kernel == CooKernel::segmented && nnz > 0) {
      const auto intervals = static_cast<std::size_t>((nnz + kCooSegInterval - 1) / kCooSegInterval);
      head = cuda::DeviceBuffer<Value>(intervals, "coo-seg head carries");
      tail = cuda::DeviceBuffer<Value>(intervals, "coo-seg tail carries");
    }
  }
  // The stored arrays and the host vectors they mirror (spmat/cuda/array_list.hpp).
  static auto arrays(auto& d) {
    return std::tuple{cuda::Field{"row_idx", d.row_idx}, cuda::Field{"col_idx", d.col_idx},
                      cuda::Field{"values", d.values}};
  }
  static auto host_arrays(auto& s) { return std::tie(s.a.row_idx, s.a.col_idx, s.a.values); }
  static constexpr const char* scalar_names = "kernel, workspace";
  std::vector<std::int64_t> scalars() const {
    return {static_cast<std::int64_t>(kernel), static_cast<std::int64_t>(head.size()),
            static_cast<std::int64_t>(tail.size())};
  }
  /// Every device byte held: the arrays and the segmented kernel's workspace
  /// (spmat/cuda/device_impl.hpp).
  std::size_t storage_bytes() const {
    return cuda::storage_bytes(arrays(*this)) + head.bytes() + tail.bytes();
  }
  void upload_scalars(const CooStorage<Value, Index>& s) {
    cuda::copy_shape(*this, s.shape());
    kernel = s.kernel;
  }
  void download_scalars(CooStorage<Value, Index>& s) const {
    s.a.rows = rows;
    s.a.cols = cols;
    s.kernel = kernel;
  }
};

// Value updates from device or host memory (coo_device_build.cu; COO keeps CSR order: a plain
// copy) and the device-only matrix over a CooDevice (coo_cuda.cu, where the kernels are).
SPMAT_DECLARE_DEVICE_BUILT_STORAGE(CooDevice)

}  // namespace spmat
