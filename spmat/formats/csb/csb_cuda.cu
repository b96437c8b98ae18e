// spmat/formats/csb/csb_cuda.cu — CUDA kernels of CSB-baseline, as the thesis gives them (thread per block, atomics).
// SPDX-License-Identifier: MIT
#include "spmat/cuda/buffer.hpp"
#include "spmat/cuda/device_impl.hpp"
#include "spmat/formats/csb/csb.hpp"
#include "spmat/formats/csb/csb_cuda_common.cuh"

namespace spmat {

template <class Value, class Index>
struct CsbDevice {
  std::int64_t rows = 0, cols = 0, nnz = 0, n_block_cols = 0, n_blocks = 0;
  int beta_log2 = 5;
  cuda::DeviceBuffer<Value> values;
  cuda::DeviceBuffer<std::int32_t> comb;
  cuda::DeviceBuffer<Index> block_offset;

  static CsbDevice upload(const Csb<Value, Index>& s) {
    CsbDevice d;
    d.rows = s.rows;
    d.cols = s.cols;
    d.nnz = static_cast<std::int64_t>(s.values.size());
    d.n_block_cols = s.n_block_cols;
    d.n_blocks = s.n_blocks();
    d.beta_log2 = s.beta_log2;
    d.values = cuda::DeviceBuffer<Value>(s.values, "csb values");
    d.comb = cuda::DeviceBuffer<std::int32_t>(s.comb, "csb comb_row_col_indices");
    d.block_offset = cuda::DeviceBuffer<Index>(s.block_offset, "csb block_offset");
    return d;
  }
};

namespace {

// Thesis Figs. 3.2/3.3: thread i handles row-major block i, one atomicAdd per entry. Corrections:
// bc = i % n_block_cols (the print says % n_block_rows, spec OQ2); 64-bit loop indices; alpha
// applied per product; y was pre-scaled by beta. Transposed swaps the roles of x and y.
template <class Value, class Index, bool Transposed>
__global__ void csb_thesis_kernel(std::int64_t n_blocks, std::int64_t n_block_cols, int d,
                                  const Value* __restrict__ values,
                                  const std::int32_t* __restrict__ comb,
                                  const Index* __restrict__ block_offset,
                                  const Value* __restrict__ x, Value* __restrict__ y, Value alpha) {
  const std::int32_t mask = (1 << d) - 1;
  for (std::int64_t i = std::int64_t{blockIdx.x} * blockDim.x + threadIdx.x; i < n_blocks;
       i += std::int64_t{gridDim.x} * blockDim.x) {
    const std::int64_t row0 = (i / n_block_cols) << d, col0 = (i % n_block_cols) << d;
    const std::int64_t end = block_offset[i + 1];
    for (std::int64_t j = block_offset[i]; j < end; ++j) {
      const std::int32_t c = comb[j];
      const std::int64_t r = row0 + ((c >> d) & mask), cc = col0 + (c & mask);
      if constexpr (Transposed)
        atomicAdd(&y[cc], alpha * (values[j] * x[r]));
      else
        atomicAdd(&y[r], alpha * (values[j] * x[cc]));
    }
  }
}

template <bool Transposed, class Value, class Index>
void launch(const CsbDevice<Value, Index>& d, const Value* x, Value* y, Value alpha, Value beta) {
  csb_cuda::scale(y, Transposed ? d.cols : d.rows, beta);
  if (d.nnz == 0) return;
  constexpr int kBlock = 256;  // untuned; thesis launch configuration not given (spec OQ8)
  csb_thesis_kernel<Value, Index, Transposed><<<csb_cuda::grid_for(d.n_blocks, kBlock), kBlock>>>(
      d.n_blocks, d.n_block_cols, d.beta_log2, d.values.data(), d.comb.data(),
      d.block_offset.data(), x, y, alpha);
  SPMAT_CUDA_CHECK_LAUNCH("csb_thesis_kernel");
}

}  // namespace

// Contract: x, y device arrays (spmv: x cols, y rows; spmv_t: swapped), caller-allocated.
// Not deterministic (float atomics). Reads every stored array once; one atomic per entry.
template <class Value, class Index>
void spmv(const CsbDevice<Value, Index>& d, const Value* x, Value* y, Value alpha, Value beta) {
  launch<false>(d, x, y, alpha, beta);
}
template <class Value, class Index>
void spmv_t(const CsbDevice<Value, Index>& d, const Value* x, Value* y, Value alpha, Value beta) {
  launch<true>(d, x, y, alpha, beta);
}

template <class Value, class Index>
std::unique_ptr<MatrixImpl<Value>> make_cuda_impl(Csb<Value, Index>&& host) {
  return std::make_unique<cuda::DeviceImpl<Csb<Value, Index>, CsbDevice<Value, Index>>>(
      std::move(host));
}

#define SPMAT_INSTANTIATE(V, I) \
  template std::unique_ptr<MatrixImpl<V>> make_cuda_impl(Csb<V, I>&&);
SPMAT_FOR_EACH_TYPE_PAIR(SPMAT_INSTANTIATE)
#undef SPMAT_INSTANTIATE

}  // namespace spmat
