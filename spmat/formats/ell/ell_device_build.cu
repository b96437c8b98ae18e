// spmat/formats/ell/ell_device_build.cu — ELLPACK built on the GPU from a device CSR, and its
// value updates.
// SPDX-License-Identifier: MIT
//
// Width = the longest row (a CUB reduction over the row lengths, one scalar downloaded), the
// padding limit checked as Ell::build does, then one thread per slot writes entries and padding:
// the arrays equal upload(Ell::build(csr)) byte for byte.
#include "spmat/cuda/device_impl.hpp"
#include "spmat/formats/ell/ell_device.hpp"
#include "spmat/formats/ell/ell_device_build.cuh"

namespace spmat {

template <class Value, class Index>
EllDevice<Value, Index> EllDevice<Value, Index>::from_csr(const DeviceCsrView<Value, Index>& a,
                                                          const FormatOptions& o) {
  std::int64_t width = 0;
  {
    cuda::DeviceBuffer<Index> len(static_cast<std::size_t>(a.rows), "ell build: row lengths");
    ell_build::csr_row_lengths(a.row_ptr, a.rows, len.data());
    width = ell_build::checked_width(a, len.data(), "ell", o);
  }
  EllDevice d;
  d.rows = a.rows;
  d.cols = a.cols;
  d.width = width;
  d.pitch = ell_pitch(a.rows);
  d.nnz = a.nnz;
  ell_build::allocate_and_fill(a, d.width, d.pitch, d.col_idx, d.values, "ell col_idx",
                               "ell values");
  return d;
}

template <class Value, class Index>
std::unique_ptr<MatrixImpl<Value>> build_cuda_from_device(std::type_identity<Ell<Value, Index>>,
                                                          const DeviceCsr<Value, Index>& a,
                                                          const FormatOptions& o) {
  return make_cuda_impl(EllDevice<Value, Index>::from_csr(a.view(), o));
}

template <class Value, class Index>
void update_values(EllDevice<Value, Index>& d, const Value* values, Memory where) {
  if (d.nnz == 0) return;
  if (d.value_map.size() == 0) {
    cuda::DeviceBuffer<Index> len(static_cast<std::size_t>(d.rows), "ell value map: row lengths");
    ell_build::stored_lengths(d.col_idx.data(), d.rows, d.width, d.pitch, len.data());
    d.value_map = ell_build::value_map(len.data(), d.rows, d.width, d.pitch, d.nnz,
                                       "ell value map", "ell value map: offsets");
  }
  cuda::scatter_new_values(d.values.data(), d.value_map.data(), values, d.nnz, where);
}

#define SPMAT_INSTANTIATE(V, I)                                                                   \
  template EllDevice<V, I> EllDevice<V, I>::from_csr(const DeviceCsrView<V, I>&,                  \
                                                     const FormatOptions&);                       \
  template std::unique_ptr<MatrixImpl<V>> build_cuda_from_device(                                 \
      std::type_identity<Ell<V, I>>, const DeviceCsr<V, I>&, const FormatOptions&);               \
  template void update_values(EllDevice<V, I>&, const V*, Memory);
SPMAT_FOR_EACH_TYPE_PAIR(SPMAT_INSTANTIATE)
#undef SPMAT_INSTANTIATE

}  // namespace spmat
