// spmat/formats/hyb/hyb_device.hpp — the CUDA storage of HYB (ELL part + COO tail), built by upload
// (from the host storage) or on the GPU from a device CSR (hyb_device_build.cu): same arrays.
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
#include "spmat/formats/hyb/hyb.hpp"
#include "spmat/model/traffic.hpp"

namespace spmat {

template <class Value, class Index>
struct HybDevice : cuda::ListedStorage<HybDevice<Value, Index>, Hyb<Value, Index>> {
  static constexpr const char* format = "hyb";  ///< names its arrays in allocation errors
  std::int64_t rows = 0, cols = 0, width = 0, pitch = 0, coo_nnz = 0;
  std::int64_t ell_nnz = 0;  ///< stored entries of the ELL part
  cuda::DeviceBuffer<Index> ell_col, coo_row, coo_col;
  cuda::DeviceBuffer<Value> ell_val, coo_val;
  /// update_values: the CSR row offsets (rows+1), and where a COO tail exists the offsets of
  /// the rows' ELL entries (rows+1: tail entry i of row r is CSR entry i + width +
  /// ell_offsets[r]); made by the first update and kept for the next ones. Not stored arrays;
  /// storage_bytes counts them.
  cuda::DeviceBuffer<std::int64_t> row_offsets, ell_offsets;

  // The stored arrays and the host vectors they mirror (spmat/cuda/array_list.hpp).
  static auto arrays(auto& d) {
    return std::tuple{cuda::Field{"ell_col", d.ell_col}, cuda::Field{"ell_val", d.ell_val},
                      cuda::Field{"coo_row", d.coo_row}, cuda::Field{"coo_col", d.coo_col},
                      cuda::Field{"coo_val", d.coo_val}};
  }
  static auto host_arrays(auto& s) {
    return std::tie(s.ell.col_idx, s.ell.values, s.coo_row, s.coo_col, s.coo_val);
  }
  static constexpr const char* scalar_names = "rows, cols, width, pitch, ell_nnz, coo_nnz";
  std::vector<std::int64_t> scalars() const { return {rows, cols, width, pitch, ell_nnz, coo_nnz}; }
  void upload_scalars(const Hyb<Value, Index>& s) {
    std::tie(rows, cols, width, pitch, ell_nnz) = ell_scalars(s.ell);
    coo_nnz = static_cast<std::int64_t>(s.coo_val.size());
  }
  void download_scalars(Hyb<Value, Index>& s) const {
    set_ell_scalars(s.ell, rows, cols, width, pitch, ell_nnz);
  }

  Shape shape() const { return {rows, cols, ell_nnz + coo_nnz}; }
  /// Every device byte held: the arrays and the update's offsets once made
  /// (spmat/cuda/device_impl.hpp).
  std::size_t storage_bytes() const {
    return cuda::storage_bytes(arrays(*this)) + row_offsets.bytes() + ell_offsets.bytes();
  }
};

// Value updates from device or host memory (hyb_device_build.cu) and the
// device-only matrix over a HybDevice (hyb_cuda.cu, where the kernels are).
SPMAT_DECLARE_DEVICE_BUILT_STORAGE(HybDevice)

}  // namespace spmat
