// spmat/formats/hyb/hyb_device.hpp — the CUDA storage of HYB (ELL part + COO tail), built by
// upload (from the host storage) or by from_csr (on the GPU from a device CSR,
// hyb_device_build.cu): same arrays.
// SPDX-License-Identifier: MIT
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include "spmat/cuda/buffer.hpp"
#include "spmat/cuda/device_csr.hpp"
#include "spmat/formats/hyb/hyb.hpp"
#include "spmat/model/traffic.hpp"

namespace spmat {

template <class Value, class Index>
struct HybDevice {
  std::int64_t rows = 0, cols = 0, width = 0, pitch = 0, coo_nnz = 0;
  std::int64_t ell_nnz = 0;  ///< stored entries of the ELL part
  cuda::DeviceBuffer<Index> ell_col, coo_row, coo_col;
  cuda::DeviceBuffer<Value> ell_val, coo_val;
  /// update_values: for each CSR entry its ELL slot, or width*pitch + its COO index; made by the
  /// first update and kept for the next ones. Not part of storage_bytes.
  cuda::DeviceBuffer<std::int64_t> value_map;

  static HybDevice upload(const Hyb<Value, Index>& s) {
    HybDevice d;
    d.rows = s.ell.rows;
    d.cols = s.ell.cols;
    d.width = s.ell.width;
    d.pitch = s.ell.pitch;
    d.ell_nnz = s.ell.nnz;
    d.coo_nnz = static_cast<std::int64_t>(s.coo_val.size());
    d.ell_col = cuda::DeviceBuffer<Index>(s.ell.col_idx, "hyb ell col_idx");
    d.ell_val = cuda::DeviceBuffer<Value>(s.ell.values, "hyb ell values");
    d.coo_row = cuda::DeviceBuffer<Index>(s.coo_row, "hyb coo row");
    d.coo_col = cuda::DeviceBuffer<Index>(s.coo_col, "hyb coo col");
    d.coo_val = cuda::DeviceBuffer<Value>(s.coo_val, "hyb coo values");
    return d;
  }
  /// The same arrays built on the GPU from a validated device CSR (hyb_device_build.cu).
  static HybDevice from_csr(const DeviceCsrView<Value, Index>& a, const FormatOptions& o);

  Shape shape() const { return {rows, cols, ell_nnz + coo_nnz}; }
  std::size_t storage_bytes() const {
    return ell_col.bytes() + ell_val.bytes() + coo_row.bytes() + coo_col.bytes() + coo_val.bytes();
  }
  Hyb<Value, Index> download() const {
    Hyb<Value, Index> s;
    s.ell.rows = static_cast<Index>(rows);
    s.ell.cols = static_cast<Index>(cols);
    s.ell.nnz = static_cast<Index>(ell_nnz);
    s.ell.width = static_cast<Index>(width);
    s.ell.pitch = pitch;
    s.ell.col_idx = ell_col.download();
    s.ell.values = ell_val.download();
    s.coo_row = coo_row.download();
    s.coo_col = coo_col.download();
    s.coo_val = coo_val.download();
    return s;
  }
};

template <class Value, class Index>
std::size_t traffic_bytes(const HybDevice<Value, Index>& d, Op op, std::int64_t k) {
  return default_traffic(d.storage_bytes(), op, d.shape(), k, sizeof(Value));
}

// Value updates and test access (hyb_device_build.cu).
template <class Value, class Index>
void update_values(HybDevice<Value, Index>& d, const Value* values, Memory where);
template <class Value, class Index>
void upload_values(HybDevice<Value, Index>& d, const Hyb<Value, Index>& s);
template <class Value, class Index>
std::vector<StoredArray> stored_arrays(const HybDevice<Value, Index>& d);

/// The device-only matrix over `d` (hyb_cuda.cu, where the kernels are).
template <class Value, class Index>
std::unique_ptr<MatrixImpl<Value>> make_cuda_impl(HybDevice<Value, Index>&& d);

}  // namespace spmat
