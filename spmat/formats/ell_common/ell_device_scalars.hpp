// spmat/formats/ell_common/ell_device_scalars.hpp — the scalars of an ELL block (rows, cols,
// width, pitch, stored entries) copied between the host Ell and the int64 fields of the device
// storages that hold one (ell, ellr, hyb): upload reads them, download writes them back.
// SPDX-License-Identifier: MIT
#pragma once
#include <cstdint>
#include <tuple>

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

}  // namespace spmat
