// spmat/formats/ellr/ellr_device.hpp — the CUDA storage of ELLPACK-R, built by upload (from the
// host storage) or on the GPU from a device CSR (ellr_device_build.cu): same arrays.
// SPDX-License-Identifier: MIT
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include "spmat/cuda/array_list.hpp"
#include "spmat/cuda/buffer.hpp"
#include "spmat/cuda/device_builder.hpp"
#include "spmat/cuda/device_csr.hpp"
#include "spmat/formats/ell_common/ell_device_scalars.hpp"
#include "spmat/formats/ellr/ellr.hpp"
#include "spmat/model/traffic.hpp"

namespace spmat {

template <class Value, class Index>
struct EllrDevice : EllDeviceScalars,
                    cuda::ListedStorage<EllrDevice<Value, Index>, Ellr<Value, Index>> {
  static constexpr const char* format = "ellr";  ///< names its arrays in allocation errors
  cuda::DeviceBuffer<Index> col_idx, row_len;
  cuda::DeviceBuffer<Value> values;
  /// update_values: the CSR row offsets (rows+1), made by the first update (a scan of row_len)
  /// and kept for the next ones; a thread per row then copies its values. Not a stored array;
  /// storage_bytes counts it.
  cuda::DeviceBuffer<std::int64_t> row_offsets;

  // The stored arrays and the host vectors they mirror (spmat/cuda/array_list.hpp).
  static auto arrays(auto& d) {
    return std::tuple{cuda::Field{"col_idx", d.col_idx}, cuda::Field{"values", d.values},
                      cuda::Field{"row_len", d.row_len}};
  }
  static auto host_arrays(auto& s) { return std::tie(s.ell.col_idx, s.ell.values, s.row_len); }
  /// Every device byte held: the arrays and the update's row offsets once made
  /// (spmat/cuda/device_impl.hpp).
  std::size_t storage_bytes() const {
    return cuda::storage_bytes(arrays(*this)) + row_offsets.bytes();
  }
  void upload_scalars(const Ellr<Value, Index>& s) { take_ell_scalars(s.ell); }
  void download_scalars(Ellr<Value, Index>& s) const { give_ell_scalars(s.ell); }
};

// Value updates from device or host memory (ellr_device_build.cu) and the
// device-only matrix over a EllrDevice (ellr_cuda.cu, where the kernels are).
SPMAT_DECLARE_DEVICE_BUILT_STORAGE(EllrDevice)

}  // namespace spmat
