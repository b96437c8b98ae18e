// spmat/formats/bro_ell/bro_ell_device.hpp — the uploaded BRO-ELL arrays and its kernel launchers
// (CUDA builds only; included by the BRO .cu files, defined in bro_ell_cuda.cu).
// SPDX-License-Identifier: MIT
#pragma once
#include <cstdint>

#include "spmat/cuda/buffer.hpp"
#include "spmat/formats/bro_ell/bro_ell.hpp"
#include "spmat/formats/format_common.hpp"

namespace spmat {

template <class Value, class Index>
struct BroEllDevice {
  std::int64_t rows = 0, cols = 0, slices = 0;
  int h = 32, sym_len = 32;
  int kernel = 2, unroll = 8;                           // spmv: 2 fit, 1 batched, 0 classic
  int fit_words = 0;  // fit kernel words per row: bro_ell_fit_words at upload (0 if > fit_max_words)
  cuda::DeviceBuffer<std::int64_t> width_off, sym_off;  // slices+1 each
  cuda::DeviceBuffer<std::uint8_t> widths;              // Σ l_s
  cuda::DeviceBuffer<std::uint32_t> sym32;              // sym_len == 32
  cuda::DeviceBuffer<std::uint64_t> sym64;              // sym_len == 64
  cuda::DeviceBuffer<Value> values;                     // Σ l_s·h
  cuda::DeviceBuffer<Index> row_id;                     // rows, or empty (identity)
  cuda::DeviceBuffer<Index> col_base;                   // slices, or empty (base 0)

  /// Every device byte held (spmat/cuda/device_impl.hpp).
  std::size_t storage_bytes() const {
    return width_off.bytes() + sym_off.bytes() + widths.bytes() + sym32.bytes() + sym64.bytes() +
           values.bytes() + row_id.bytes() + col_base.bytes();
  }

  static BroEllDevice upload(const BroEll<Value, Index>& e);
};

/// y[orig(p)] = alpha*Σ(row p) + beta*y[orig(p)] for every stored row (all rows are written).
template <class Value, class Index>
void bro_ell_launch_spmv(const BroEllDevice<Value, Index>& d, const Value* x, Value* y,
                         Value alpha, Value beta);
/// y[col] += alpha*v*x[orig(p)] with atomicAdd (y already scaled by beta).
template <class Value, class Index>
void bro_ell_launch_spmv_t(const BroEllDevice<Value, Index>& d, const Value* x, Value* y,
                           Value alpha);

// spmv and spmv_t of the device storage: the signatures of the CPU kernels (format_common.hpp).
SPMAT_DECLARE_CPU_KERNELS(BroEllDevice);

}  // namespace spmat
