// spmat/formats/ellr/ellr_device_build.cu — ELLPACK-R built on the GPU from a device CSR, and
// its value updates: the ELL arrays as ell's device builder makes them, plus the row lengths.
// SPDX-License-Identifier: MIT
#include "spmat/cuda/device_builder.hpp"
#include "spmat/cuda/device_impl.hpp"
#include "spmat/formats/ell/ell_device_build.cuh"
#include "spmat/formats/ellr/ellr_device.hpp"

namespace spmat {

/// The arrays of upload built on the GPU from a validated device CSR, refused like Ellr::build.
template <class Value, class Index>
static EllrDevice<Value, Index> build_on_device(const DeviceCsrView<Value, Index>& a,
                                                 const FormatOptions& o) {
  EllrDevice<Value, Index> d;
  d.take_csr_shape(a);
  d.width = ell_build::checked_width(a, "ellr", o);  // refused before anything is allocated
  d.row_len = cuda::DeviceBuffer<Index>(static_cast<std::size_t>(a.rows), "ellr row_len");
  ell_build::csr_row_lengths(a.row_ptr, a.rows, d.row_len.data());
  ell_build::allocate_and_fill(a, d);
  return d;
}

template <class Value, class Index>
void update_values(EllrDevice<Value, Index>& d, const Value* values, Memory where) {
  ell_build::update_values_by_rows(
      d.row_offsets, d.nnz, values, where,
      [&d] {
        d.row_offsets = ell_build::row_offsets(d.row_len.data(), d.rows, "ellr update: row offsets");
      },
      [&d](const Value* src) {
        ell_build::update_rows(d.row_offsets.data(), d.rows, d.width, d.pitch, src, d.values.data());
      });
}

SPMAT_DEFINE_DEVICE_BUILDER(Ellr, EllrDevice)
#define SPMAT_INSTANTIATE(V, I) SPMAT_INSTANTIATE_DEVICE_BUILDER(Ellr, EllrDevice, V, I)
SPMAT_FOR_EACH_TYPE_PAIR(SPMAT_INSTANTIATE)
#undef SPMAT_INSTANTIATE

}  // namespace spmat
