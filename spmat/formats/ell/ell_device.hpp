// spmat/formats/ell/ell_device.hpp — the CUDA storage of ELLPACK, built by upload (from the host
// storage) or by from_csr (on the GPU from a device CSR, ell_device_build.cu): same arrays.
// SPDX-License-Identifier: MIT
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include "spmat/cuda/buffer.hpp"
#include "spmat/cuda/device_csr.hpp"
#include "spmat/formats/ell/ell.hpp"
#include "spmat/model/traffic.hpp"

namespace spmat {

template <class Value, class Index>
struct EllDevice {
  std::int64_t rows = 0, cols = 0, width = 0, pitch = 0;
  std::int64_t nnz = 0;  ///< stored (non-padding) entries
  cuda::DeviceBuffer<Index> col_idx;
  cuda::DeviceBuffer<Value> values;
  /// update_values: the slot of each CSR entry, made by the first update (from the stored row
  /// lengths) and kept for the next ones. Not part of storage_bytes.
  cuda::DeviceBuffer<std::int64_t> value_map;

  static EllDevice upload(const Ell<Value, Index>& s) {
    EllDevice d;
    d.rows = s.rows;
    d.cols = s.cols;
    d.width = s.width;
    d.pitch = s.pitch;
    d.nnz = s.nnz;
    d.col_idx = cuda::DeviceBuffer<Index>(s.col_idx, "ell col_idx");
    d.values = cuda::DeviceBuffer<Value>(s.values, "ell values");
    return d;
  }
  /// The same arrays built on the GPU from a validated device CSR, refused like Ell::build
  /// (padding limit `max_fill`) (ell_device_build.cu).
  static EllDevice from_csr(const DeviceCsrView<Value, Index>& a, const FormatOptions& o);

  Shape shape() const { return {rows, cols, nnz}; }
  std::size_t storage_bytes() const { return col_idx.bytes() + values.bytes(); }
  Ell<Value, Index> download() const {
    Ell<Value, Index> s;
    s.rows = static_cast<Index>(rows);
    s.cols = static_cast<Index>(cols);
    s.nnz = static_cast<Index>(nnz);
    s.width = static_cast<Index>(width);
    s.pitch = pitch;
    s.col_idx = col_idx.download();
    s.values = values.download();
    return s;
  }
};

template <class Value, class Index>
std::size_t traffic_bytes(const EllDevice<Value, Index>& d, Op op, std::int64_t k) {
  return default_traffic(d.storage_bytes(), op, d.shape(), k, sizeof(Value));
}

// Value updates and test access (ell_device_build.cu).
template <class Value, class Index>
void update_values(EllDevice<Value, Index>& d, const Value* values, Memory where);
template <class Value, class Index>
void upload_values(EllDevice<Value, Index>& d, const Ell<Value, Index>& s);
template <class Value, class Index>
std::vector<StoredArray> stored_arrays(const EllDevice<Value, Index>& d);

/// The device-only matrix over `d` (ell_cuda.cu, where the kernels are).
template <class Value, class Index>
std::unique_ptr<MatrixImpl<Value>> make_cuda_impl(EllDevice<Value, Index>&& d);

}  // namespace spmat
