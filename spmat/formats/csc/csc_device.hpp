// spmat/formats/csc/csc_device.hpp — the CUDA storage of CSC, built by upload (from the host
// storage) or on the GPU from a device CSR (csc_device_build.cu): same arrays.
// SPDX-License-Identifier: MIT
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include "spmat/cuda/array_list.hpp"
#include "spmat/cuda/buffer.hpp"
#include "spmat/cuda/device_builder.hpp"
#include "spmat/cuda/device_csr.hpp"
#include "spmat/formats/csc/csc.hpp"
#include "spmat/model/traffic.hpp"

namespace spmat {

template <class Value, class Index>
struct CscDevice : cuda::ListedStorage<CscDevice<Value, Index>, CscStorage<Value, Index>> {
  static constexpr const char* format = "csc";  ///< names its arrays in allocation errors
  Index rows = 0, cols = 0;
  std::int64_t nnz = 0;
  /// Lanes per column of the gather kernel: the power of two (1..32) at or above the mean
  /// column length, the usual sub-warp rule of CSR-vector kernels. Untuned, pending the
  /// benchmark run.
  int lanes = 1;
  cuda::DeviceBuffer<Index> col_ptr, row_idx;
  cuda::DeviceBuffer<Value> values;
  /// update_values: the CSR position of each CSC entry, made by the first update (a sort of
  /// the entries by row, inverted) and kept for the next ones. Not a stored array;
  /// storage_bytes counts it.
  cuda::DeviceBuffer<Index> value_map;

  void set_lanes() {
    const std::int64_t mean = cols > 0 ? (nnz + cols - 1) / cols : 0;
    lanes = 1;
    while (lanes < 32 && lanes < mean) lanes *= 2;
  }
  // The stored arrays and the host vectors they mirror (spmat/cuda/array_list.hpp).
  static auto arrays(auto& d) {
    return std::tuple{cuda::Field{"col_ptr", d.col_ptr}, cuda::Field{"row_idx", d.row_idx},
                      cuda::Field{"values", d.values}};
  }
  static auto host_arrays(auto& s) { return std::tie(s.a.col_ptr, s.a.row_idx, s.a.values); }
  static constexpr const char* scalar_names = "lanes";
  std::vector<std::int64_t> scalars() const { return {lanes}; }
  /// Every device byte held: the arrays and the value map once made
  /// (spmat/cuda/device_impl.hpp).
  std::size_t storage_bytes() const {
    return cuda::storage_bytes(arrays(*this)) + value_map.bytes();
  }
  void upload_scalars(const CscStorage<Value, Index>& s) {
    cuda::copy_shape(*this, s.shape());
    set_lanes();
  }
  void download_scalars(CscStorage<Value, Index>& s) const {
    s.a.rows = rows;
    s.a.cols = cols;
  }
};

// Value updates from device or host memory (csc_device_build.cu) and the
// device-only matrix over a CscDevice (csc_cuda.cu, where the kernels are).
SPMAT_DECLARE_DEVICE_BUILT_STORAGE(CscDevice)

}  // namespace spmat
