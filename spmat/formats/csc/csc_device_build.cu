// spmat/formats/csc/csc_device_build.cu — CSC built on the GPU from a device CSR, and its value
// updates.
// SPDX-License-Identifier: MIT
//
// The transpose of the host builder (to_csc: a stable counting sort of the entries by column)
// done by cuda::transpose_into (a stable CUB radix sort of the CSR positions by column): within
// a column the entries keep CSR order, i.e. ascending rows, so the arrays equal
// upload(to_csc(csr)) byte for byte.
#include "spmat/cuda/device_builder.hpp"
#include "spmat/cuda/device_impl.hpp"
#include "spmat/formats/csc/csc_device.hpp"

namespace spmat {

/// The arrays of upload built on the GPU from a validated device CSR; CSC takes no options.
template <class Value, class Index>
static CscDevice<Value, Index> build_on_device(const DeviceCsrView<Value, Index>& a,
                                                const FormatOptions&) {
  CscDevice<Value, Index> d;
  cuda::copy_shape(d, a);
  d.set_lanes();
  const auto n = static_cast<std::size_t>(a.nnz);
  d.col_ptr = cuda::DeviceBuffer<Index>(static_cast<std::size_t>(a.cols) + 1, "csc col_ptr");
  d.row_idx = cuda::DeviceBuffer<Index>(n, "csc row_idx");
  d.values = cuda::DeviceBuffer<Value>(n, "csc values");
  cuda::transpose_into(a, d.col_ptr.data(), d.row_idx.data(), d.values.data());
  return d;
}

template <class Value, class Index>
void update_values(CscDevice<Value, Index>& d, const Value* values, Memory where) {
  cuda::update_mapped_values(d, values, where, [&d] {
    // Sorting the CSC positions by row (stably) lists them in CSR order, as within a row they
    // ascend by column; the inverse of that order is the CSR position of each CSC entry.
    const auto n = static_cast<std::size_t>(d.nnz);
    cuda::DeviceBuffer<Index> map(n, "csc value map");
    cuda::ScratchBuffer<Index> rows_sorted(n, "csc value map: sorted rows");
    cuda::ScratchBuffer<Index> csc_position(n, "csc value map: CSC position of each CSR entry");
    cuda::sorted_positions(d.row_idx.data(), d.nnz, d.rows, rows_sorted.data(), csc_position.data());
    cuda::invert_permutation(csc_position.data(), d.nnz, map.data());
    cuda::synchronize_stream();
    return map;
  });
}

SPMAT_DEFINE_DEVICE_BUILDER(CscStorage, CscDevice)
#define SPMAT_INSTANTIATE(V, I) SPMAT_INSTANTIATE_DEVICE_BUILDER(CscStorage, CscDevice, V, I)
SPMAT_FOR_EACH_TYPE_PAIR(SPMAT_INSTANTIATE)
#undef SPMAT_INSTANTIATE

}  // namespace spmat
