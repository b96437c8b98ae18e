// spmat/formats/ell/ell_device_build.cu — ELLPACK built on the GPU from a device CSR, and its
// value updates.
// SPDX-License-Identifier: MIT
//
// Width = the longest row (one pass over row_ptr, one scalar downloaded), the padding limit
// checked as Ell::build does, then one thread per slot writes entries and padding:
// the arrays equal upload(Ell::build(csr)) byte for byte.
#include "spmat/cuda/device_builder.hpp"
#include "spmat/cuda/device_impl.hpp"
#include "spmat/formats/ell/ell_device.hpp"
#include "spmat/formats/ell/ell_device_build.cuh"

namespace spmat {

/// The arrays of upload built on the GPU from a validated device CSR, refused like Ell::build
/// (padding limit `max_fill`).
template <class Value, class Index>
static EllDevice<Value, Index> build_on_device(const DeviceCsrView<Value, Index>& a,
                                                const FormatOptions& o) {
  const std::int64_t width = ell_build::checked_width(a, "ell", o);
  EllDevice<Value, Index> d;
  d.take_csr_shape(a);
  d.width = width;
  ell_build::allocate_and_fill(a, d);
  return d;
}

template <class Value, class Index>
void update_values(EllDevice<Value, Index>& d, const Value* values, Memory where) {
  ell_build::update_values_by_rows(
      d.row_offsets, d.nnz, values, where,
      [&d] {
        cuda::ScratchBuffer<Index> len(static_cast<std::size_t>(d.rows), "ell update: row lengths");
        ell_build::stored_lengths(d.col_idx.data(), d.rows, d.width, d.pitch, len.data());
        d.row_offsets = ell_build::row_offsets(len.data(), d.rows, "ell update: row offsets");
      },
      [&d](const Value* src) {
        ell_build::update_rows(d.row_offsets.data(), d.rows, d.width, d.pitch, src, d.values.data());
      });
}

SPMAT_DEFINE_DEVICE_BUILDER(Ell, EllDevice)
#define SPMAT_INSTANTIATE(V, I) SPMAT_INSTANTIATE_DEVICE_BUILDER(Ell, EllDevice, V, I)
SPMAT_FOR_EACH_TYPE_PAIR(SPMAT_INSTANTIATE)
#undef SPMAT_INSTANTIATE

}  // namespace spmat
