// spmat/formats/coo/coo_device_build.cu — COO built on the GPU from a device CSR: row_ptr
// expanded to row indices, column indices and values copied device to device. The arrays equal
// upload(to_coo(csr)) byte for byte (to_coo keeps CSR order).
// SPDX-License-Identifier: MIT
#include "spmat/cuda/device_builder.hpp"
#include "spmat/cuda/device_impl.hpp"
#include "spmat/formats/coo/coo_device.hpp"

namespace spmat {

/// The arrays of upload built on the GPU from a validated device CSR, the kernel option parsed as
/// CooStorage::build does.
template <class Value, class Index>
static CooDevice<Value, Index> build_on_device(const DeviceCsrView<Value, Index>& a,
                                                const FormatOptions& o) {
  CooDevice<Value, Index> d;
  cuda::copy_shape(d, a);
  d.kernel = cuda::parsed_options<CooStorage<Value, Index>>(o).kernel;
  const auto n = static_cast<std::size_t>(a.nnz);
  d.row_idx = cuda::DeviceBuffer<Index>(n, "coo row_idx");
  d.col_idx = cuda::DeviceBuffer<Index>(n, "coo col_idx");
  d.values = cuda::DeviceBuffer<Value>(n, "coo values");
  cuda::expand_rows(a.row_ptr, a.rows, a.nnz, d.row_idx.data());
  cuda::copy_device(d.col_idx.data(), a.col_idx, n);
  cuda::copy_device(d.values.data(), a.values, n);
  d.allocate_workspace();
  return d;
}

template <class Value, class Index>
void update_values(CooDevice<Value, Index>& d, const Value* values, Memory where) {
  if (d.nnz == 0) return;
  cuda::copy_values(d.values.data(), values, d.values.size(), where);
}

SPMAT_DEFINE_DEVICE_BUILDER(CooStorage, CooDevice)
#define SPMAT_INSTANTIATE(V, I) SPMAT_INSTANTIATE_DEVICE_BUILDER(CooStorage, CooDevice, V, I)
SPMAT_FOR_EACH_TYPE_PAIR(SPMAT_INSTANTIATE)
#undef SPMAT_INSTANTIATE

}  // namespace spmat
