// spmat/formats/ell/ell_device.hpp — the CUDA storage of ELLPACK, built by upload (from the host
// storage) or by from_csr (on the GPU from a device CSR, ell_device_build.cu): same arrays.
// SPDX-License-Identifier: MIT
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include "spmat/cuda/array_list.hpp"
#include "spmat/cuda/buffer.hpp"
#include "spmat/cuda/device_csr.hpp"
#include "spmat/formats/ell/ell.hpp"
#include "spmat/formats/ell_common/ell_device_scalars.hpp"
#include "spmat/model/traffic.hpp"

namespace spmat {

template <class Value, class Index>
struct EllDevice {
  std::int64_t rows = 0, cols = 0, width = 0, pitch = 0;
  std::int64_t nnz = 0;  ///< stored (non-padding) entries
  cuda::DeviceBuffer<Index> col_idx;
  cuda::DeviceBuffer<Value> values;
  /// update_values: the slot of each CSR entry, made by the first update (from the stored row
  /// lengths) and kept for the next ones. Not a stored array; storage_bytes counts it.
  cuda::DeviceBuffer<std::int64_t> value_map;

  static EllDevice upload(const Ell<Value, Index>& s) {
    EllDevice d;
    std::tie(d.rows, d.cols, d.width, d.pitch, d.nnz) = ell_scalars(s);
    cuda::upload_arrays("ell", arrays(d), host_arrays(s));
    return d;
  }
  /// The same arrays built on the GPU from a validated device CSR, refused like Ell::build
  /// (padding limit `max_fill`) (ell_device_build.cu).
  static EllDevice from_csr(const DeviceCsrView<Value, Index>& a, const FormatOptions& o);

  // The stored arrays and the host vectors they mirror (spmat/cuda/array_list.hpp).
  static auto arrays(auto& d) {
    return std::tuple{cuda::Field{"col_idx", d.col_idx}, cuda::Field{"values", d.values}};
  }
  static auto host_arrays(auto& s) { return std::tie(s.col_idx, s.values); }
  static constexpr const char* scalar_names = "rows, cols, width, pitch, nnz";
  std::vector<std::int64_t> scalars() const { return {rows, cols, width, pitch, nnz}; }

  Shape shape() const { return {rows, cols, nnz}; }
  /// Every device byte held: the arrays and the value map once made
  /// (spmat/cuda/device_impl.hpp).
  std::size_t storage_bytes() const {
    return cuda::storage_bytes(arrays(*this)) + value_map.bytes();
  }
  Ell<Value, Index> download() const {
    Ell<Value, Index> s;
    set_ell_scalars(s, rows, cols, width, pitch, nnz);
    cuda::download_arrays(arrays(*this), host_arrays(s));
    return s;
  }
};

// Value updates from device or host memory (ell_device_build.cu).
template <class Value, class Index>
void update_values(EllDevice<Value, Index>& d, const Value* values, Memory where);

/// The device-only matrix over `d` (ell_cuda.cu, where the kernels are).
template <class Value, class Index>
std::unique_ptr<MatrixImpl<Value>> make_cuda_impl(EllDevice<Value, Index>&& d);

}  // namespace spmat
