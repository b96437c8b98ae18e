// spmat/formats/bro_coo/bro_coo_device.hpp — the uploaded BRO-COO arrays and its kernel launcher
// (CUDA builds only; included by the BRO .cu files, defined in bro_coo_cuda.cu).
// SPDX-License-Identifier: MIT
#pragma once
#include <cstdint>

#include "spmat/cuda/buffer.hpp"
#include "spmat/formats/bro_coo/bro_coo.hpp"
#include "spmat/formats/format_common.hpp"

namespace spmat {

template <class Value, class Index>
struct BroCooDevice {
  std::int64_t rows = 0, cols = 0, nnz = 0, intervals = 0, interval = 1024;
  int sym_len = 32;
  cuda::DeviceBuffer<Index> base_row;          // intervals
  cuda::DeviceBuffer<std::uint8_t> widths;     // intervals
  cuda::DeviceBuffer<std::int64_t> sym_off;    // intervals+1
  cuda::DeviceBuffer<std::uint32_t> sym32;
  cuda::DeviceBuffer<std::uint64_t> sym64;
  cuda::DeviceBuffer<Index> col_idx;           // nnz
  cuda::DeviceBuffer<Value> values;            // nnz

  /// Every device byte held (spmat/cuda/device_impl.hpp).
  std::size_t storage_bytes() const {
    return base_row.bytes() + widths.bytes() + sym_off.bytes() + sym32.bytes() + sym64.bytes() +
           col_idx.bytes() + values.bytes();
  }

  static BroCooDevice upload(const BroCoo<Value, Index>& c);
};

/// transpose = false: y[row] += alpha*Σ v·x[col] (segmented warp sums, one atomicAdd per row
/// segment and step); transpose = true: y[col] += alpha*v*x[row] (atomicAdd per entry).
/// y must already hold beta*y. No launch when there are no entries.
template <class Value, class Index>
void bro_coo_launch(const BroCooDevice<Value, Index>& d, const Value* x, Value* y, Value alpha,
                    bool transpose);

// spmv and spmv_t of the device storage: the signatures of the CPU kernels (format_common.hpp).
SPMAT_DECLARE_CPU_KERNELS(BroCooDevice);

}  // namespace spmat
