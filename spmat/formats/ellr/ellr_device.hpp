// spmat/formats/ellr/ellr_device.hpp — the CUDA storage of ELLPACK-R, built by upload (from the
// host storage) or by from_csr (on the GPU from a device CSR, ellr_device_build.cu): same arrays.
// SPDX-License-Identifier: MIT
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include "spmat/cuda/array_list.hpp"
#include "spmat/cuda/buffer.hpp"
#include "spmat/cuda/device_csr.hpp"
#include "spmat/formats/ell_common/ell_device_scalars.hpp"
#include "spmat/formats/ellr/ellr.hpp"
#include "spmat/model/traffic.hpp"

namespace spmat {

template <class Value, class Index>
struct EllrDevice {
  std::int64_t rows = 0, cols = 0, pitch = 0;
  std::int64_t width = 0, nnz = 0;  ///< slots per row; stored entries
  cuda::DeviceBuffer<Index> col_idx, row_len;
  cuda::DeviceBuffer<Value> values;
  /// update_values: the slot of each CSR entry, made by the first update (from row_len) and
  /// kept for the next ones. Not a stored array; storage_bytes counts it.
  cuda::DeviceBuffer<std::int64_t> value_map;

  static EllrDevice upload(const Ellr<Value, Index>& s) {
    EllrDevice d;
    std::tie(d.rows, d.cols, d.width, d.pitch, d.nnz) = ell_scalars(s.ell);
    cuda::upload_arrays("ellr", arrays(d), host_arrays(s));
    return d;
  }
  /// The same arrays built on the GPU from a validated device CSR, refused like Ellr::build
  /// (ellr_device_build.cu).
  static EllrDevice from_csr(const DeviceCsrView<Value, Index>& a, const FormatOptions& o);

  // The stored arrays and the host vectors they mirror (spmat/cuda/array_list.hpp).
  static auto arrays(auto& d) {
    return std::tuple{cuda::Field{"col_idx", d.col_idx}, cuda::Field{"values", d.values},
                      cuda::Field{"row_len", d.row_len}};
  }
  static auto host_arrays(auto& s) { return std::tie(s.ell.col_idx, s.ell.values, s.row_len); }
  static constexpr const char* scalar_names = "rows, cols, width, pitch, nnz";
  std::vector<std::int64_t> scalars() const { return {rows, cols, width, pitch, nnz}; }

  Shape shape() const { return {rows, cols, nnz}; }
  /// Every device byte held: the arrays and the value map once made
  /// (spmat/cuda/device_impl.hpp).
  std::size_t storage_bytes() const {
    return cuda::storage_bytes(arrays(*this)) + value_map.bytes();
  }
  Ellr<Value, Index> download() const {
    Ellr<Value, Index> s;
    set_ell_scalars(s.ell, rows, cols, width, pitch, nnz);
    cuda::download_arrays(arrays(*this), host_arrays(s));
    return s;
  }
};

// Value updates from device or host memory (ellr_device_build.cu).
template <class Value, class Index>
void update_values(EllrDevice<Value, Index>& d, const Value* values, Memory where);

/// The device-only matrix over `d` (ellr_cuda.cu, where the kernels are).
template <class Value, class Index>
std::unique_ptr<MatrixImpl<Value>> make_cuda_impl(EllrDevice<Value, Index>&& d);

}  // namespace spmat
