// spmat/formats/ellr/ellr_device_build.cu — ELLPACK-R built on the GPU from a device CSR, and
// its value updates: the ELL arrays as ell's device builder makes them, plus the row lengths.
// SPDX-License-Identifier: MIT
#include "spmat/cuda/device_impl.hpp"
#include "spmat/formats/ell/ell_device_build.cuh"
#include "spmat/formats/ellr/ellr_device.hpp"

namespace spmat {

template <class Value, class Index>
EllrDevice<Value, Index> EllrDevice<Value, Index>::from_csr(const DeviceCsrView<Value, Index>& a,
                                                            const FormatOptions& o) {
  EllrDevice d;
  d.rows = a.rows;
  d.cols = a.cols;
  d.pitch = ell_pitch(a.rows);
  d.nnz = a.nnz;
  d.row_len = cuda::DeviceBuffer<Index>(static_cast<std::size_t>(a.rows), "ellr row_len");
  ell_build::csr_row_lengths(a.row_ptr, a.rows, d.row_len.data());
  d.width = ell_build::checked_width(a, d.row_len.data(), "ellr", o);
  ell_build::allocate_and_fill(a, d.width, d.pitch, d.col_idx, d.values, "ellr col_idx",
                               "ellr values");
  return d;
}

template <class Value, class Index>
std::unique_ptr<MatrixImpl<Value>> build_cuda_from_device(std::type_identity<Ellr<Value, Index>>,
                                                          const DeviceCsr<Value, Index>& a,
                                                          const FormatOptions& o) {
  return make_cuda_impl(EllrDevice<Value, Index>::from_csr(a.view(), o));
}

template <class Value, class Index>
void update_values(EllrDevice<Value, Index>& d, const Value* values, Memory where) {
  if (d.nnz == 0) return;
  if (d.value_map.size() == 0) {
    d.value_map = ell_build::value_map(d.row_len.data(), d.rows, d.width, d.pitch, d.nnz,
                                       "ellr value map", "ellr value map: offsets");
  }
  cuda::scatter_new_values(d.values.data(), d.value_map.data(), values, d.nnz, where);
}

#define SPMAT_INSTANTIATE(V, I)                                                                   \
  template EllrDevice<V, I> EllrDevice<V, I>::from_csr(const DeviceCsrView<V, I>&,                \
                                                       const FormatOptions&);                     \
  template std::unique_ptr<MatrixImpl<V>> build_cuda_from_device(                                 \
      std::type_identity<Ellr<V, I>>, const DeviceCsr<V, I>&, const FormatOptions&);              \
  template void update_values(EllrDevice<V, I>&, const V*, Memory);
SPMAT_FOR_EACH_TYPE_PAIR(SPMAT_INSTANTIATE)
#undef SPMAT_INSTANTIATE

}  // namespace spmat
