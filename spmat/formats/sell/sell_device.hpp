// spmat/formats/sell/sell_device.hpp — the CUDA storage of SELL-C-σ, built by upload (from the host
// storage) or on the GPU from a device CSR (sell_device_build.cu): same arrays.
// SPDX-License-Identifier: MIT
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include "spmat/cuda/array_list.hpp"
#include "spmat/cuda/buffer.hpp"
#include "spmat/cuda/device_builder.hpp"
#include "spmat/cuda/device_csr.hpp"
#include "spmat/formats/sell/sell.hpp"
#include "spmat/model/traffic.hpp"

namespace spmat {

template <class Value, class Index>
struct SellDevice : cuda::ListedStorage<SellDevice<Value, Index>, Sell<Value, Index>> {
  static constexpr const char* format = "sell";  ///< names its arrays in allocation errors
  std::int64_t rows = 0, cols = 0, chunk = 32;
  std::int64_t sigma = 256, nnz = 0;
  cuda::DeviceBuffer<Index> perm, chunk_len, col_idx;
  cuda::DeviceBuffer<std::int64_t> chunk_ptr;
  cuda::DeviceBuffer<Value> values;
  /// update_values: the CSR row offsets (rows+1), made by the first update (from the stored
  /// row lengths) and kept for the next ones; a thread per stored row then copies its values.
  /// Not a stored array; storage_bytes counts it.
  cuda::DeviceBuffer<std::int64_t> row_offsets;

  // The stored arrays and the host vectors they mirror (spmat/cuda/array_list.hpp).
  static auto arrays(auto& d) {
    return std::tuple{cuda::Field{"perm", d.perm}, cuda::Field{"chunk_ptr", d.chunk_ptr},
                      cuda::Field{"chunk_len", d.chunk_len}, cuda::Field{"col_idx", d.col_idx},
                      cuda::Field{"values", d.values}};
  }
  static auto host_arrays(auto& s) {
    return std::tie(s.perm, s.chunk_ptr, s.chunk_len, s.col_idx, s.values);
  }
  static constexpr const char* scalar_names = "rows, cols, chunk, sigma, nnz";
  std::vector<std::int64_t> scalars() const { return {rows, cols, chunk, sigma, nnz}; }
  /// Every device byte held: the arrays and the update's row offsets once made
  /// (spmat/cuda/device_impl.hpp).
  std::size_t storage_bytes() const {
    return cuda::storage_bytes(arrays(*this)) + row_offsets.bytes();
  }
  // The shape, C and σ (the host storage holds its shape in Index).
  void upload_scalars(const Sell<Value, Index>& s) {
    cuda::copy_shape(*this, s);
    chunk = s.chunk;
    sigma = s.sigma;
  }
  void download_scalars(Sell<Value, Index>& s) const {
    cuda::copy_shape(s, *this);
    s.chunk = chunk;
    s.sigma = sigma;
  }
};

// Value updates from device or host memory (sell_device_build.cu) and the
// device-only matrix over a SellDevice (sell_cuda.cu, where the kernels are).
SPMAT_DECLARE_DEVICE_BUILT_STORAGE(SellDevice)

}  // namespace spmat
