// spmat/formats/bro_coo/bro_coo_device.hpp — the CUDA storage of BRO-COO, made by upload (from the
// host storage) or on the GPU (bro_coo_device_build.cu): the same arrays. Its kernel launcher is
// defined in bro_coo_cuda.cu (CUDA builds only).
// SPDX-License-Identifier: MIT
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include "spmat/cuda/array_list.hpp"
#include "spmat/cuda/buffer.hpp"
#include "spmat/formats/bro_coo/bro_coo.hpp"
#include "spmat/formats/format_common.hpp"

namespace spmat {

template <class Value, class Index>
struct BroCooDevice : cuda::ListedStorage<BroCooDevice<Value, Index>, BroCoo<Value, Index>> {
  static constexpr const char* format = "bro-coo";  ///< names its arrays in allocation errors
  std::int64_t rows = 0, cols = 0, nnz = 0, intervals = 0, interval = 1024;
  int sym_len = 32;
  cuda::DeviceBuffer<Index> base_row;          // intervals
  cuda::DeviceBuffer<std::uint8_t> widths;     // intervals
  cuda::DeviceBuffer<std::int64_t> sym_off;    // intervals+1
  cuda::DeviceBuffer<std::uint32_t> sym32;
  cuda::DeviceBuffer<std::uint64_t> sym64;
  cuda::DeviceBuffer<Index> col_idx;           // nnz
  cuda::DeviceBuffer<Value> values;            // nnz

  // The stored arrays and the host vectors they mirror (spmat/cuda/array_list.hpp).
  static auto arrays(auto& d) {
    return std::tuple{cuda::Field{"base rows", d.base_row}, cuda::Field{"bit widths", d.widths},
                      cuda::Field{"symbol offsets", d.sym_off}, cuda::Field{"symbols", d.sym32},
                      cuda::Field{"symbols", d.sym64}, cuda::Field{"columns", d.col_idx},
                      cuda::Field{"values", d.values}};
  }
  static auto host_arrays(auto& c) {
    return std::tie(c.base_row, c.widths, c.sym_off, c.sym32, c.sym64, c.col_idx, c.values);
  }
  static constexpr const char* scalar_names = "rows, cols, nnz, intervals, interval, sym_len";
  std::vector<std::int64_t> scalars() const { return {rows, cols, nnz, intervals, interval, sym_len}; }
  void upload_scalars(const BroCoo<Value, Index>& c) {
    cuda::copy_shape(*this, c);
    intervals = c.intervals();
    interval = c.interval;
    sym_len = c.sym_len;
  }
  void download_scalars(BroCoo<Value, Index>& c) const {
    c.rows = static_cast<Index>(rows);
    c.cols = static_cast<Index>(cols);
    c.nnz = nnz;
    c.interval = interval;
    c.sym_len = sym_len;
  }
};

/// BroCoo::encode(rows, cols, row_idx, col_idx, values, sym_len, interval) followed by the
/// upload, on the GPU: `row_idx` (n entries, non-decreasing, read only) is the entries' rows;
/// `col_idx` and `values` (n each) become the storage's arrays. Returns with work still queued
/// on stream() that reads `row_idx`: free it in stream order (a ScratchBuffer does). Throws
/// UnsupportedError for rows beyond the 32-bit delta limit, as encode does. Defined in
/// bro_coo_device_build.cu.
template <class Value, class Index>
BroCooDevice<Value, Index> bro_coo_encode_on_device(std::int64_t rows, std::int64_t cols,
                                                    const Index* row_idx,
                                                    cuda::DeviceBuffer<Index> col_idx,
                                                    cuda::DeviceBuffer<Value> values, int sym_len,
                                                    std::int64_t interval);

/// transpose = false: y[row] += alpha*Σ v·x[col] (segmented warp sums, one atomicAdd per row
/// segment and step); transpose = true: y[col] += alpha*v*x[row] (atomicAdd per entry).
/// y must already hold beta*y. No launch when there are no entries.
template <class Value, class Index>
void bro_coo_launch(const BroCooDevice<Value, Index>& d, const Value* x, Value* y, Value alpha,
                    bool transpose);

// spmv and spmv_t of the device storage: the signatures of the CPU kernels (format_common.hpp),
// and the device-only matrix over a BroCooDevice (bro_coo_cuda.cu, where the kernels are).
SPMAT_DECLARE_CPU_KERNELS(BroCooDevice);
SPMAT_DECLARE_CUDA_IMPL(BroCooDevice);

}  // namespace spmat
