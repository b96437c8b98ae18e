// spmat/formats/sell/sell_device.hpp — the CUDA storage of SELL-C-σ, built by upload (from the
// host storage) or by from_csr (on the GPU from a device CSR, sell_device_build.cu): same arrays.
// SPDX-License-Identifier: MIT
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include "spmat/cuda/array_list.hpp"
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
  /// lengths) and kept for the next ones. Not a stored array; storage_bytes counts it.
  cuda::DeviceBuffer<std::int64_t> value_map;

  static SellDevice upload(const Sell<Value, Index>& s) {
    SellDevice d;
    d.rows = s.rows;
    d.cols = s.cols;
    d.chunk = s.chunk;
    d.sigma = s.sigma;
    d.nnz = s.nnz;
    cuda::upload_arrays("sell", arrays(d), host_arrays(s));
    return d;
  }
  /// The same arrays built on the GPU from a validated device CSR (sell_device_build.cu).
  static SellDevice from_csr(const DeviceCsrView<Value, Index>& a, const FormatOptions& o);

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

  Shape shape() const { return {rows, cols, nnz}; }
  /// Every device byte held: the arrays and the value map once made
  /// (spmat/cuda/device_impl.hpp).
  std::size_t storage_bytes() const {
    return cuda::storage_bytes(arrays(*this)) + value_map.bytes();
  }
  Sell<Value, Index> download() const {
    Sell<Value, Index> s;
    s.rows = static_cast<Index>(rows);
    s.cols = static_cast<Index>(cols);
    s.nnz = static_cast<Index>(nnz);
    s.chunk = chunk;
    s.sigma = sigma;
    cuda::download_arrays(arrays(*this), host_arrays(s));
    return s;
  }
};

// Value updates from device or host memory (sell_device_build.cu).
template <class Value, class Index>
void update_values(SellDevice<Value, Index>& d, const Value* values, Memory where);

/// The device-only matrix over `d` (sell_cuda.cu, where the kernels are).
template <class Value, class Index>
std::unique_ptr<MatrixImpl<Value>> make_cuda_impl(SellDevice<Value, Index>&& d);

}  // namespace spmat
