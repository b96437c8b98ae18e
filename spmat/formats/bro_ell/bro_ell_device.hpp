// spmat/formats/bro_ell/bro_ell_device.hpp — the CUDA storage of BRO-ELL, made by upload (from the
// host storage) or on the GPU from a device CSR (bro_ell_device_build.cu): the same arrays. Its
// kernel launchers are defined in bro_ell_cuda.cu (CUDA builds only).
// SPDX-License-Identifier: MIT
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "spmat/core/device_csr.hpp"
#include "spmat/cuda/array_list.hpp"
#include "spmat/cuda/buffer.hpp"
#include "spmat/formats/bro_ell/bro_ell.hpp"
#include "spmat/formats/format_common.hpp"

namespace spmat {

template <class Value, class Index>
struct BroEllDevice : cuda::ListedStorage<BroEllDevice<Value, Index>, BroEll<Value, Index>> {
  using Listed = cuda::ListedStorage<BroEllDevice, BroEll<Value, Index>>;
  static constexpr const char* format = "bro-ell";  ///< names its arrays in allocation errors
  std::int64_t rows = 0, cols = 0, nnz = 0, max_row = 0, slices = 0;
  int h = 32, sym_len = 32;
  int first_slice = 1;                                  // first-column coding (BroEll::first_slice)
  int kernel = 2, unroll = 8;                           // spmv: 2 fit, 1 batched, 0 classic
  int fit_max_words = 2;                                // BroEll::fit_max_words (option fit_bits)
  int fit_words = 0;  // fit kernel words per row: bro_ell_fit_words (0 if > fit_max_words)
  cuda::DeviceBuffer<std::int64_t> width_off, sym_off;  // slices+1 each
  cuda::DeviceBuffer<std::uint8_t> widths;              // Σ l_s
  cuda::DeviceBuffer<std::uint32_t> sym32;              // sym_len == 32
  cuda::DeviceBuffer<std::uint64_t> sym64;              // sym_len == 64
  cuda::DeviceBuffer<Value> values;                     // Σ l_s·h
  cuda::DeviceBuffer<Index> row_id;                     // rows, or empty (identity)
  cuda::DeviceBuffer<Index> col_base;                   // slices, or empty (base 0)

  /// The host storage's arrays and scalars; throws UnsupportedError where the CUDA kernels
  /// cannot run it (h not a multiple of 32 in 32..1024, sym_len not 32 or 64).
  static BroEllDevice upload(const BroEll<Value, Index>& e);

  // The stored arrays and the host vectors they mirror (spmat/cuda/array_list.hpp).
  static auto arrays(auto& d) {
    return std::tuple{cuda::Field{"width offsets", d.width_off},
                      cuda::Field{"symbol offsets", d.sym_off}, cuda::Field{"bit widths", d.widths},
                      cuda::Field{"symbols", d.sym32}, cuda::Field{"symbols", d.sym64},
                      cuda::Field{"values", d.values}, cuda::Field{"row map", d.row_id},
                      cuda::Field{"first-column bases", d.col_base}};
  }
  static auto host_arrays(auto& e) {
    return std::tie(e.width_off, e.sym_off, e.widths, e.sym32, e.sym64, e.values, e.row_id,
                    e.col_base);
  }
  static constexpr const char* scalar_names =
      "rows, cols, nnz, max_row, slices, h, sym_len, first_slice, kernel, unroll, fit_max_words, "
      "fit_words";
  std::vector<std::int64_t> scalars() const {
    return {rows, cols, nnz, max_row, slices, h, sym_len, first_slice, kernel, unroll,
            fit_max_words, fit_words};
  }
  void upload_scalars(const BroEll<Value, Index>& e) {
    cuda::copy_shape(*this, e);
    max_row = e.max_row;
    slices = e.slices();
    h = e.h;
    sym_len = e.sym_len;
    first_slice = e.first_slice ? 1 : 0;
    kernel = e.kernel;
    unroll = e.unroll;
    fit_max_words = e.fit_max_words;
    fit_words = bro_ell_fit_choice(bro_ell_fit_words(e), e.fit_max_words);
  }
  void download_scalars(BroEll<Value, Index>& e) const {
    e.rows = static_cast<Index>(rows);
    e.cols = static_cast<Index>(cols);
    e.nnz = nnz;
    e.max_row = max_row;
    e.h = h;
    e.sym_len = sym_len;
    e.first_slice = first_slice != 0;
    e.kernel = kernel;
    e.unroll = unroll;
    e.fit_max_words = fit_max_words;
  }
};

/// What the first pass of the device encoder finds, before anything of the matrix's size is
/// allocated, for the caller's limits: the longest stored row (cut to max_len), the slots of the
/// sliced ELL (bro_ell_slots), Σ l_s (bit widths; the slots with the last slice's empty lanes
/// are Σ l_s·h) and the stored entries.
struct BroEllDevicePlan {
  std::int64_t longest = 0, slots = 0, positions = 0, nnz = 0;
};

/// An empty BroEll holding what the encoder takes from the options `opt` (BroEllOptions or
/// BroHybOptions, whose BRO-ELL fields have the same names): h, sym_len, first_slice and the
/// kernel choice, as the host builders set them.
template <class Value, class Index, class Opts>
BroEll<Value, Index> bro_ell_shape(const Opts& opt) {
  BroEll<Value, Index> e;
  e.h = opt.h;
  e.sym_len = opt.sym_len;
  e.first_slice = opt.first == "slice";
  bro_apply_kernel_options(e, opt.kernel, opt.unroll, opt.fit_bits);
  return e;
}

/// BroEll::encode(a, h, sym_len, {}, max_len, first_slice) followed by the upload, on the GPU (no
/// row reordering): `shape` gives h, sym_len, first_slice and the kernel choice (kernel, unroll,
/// fit_max_words), as bro_apply_kernel_options set them. `check` sees the first pass's plan and
/// may throw (the host builder's limits) before the arrays are allocated; then columns beyond
/// the 32-bit delta limit are refused as encode refuses them. Defined in bro_ell_device_build.cu.
template <class Value, class Index>
BroEllDevice<Value, Index> bro_ell_encode_on_device(
    const DeviceCsrView<Value, Index>& a, const BroEll<Value, Index>& shape, std::int64_t max_len,
    const std::function<void(const BroEllDevicePlan&)>& check);

/// y[orig(p)] = alpha*Σ(row p) + beta*y[orig(p)] for every stored row (all rows are written).
template <class Value, class Index>
void bro_ell_launch_spmv(const BroEllDevice<Value, Index>& d, const Value* x, Value* y,
                         Value alpha, Value beta);
/// y[col] += alpha*v*x[orig(p)] with atomicAdd (y already scaled by beta).
template <class Value, class Index>
void bro_ell_launch_spmv_t(const BroEllDevice<Value, Index>& d, const Value* x, Value* y,
                           Value alpha);

// spmv and spmv_t of the device storage: the signatures of the CPU kernels (format_common.hpp),
// and the device-only matrix over a BroEllDevice (bro_ell_cuda.cu, where the kernels are).
SPMAT_DECLARE_CPU_KERNELS(BroEllDevice);
SPMAT_DECLARE_CUDA_IMPL(BroEllDevice);

}  // namespace spmat
