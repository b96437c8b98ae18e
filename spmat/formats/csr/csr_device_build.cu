// spmat/formats/csr/csr_device_build.cu — CSR from a CSR in device memory: the arrays are
// adopted as they are (no copy; narrow columns, csr_device.hpp, are a 32-bit copy made on the
// device), and the kernel plan is made from row_ptr alone.
// SPDX-License-Identifier: MIT
//
// The plan (csr_plan.hpp: lanes per row, row bins, long-row chunks, merge-path tiles) is the
// host planner's. Where it holds no row lists (most matrices: no rows to bin or chunk, not the
// merge kernel), the longest row decides it and comes from one device reduction; otherwise the
// planner runs on a downloaded copy of row_ptr ((rows+1) indices; no column index or value
// leaves the device). Both ways run the host path's code, so device and host builds stay
// bit-identical, plan arrays included.
#include <cuda_runtime.h>

#include "spmat/cuda/device_builder.hpp"
#include "spmat/cuda/device_impl.hpp"
#include "spmat/cuda/primitives.cuh"
#include "spmat/formats/csr/csr_device.hpp"
#include "spmat/formats/csr/csr_plan.hpp"

namespace spmat {

namespace {

constexpr int kMaxLenBlock = 256;

/// out[0] = max(out[0], the longest of rows [0, rows)): a warp shuffle maximum, then one
/// atomicMax per warp. out[0] starts at 0.
template <class Index>
__global__ void __launch_bounds__(kMaxLenBlock)
    max_row_length_kernel(const Index* __restrict__ row_ptr, std::int64_t rows,
                          unsigned long long* __restrict__ out) {
  unsigned long long m = 0;
  for (std::int64_t r = cuda::global_thread_id(); r < rows; r += cuda::grid_thread_count())
    m = max(m, static_cast<unsigned long long>(row_ptr[r + 1] - row_ptr[r]));
  for (int o = 16; o > 0; o /= 2) m = max(m, __shfl_down_sync(0xffffffffu, m, o));
  if ((threadIdx.x & 31) == 0 && m > 0) atomicMax(out, m);
}

/// The longest row of a device CSR (rows > 0) in one pass over row_ptr, without the row-length
/// array and reduction workspace whose allocations would cost more than the pass itself.
template <class Index>
std::int64_t max_row_length(const Index* row_ptr, std::int64_t rows) {
  cuda::DeviceBuffer<unsigned long long> out(1, "csr build: longest row");
  out.fill_bytes(0);
  max_row_length_kernel<<<cuda::grid_for(rows, kMaxLenBlock), kMaxLenBlock, 0, cuda::stream()>>>(
      row_ptr, rows, out.data());
  SPMAT_CUDA_CHECK_LAUNCH("max_row_length_kernel");
  return static_cast<std::int64_t>(out.download()[0]);  // waits for the stream
}

/// out[k] = in[k] narrowed to 32 bits, k < n (every column < 2^31: csr_narrow_columns).
template <class Index>
__global__ void __launch_bounds__(kMaxLenBlock)
    narrow_columns_kernel(const Index* __restrict__ in, std::int64_t n,
                          std::int32_t* __restrict__ out) {
  for (std::int64_t k = cuda::global_thread_id(); k < n; k += cuda::grid_thread_count())
    out[k] = static_cast<std::int32_t>(in[k]);
}

}  // namespace

template <class Value, class Index>
CsrDevice<Value, Index> CsrDevice<Value, Index>::adopt(const DeviceCsr<Value, Index>& a,
                                                       const CsrStorage<Value, Index>& options) {
  const DeviceCsrView<Value, Index>& v = a.view();
  CsrDevice d;
  cuda::copy_shape(d, v);
  d.narrow = csr_narrow_columns<Index>(d.cols, options.narrow_cols);  // before any allocation
  const auto n = static_cast<std::size_t>(v.nnz);
  d.row_ptr = cuda::DeviceArray<Index>::borrow(v.row_ptr, static_cast<std::size_t>(v.rows) + 1,
                                               a.owner(), false);
  if constexpr (sizeof(Index) > sizeof(std::int32_t)) {
    if (d.narrow) {
      // A copy of the columns, 32-bit, queued on the stream; the plan below waits for it
      // (download of the longest row or of row_ptr) whenever there are nonzeros.
      d.col_idx32 = cuda::DeviceBuffer<std::int32_t>(n, "csr col_idx (32-bit)");
      if (n > 0)
        cuda::launch_grid_for("narrow_columns_kernel", narrow_columns_kernel<Index>, v.nnz,
                              kMaxLenBlock, v.col_idx, v.nnz, d.col_idx32.data());
    }
  }
  if (!d.narrow) d.col_idx = cuda::DeviceArray<Index>::borrow(v.col_idx, n, a.owner(), false);
  d.values = cuda::DeviceArray<Value>::borrow(v.values, n, a.owner(), a.exclusive());
  if (options.kernel != CsrKernel::merge && v.rows > 0) {
    // Most matrices need no row lists (no rows to bin or chunk): then the longest row decides
    // the plan, found by one reduction on the device, and row_ptr stays where it is.
    const std::int64_t max_len = max_row_length(v.row_ptr, v.rows);
    if (const auto p = csr_plan::plan_rows_without_lists(v.rows, v.nnz, max_len, options.kernel,
                                                         options.threads_per_row, options.bins)) {
      d.apply_row_plan(*p, options);
      return d;
    }
  }
  const std::vector<Index> host_row_ptr = d.row_ptr.download();
  d.set_plan(host_row_ptr.data(), options);
  return d;
}

template <class Value, class Index>
std::unique_ptr<MatrixImpl<Value>> build_cuda_from_device(std::type_identity<CsrStorage<Value, Index>>,
                                                          const DeviceCsr<Value, Index>& a,
                                                          const FormatOptions& o) {
  const auto options = cuda::parsed_options<CsrStorage<Value, Index>>(o);
  return make_cuda_impl(CsrDevice<Value, Index>::adopt(a, options));
}

template <class Value, class Index>
std::unique_ptr<MatrixImpl<Value>> build_cuda_from_host(std::type_identity<CsrStorage<Value, Index>>,
                                                        const Csr<Value, Index>& a,
                                                        const FormatOptions& o) {
  const auto options = cuda::parsed_options<CsrStorage<Value, Index>>(o);
  return make_cuda_impl(CsrDevice<Value, Index>::upload(a, options));
}

template <class Value, class Index>
void update_values(CsrDevice<Value, Index>& d, const Value* values, Memory where) {
  const std::size_t n = d.values.size();
  if (n == 0) return;
  cuda::copy_values(d.values.overwrite("csr values (updated)"), values, n, where);
}

template <class Value, class Index>
void upload_values(CsrDevice<Value, Index>& d, const CsrStorage<Value, Index>& s) {
  update_values(d, s.a.values.data(), Memory::host);
}

template <class Value, class Index>
std::vector<StoredArray> stored_arrays(const CsrDevice<Value, Index>& d) {
  std::vector<StoredArray> v;
  v.push_back(cuda::stored("row_ptr", d.row_ptr.data(), d.row_ptr.size()));
  // The columns held (Index or 32-bit), by the one name.
  with_col_idx(d, [&](const auto* cols) {
    v.push_back(cuda::stored("col_idx", cols, static_cast<std::size_t>(d.nnz)));
  });
  v.push_back(cuda::stored("values", d.values.data(), d.values.size()));
  v.push_back(cuda::stored_scalars(
      "plan", std::vector<std::int64_t>{static_cast<std::int64_t>(d.kernel), d.tpr, d.short_max,
                                        d.n_medium, d.n_long, d.n_chunks, d.n_tiles,
                                        d.n_long_fix}));
  cuda::append_stored(v, CsrDevice<Value, Index>::plan_arrays(d));
  return v;
}

#define SPMAT_INSTANTIATE(V, I)                                                                  \
  template CsrDevice<V, I> CsrDevice<V, I>::adopt(const DeviceCsr<V, I>&, const CsrStorage<V, I>&); \
  template std::unique_ptr<MatrixImpl<V>> build_cuda_from_device(                                \
      std::type_identity<CsrStorage<V, I>>, const DeviceCsr<V, I>&, const FormatOptions&);       \
  template std::unique_ptr<MatrixImpl<V>> build_cuda_from_host(                                  \
      std::type_identity<CsrStorage<V, I>>, const Csr<V, I>&, const FormatOptions&);             \
  template void update_values(CsrDevice<V, I>&, const V*, Memory);                               \
  template void upload_values(CsrDevice<V, I>&, const CsrStorage<V, I>&);                        \
  template std::vector<StoredArray> stored_arrays(const CsrDevice<V, I>&);
SPMAT_FOR_EACH_TYPE_PAIR(SPMAT_INSTANTIATE)
#undef SPMAT_INSTANTIATE

}  // namespace spmat
