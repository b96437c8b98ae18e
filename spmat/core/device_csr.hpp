// spmat/core/device_csr.hpp — canonical CSR whose arrays already live in GPU memory: a
// non-owning view and an owning (or co-owning) variant, the inputs of Matrix::build on the
// CUDA backend without a host round trip.
// SPDX-License-Identifier: MIT
//
//   // Arrays owned by the caller (CuPy, PyTorch, cudaMalloc): they must outlive the matrix.
//   spmat::DeviceCsrView<float, std::int32_t> v{rows, cols, nnz, d_row_ptr, d_col_idx, d_values};
//   auto A = spmat::Matrix<float>::build(v, "csr");           // csr adopts the arrays, no copy
//
//   // Arrays handed over (spmat/cuda/device_csr.hpp builds one from DeviceBuffers):
//   auto B = spmat::Matrix<float>::build(spmat::cuda::adopt_csr(rows, cols,
//                std::move(row_ptr), std::move(col_idx), std::move(values)), "csr");
//
// Plain C++ (no CUDA header): the pointers are opaque device addresses here.
//
// Lifetime rules.
//   * DeviceCsrView: nothing is owned. A format that adopts the arrays (csr) reads them at every
//     operation, so they must stay allocated and unchanged until the last Matrix built from the
//     view is destroyed (Matrix copies share one storage). Formats that build their own arrays
//     (coo, csc, ...) read the view only during build.
//   * DeviceCsr: `owner` is any object that keeps the arrays alive (DeviceBuffers moved in, a
//     framework's tensor handle). Every Matrix built from it holds a reference to `owner` as long
//     as it uses the arrays, so the arrays are freed when the last such matrix is destroyed (and
//     the caller dropped its own references), or right after build for formats that copy.
//   * The matrix never writes into adopted arrays: update_values on a matrix that adopted them
//     writes its new values into an array it allocates, unless the DeviceCsr is `exclusive`
//     (its owner holds memory nobody else sees, as adopt_csr's DeviceBuffers), then in place.
#pragma once
#include <cstdint>
#include <memory>
#include <utility>

namespace spmat {

/// Canonical CSR in device memory (the rules of spmat/core/csr.hpp: row_ptr has rows+1 entries,
/// row_ptr[0] = 0, non-decreasing, row_ptr[rows] = nnz, columns strictly increasing per row).
/// Matrix::build checks all of that with one kernel before building.
template <class Value, class Index>
struct DeviceCsrView {
  std::int64_t rows = 0;
  std::int64_t cols = 0;
  std::int64_t nnz = 0;
  const Index* row_ptr = nullptr;  ///< rows+1 entries, device memory
  const Index* col_idx = nullptr;  ///< nnz entries, device memory (may be null when nnz == 0)
  const Value* values = nullptr;   ///< nnz entries, device memory (may be null when nnz == 0)
};

/// A DeviceCsrView plus the object keeping its arrays alive. Move-only, so that an exclusive
/// owner stays exclusive.
template <class Value, class Index>
class DeviceCsr {
 public:
  using value_type = Value;
  using index_type = Index;
  DeviceCsr() = default;
  /// `owner` null: a plain view (the caller keeps the arrays alive). `exclusive`: no one else
  /// reads or writes the arrays, so a matrix may update the values array in place.
  DeviceCsr(DeviceCsrView<Value, Index> view, std::shared_ptr<const void> owner,
            bool exclusive = false)
      : view_(view), owner_(std::move(owner)), exclusive_(exclusive && owner_ != nullptr) {}
  DeviceCsr(DeviceCsr&&) noexcept = default;
  DeviceCsr& operator=(DeviceCsr&&) noexcept = default;
  DeviceCsr(const DeviceCsr&) = delete;
  DeviceCsr& operator=(const DeviceCsr&) = delete;

  const DeviceCsrView<Value, Index>& view() const { return view_; }
  const std::shared_ptr<const void>& owner() const { return owner_; }
  bool exclusive() const { return exclusive_; }
  std::int64_t rows() const { return view_.rows; }
  std::int64_t cols() const { return view_.cols; }
  std::int64_t nnz() const { return view_.nnz; }

 private:
  DeviceCsrView<Value, Index> view_;
  std::shared_ptr<const void> owner_;
  bool exclusive_ = false;
};

}  // namespace spmat
