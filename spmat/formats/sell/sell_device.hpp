// spmat/formats/sell/sell_device.hpp — the CUDA storage of SELL-C-σ, built by upload (from the
// host storage) or by from_csr (on the GPU from a device CSR, sell_device_build.cu): same arrays.
// SPDX-License-Identifier: MIT
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include "spmat/cuda/buffer.hpp"
#include "spmat/cuda/device_csr.hpp"
#include "spmat/formats/sell/sell.hpp"
#include "spmat/model/traffic.hpp"

namespace spmat {

template <class Value, class Index>
struct SellDevice {
  std::int64_t rows = 0, cols = 0, chunk = 32;
  std::int64_t sigma = 256, nnz = 0;
  cuda::DeviceBuffer<Index> perm, chunk_len, col_idx;
  cuda::DeviceBuffer<std::int64_t> chunk_ptr;
  cuda::DeviceBuffer<Value> values;
  /// update_values: the slot of each CSR entry, made by the first update (from the stored row
  /// lengths) and kept for the next ones. Not part of storage_bytes.
  cuda::DeviceBuffer<std::int64_t> value_map;

  static SellDevice upload(const Sell<Value, Index>& s) {
    SellDevice d;
    d.rows = s.rows;
    d.cols = s.cols;
    d.chunk = s.chunk;
    d.sigma = s.sigma;
    d.nnz = s.nnz;
    d.perm = cuda::DeviceBuffer<Index>(s.perm, "sell perm");
    d.chunk_len = cuda::DeviceBuffer<Index>(s.chunk_len, "sell chunk_len");
    d.chunk_ptr = cuda::DeviceBuffer<std::int64_t>(s.chunk_ptr, "sell chunk_ptr");
    d.col_idx = cuda::DeviceBuffer<Index>(s.col_idx, "sell col_idx");
    d.values = cuda::DeviceBuffer<Value>(s.values, "sell values");
    return d;
  }
  /// The same arrays built on the GPU from a validated device CSR (sell_device_build.cu).
  static SellDevice from_csr(const DeviceCsrView<Value, Index>& a, const FormatOptions& o);

  Shape shape() const { return {rows, cols, nnz}; }
  std::size_t storage_bytes() const {
    return perm.bytes() + chunk_ptr.bytes() + chunk_len.bytes() + col_idx.bytes() + values.bytes();
  }
  Sell<Value, Index> download() const {
    Sell<Value, Index> s;
    s.rows = static_cast<Index>(rows);
    s.cols = static_cast<Index>(cols);
    s.nnz = static_cast<Index>(nnz);
    s.chunk = chunk;
    s.sigma = sigma;
    s.perm = perm.download();
    s.chunk_ptr = chunk_ptr.download();
    s.chunk_len = chunk_len.download();
    s.col_idx = col_idx.download();
    s.values = values.download();
    return s;
  }
};

template <class Value, class Index>
std::size_t traffic_bytes(const SellDevice<Value, Index>& d, Op op, std::int64_t k) {
  return default_traffic(d.storage_bytes(), op, d.shape(), k, sizeof(Value));
}

// Value updates and test access (sell_device_build.cu).
template <class Value, class Index>
void update_values(SellDevice<Value, Index>& d, const Value* values, Memory where);
template <class Value, class Index>
void upload_values(SellDevice<Value, Index>& d, const Sell<Value, Index>& s);
template <class Value, class Index>
std::vector<StoredArray> stored_arrays(const SellDevice<Value, Index>& d);

/// The device-only matrix over `d` (sell_cuda.cu, where the kernels are).
template <class Value, class Index>
std::unique_ptr<MatrixImpl<Value>> make_cuda_impl(SellDevice<Value, Index>&& d);

}  // namespace spmat
