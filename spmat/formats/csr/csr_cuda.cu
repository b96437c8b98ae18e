// spmat/formats/csr/csr_cuda.cu — CUDA kernels of CSR (scalar for now; vector/merge to follow).
// SPDX-License-Identifier: MIT
#include "spmat/cuda/buffer.hpp"
#include "spmat/cuda/device_impl.hpp"
#include "spmat/formats/csr/csr.hpp"

namespace spmat {

template <class Value, class Index>
struct CsrDevice {
  Index rows = 0, cols = 0;
  CsrKernel kernel = CsrKernel::automatic;
  cuda::DeviceBuffer<Index> row_ptr, col_idx;
  cuda::DeviceBuffer<Value> values;

  static CsrDevice upload(const CsrStorage<Value, Index>& s) {
    CsrDevice d;
    d.rows = s.a.rows;
    d.cols = s.a.cols;
    d.kernel = s.kernel;
    d.row_ptr = cuda::DeviceBuffer<Index>(s.a.row_ptr, "csr row_ptr");
    d.col_idx = cuda::DeviceBuffer<Index>(s.a.col_idx, "csr col_idx");
    d.values = cuda::DeviceBuffer<Value>(s.a.values, "csr values");
    return d;
  }
};

namespace {

template <class Value, class Index>
__global__ void csr_scalar_kernel(Index rows, const Index* __restrict__ row_ptr,
                                  const Index* __restrict__ col_idx,
                                  const Value* __restrict__ values, const Value* __restrict__ x,
                                  Value* __restrict__ y, Value alpha, Value beta) {
  const Index r = static_cast<Index>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (r >= rows) return;
  Value s = 0;
  for (Index k = row_ptr[r]; k < row_ptr[r + 1]; ++k) s += values[k] * x[col_idx[k]];
  y[r] = beta == Value(0) ? alpha * s : alpha * s + beta * y[r];
}

template <class Value, class Index>
__global__ void scale_kernel(Index n, Value* y, Value beta) {
  const Index i = static_cast<Index>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) y[i] = beta == Value(0) ? Value(0) : beta * y[i];
}

template <class Value, class Index>
__global__ void csr_scalar_t_kernel(Index rows, const Index* __restrict__ row_ptr,
                                    const Index* __restrict__ col_idx,
                                    const Value* __restrict__ values, const Value* __restrict__ x,
                                    Value* __restrict__ y, Value alpha) {
  const Index r = static_cast<Index>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (r >= rows) return;
  const Value xr = alpha * x[r];
  for (Index k = row_ptr[r]; k < row_ptr[r + 1]; ++k) atomicAdd(&y[col_idx[k]], values[k] * xr);
}

constexpr int kBlock = 256;
template <class Index>
unsigned blocks_for(Index n) {
  return static_cast<unsigned>((static_cast<std::int64_t>(n) + kBlock - 1) / kBlock);
}

}  // namespace

template <class Value, class Index>
void spmv(const CsrDevice<Value, Index>& d, const Value* x, Value* y, Value alpha, Value beta) {
  if (d.rows == 0) return;
  csr_scalar_kernel<<<blocks_for(d.rows), kBlock>>>(d.rows, d.row_ptr.data(), d.col_idx.data(),
                                                     d.values.data(), x, y, alpha, beta);
  SPMAT_CUDA_CHECK_LAUNCH("csr_scalar_kernel");
}

template <class Value, class Index>
void spmv_t(const CsrDevice<Value, Index>& d, const Value* x, Value* y, Value alpha, Value beta) {
  if (d.cols > 0) {
    scale_kernel<<<blocks_for(d.cols), kBlock>>>(d.cols, y, beta);
    SPMAT_CUDA_CHECK_LAUNCH("scale_kernel");
  }
  if (d.rows == 0) return;
  csr_scalar_t_kernel<<<blocks_for(d.rows), kBlock>>>(d.rows, d.row_ptr.data(), d.col_idx.data(),
                                                       d.values.data(), x, y, alpha);
  SPMAT_CUDA_CHECK_LAUNCH("csr_scalar_t_kernel");
}

template <class Value, class Index>
std::unique_ptr<MatrixImpl<Value>> make_cuda_impl(CsrStorage<Value, Index>&& host) {
  return std::make_unique<cuda::DeviceImpl<CsrStorage<Value, Index>, CsrDevice<Value, Index>>>(
      std::move(host));
}

#define SPMAT_INSTANTIATE(V, I) \
  template std::unique_ptr<MatrixImpl<V>> make_cuda_impl(CsrStorage<V, I>&&);
SPMAT_FOR_EACH_TYPE_PAIR(SPMAT_INSTANTIATE)
#undef SPMAT_INSTANTIATE

}  // namespace spmat
