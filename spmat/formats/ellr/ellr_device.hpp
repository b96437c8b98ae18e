// spmat/formats/ellr/ellr_device.hpp — the CUDA storage of ELLPACK-R, built by upload (from the
// host storage) or by from_csr (on the GPU from a device CSR, ellr_device_build.cu): same arrays.
// SPDX-License-Identifier: MIT
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include "spmat/cuda/buffer.hpp"
#include "spmat/cuda/device_csr.hpp"
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
  /// kept for the next ones. Not part of storage_bytes.
  cuda::DeviceBuffer<std::int64_t> value_map;

  static EllrDevice upload(const Ellr<Value, Index>& s) {
    EllrDevice d;
    d.rows = s.ell.rows;
    d.cols = s.ell.cols;
    d.pitch = s.ell.pitch;
    d.width = s.ell.width;
    d.nnz = s.ell.nnz;
    d.col_idx = cuda::DeviceBuffer<Index>(s.ell.col_idx, "ellr col_idx");
    d.values = cuda::DeviceBuffer<Value>(s.ell.values, "ellr values");
    d.row_len = cuda::DeviceBuffer<Index>(s.row_len, "ellr row_len");
    return d;
  }
  /// The same arrays built on the GPU from a validated device CSR, refused like Ellr::build
  /// (ellr_device_build.cu).
  static EllrDevice from_csr(const DeviceCsrView<Value, Index>& a, const FormatOptions& o);

  Shape shape() const { return {rows, cols, nnz}; }
  std::size_t storage_bytes() const { return col_idx.bytes() + values.bytes() + row_len.bytes(); }
  Ellr<Value, Index> download() const {
    Ellr<Value, Index> s;
    s.ell.rows = static_cast<Index>(rows);
    s.ell.cols = static_cast<Index>(cols);
    s.ell.nnz = static_cast<Index>(nnz);
    s.ell.width = static_cast<Index>(width);
    s.ell.pitch = pitch;
    s.ell.col_idx = col_idx.download();
    s.ell.values = values.download();
    s.row_len = row_len.download();
    return s;
  }
};

template <class Value, class Index>
std::size_t traffic_bytes(const EllrDevice<Value, Index>& d, Op op, std::int64_t k) {
  return default_traffic(d.storage_bytes(), op, d.shape(), k, sizeof(Value));
}

// Value updates and test access (ellr_device_build.cu).
template <class Value, class Index>
void update_values(EllrDevice<Value, Index>& d, const Value* values, Memory where);
template <class Value, class Index>
void upload_values(EllrDevice<Value, Index>& d, const Ellr<Value, Index>& s);
template <class Value, class Index>
std::vector<StoredArray> stored_arrays(const EllrDevice<Value, Index>& d);

/// The device-only matrix over `d` (ellr_cuda.cu, where the kernels are).
template <class Value, class Index>
std::unique_ptr<MatrixImpl<Value>> make_cuda_impl(EllrDevice<Value, Index>&& d);

}  // namespace spmat
