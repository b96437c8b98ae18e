// spmat/formats/ell_common/ell_device_scalars.hpp — the scalars of an ELL block (rows, cols,
// width, pitch, stored entries) copied between the host Ell and the int64 fields of the device
// storages that hold one (ell, ellr, hyb): upload reads them, download writes them back.
// EllDeviceScalars holds them for the storages that are one ELL block (ell, ellr).
// SPDX-License-Identifier: MIT
#pragma once
#include <cstdint>
#include <tuple>
#include <vector>

#include "spmat/formats/ell/ell.hpp"

namespace spmat {

/// {rows, cols, width, pitch, nnz} of `e`, for `std::tie(d.rows, ...) = ell_scalars(e)`.
template <class Value, class Index>
std::tuple<std::int64_t, std::int64_t, std::int64_t, std::int64_t, std::int64_t> ell_scalars(
    const Ell<Value, Index>& e) {
  return {e.rows, e.cols, e.width, e.pitch, e.nnz};
}

/// The inverse of ell_scalars: sets the scalars of `e` (its arrays are left alone).
template <class Value, class Index>
void set_ell_scalars(Ell<Value, Index>& e, std::int64_t rows, std::int64_t cols,
                     std::int64_t width, std::int64_t pitch, std::int64_t nnz) {
  e.rows = static_cast<Index>(rows);
  e.cols = static_cast<Index>(cols);
  e.nnz = static_cast<Index>(nnz);
  e.width = static_cast<Index>(width);
  e.pitch = pitch;
}

/// The scalars of a device storage that is one ELL block plus arrays of its own (ell, ellr):
/// what such a storage lists besides its arrays (spmat/cuda/array_list.hpp) and copies from and
/// to the host Ell on upload and download.
struct EllDeviceScalars {
  std::int64_t rows = 0, cols = 0, width = 0, pitch = 0;  ///< width: slots per row
  std::int64_t nnz = 0;                                   ///< stored (non-padding) entries

  static constexpr const char* scalar_names = "rows, cols, width, pitch, nnz";
  std::vector<std::int64_t> scalars() const { return {rows, cols, width, pitch, nnz}; }

  template <class Value, class Index>
  void take_ell_scalars(const Ell<Value, Index>& e) {
    std::tie(rows, cols, width, pitch, nnz) = ell_scalars(e);
  }
  template <class Value, class Index>
  void give_ell_scalars(Ell<Value, Index>& e) const {
    set_ell_scalars(e, rows, cols, width, pitch, nnz);
  }
  /// The scalars of the ELL block a device builder makes from the CSR view `a` (its width is
  /// set apart, once the row lengths are known).
  template <class CsrView>
  void take_csr_shape(const CsrView& a) {
    rows = a.rows;
    cols = a.cols;
    pitch = ell_pitch(a.rows);
    nnz = a.nnz;
  }
};

}  // namespace spmat
