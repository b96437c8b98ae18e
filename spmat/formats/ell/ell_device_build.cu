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
  cuda::update_mapped_values(d, values, where, [&d] {
    cuda::ScratchBuffer<Index> len(static_cast<std::size_t>(d.rows), "ell value map: row lengths");
    ell_build::stored_lengths(d.col_idx.data(), d.rows, d.width, d.pitch, len.data());
    return ell_build::value_map(len.data(), d.rows, d.width, d.pitch, d.nnz, "ell value map",
                                "ell value map: offsets");
  });
}

SPMAT_DEFINE_DEVICE_BUILDER(Ell, EllDevice)
#define SPMAT_INSTANTIATE(V, I) SPMAT_INSTANTIATE_DEVICE_BUILDER(Ell, EllDevice, V, I)
SPMAT_FOR_EACH_TYPE_PAIR(SPMAT_INSTANTIATE)
#undef SPMAT_INSTANTIATE

}  // namespace spmat
