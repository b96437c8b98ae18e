// spmat/formats/csb/csb_cuda.cu — CUDA kernels of CSB-baseline, as the thesis gives them (thread per block, atomics).
// SPDX-License-Identifier: MIT
#include "spmat/core/transposed_kernels.hpp"
#include "spmat/cuda/buffer.hpp"
#include "spmat/cuda/device_impl.hpp"
#include "spmat/cuda/primitives.cuh"
#include "spmat/formats/csb/csb.hpp"

namespace spmat {

template <class Value, class Index>
struct CsbDevice {
  std::int64_t rows = 0, cols = 0, nnz = 0, n_block_rows = 0, n_block_cols = 0, n_stored = 0;
  int beta_log2 = 5;
  bool sparse_grid = false;
  cuda::DeviceBuffer<Value> values;
  cuda::DeviceBuffer<std::int32_t> comb;
  cuda::DeviceBuffer<Index> block_offset, block_row_ptr, block_col;  // the last two: sparse grid

  /// Every device byte held (spmat/cuda/device_impl.hpp).
  std::size_t storage_bytes() const {
    return values.bytes() + comb.bytes() + block_offset.bytes() + block_row_ptr.bytes() +
           block_col.bytes();
  }

  static CsbDevice upload(const Csb<Value, Index>& s) {
    CsbDevice d;
    cuda::copy_shape(d, s.shape());
    d.n_block_rows = s.n_block_rows;
    d.n_block_cols = s.n_block_cols;
    d.n_stored = s.n_stored();
    d.beta_log2 = s.beta_log2;
    d.sparse_grid = s.sparse_grid;
    cuda::upload_arrays(
        "csb",
        std::tuple{cuda::Field{"values", d.values}, cuda::Field{"comb_row_col_indices", d.comb},
                   cuda::Field{"block_offset", d.block_offset}},
        std::tie(s.values, s.comb, s.block_offset));
    if (s.sparse_grid) {
      d.block_row_ptr = cuda::DeviceBuffer<Index>(s.block_row_ptr, "csb block_row_ptr");
      d.block_col = cuda::DeviceBuffer<Index>(s.block_col, "csb block_col");
    }
    return d;
  }
};

namespace {

/// Block row of stored block j on the sparse grid: the last br with block_row_ptr[br] ≤ j
/// (binary search over n_block_rows + 1 entries; empty block rows repeat a value, and the last
/// one wins, which is the row that owns j).
template <class Index>
__device__ std::int64_t block_row_of(const Index* __restrict__ block_row_ptr,
                                     std::int64_t n_block_rows, std::int64_t j) {
  std::int64_t lo = 0, hi = n_block_rows;  // invariant: block_row_ptr[lo] ≤ j < block_row_ptr[hi]
  while (hi - lo > 1) {
    const std::int64_t mid = lo + (hi - lo) / 2;
    if (block_row_ptr[mid] <= j) lo = mid;
    else hi = mid;
  }
  return lo;
}

// Thesis Figs. 3.2/3.3: thread i handles stored block i, one atomicAdd per entry. Corrections:
// bc = i % n_block_cols (the print says % n_block_rows, spec OQ2); 64-bit loop indices; alpha
// applied per product; y was pre-scaled by beta. Transposed swaps the roles of x and y. On the
// sparse grid (block_row_ptr != nullptr) the block's row and column come from the stored ids:
// bc = block_col[i], br by binary search in block_row_ptr.
template <class Value, class Index, bool Transposed>
__global__ void csb_thesis_kernel(std::int64_t n_stored, std::int64_t n_block_rows,
                                  std::int64_t n_block_cols, int d,
                                  const Value* __restrict__ values,
                                  const std::int32_t* __restrict__ comb,
                                  const Index* __restrict__ block_offset,
                                  const Index* __restrict__ block_row_ptr,
                                  const Index* __restrict__ block_col,
                                  const Value* __restrict__ x, Value* __restrict__ y, Value alpha) {
  const std::int32_t mask = (1 << d) - 1;
  for (std::int64_t i = std::int64_t{blockIdx.x} * blockDim.x + threadIdx.x; i < n_stored;
       i += std::int64_t{gridDim.x} * blockDim.x) {
    const std::int64_t begin = block_offset[i], end = block_offset[i + 1];
    if (begin == end) continue;
    const std::int64_t br = block_row_ptr ? block_row_of(block_row_ptr, n_block_rows, i)
                                          : i / n_block_cols;
    const std::int64_t bc = block_row_ptr ? std::int64_t{block_col[i]} : i % n_block_cols;
    const std::int64_t row0 = br << d, col0 = bc << d;
    for (std::int64_t j = begin; j < end; ++j) {
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
  cuda::scale_async(y, Transposed ? d.cols : d.rows, beta);
  if (d.nnz == 0) return;
  constexpr int kBlock = 256;  // untuned; thesis launch configuration not given (spec OQ8)
  cuda::launch_grid_cover("csb_thesis_kernel", csb_thesis_kernel<Value, Index, Transposed>,
                          d.n_stored, kBlock, d.n_stored, d.n_block_rows, d.n_block_cols,
                          d.beta_log2, d.values.data(), d.comb.data(), d.block_offset.data(),
                          d.sparse_grid ? d.block_row_ptr.data() : nullptr,
                          d.sparse_grid ? d.block_col.data() : nullptr, x, y, alpha);
}

}  // namespace

// Contract: x, y device arrays (spmv: x cols, y rows; spmv_t: swapped), caller-allocated.
// Not deterministic (float atomics). Reads every stored array once; one atomic per entry.
SPMAT_DEFINE_KERNELS_BY_DIRECTION(CsbDevice, launch)

SPMAT_DEFINE_CUDA_IMPL(Csb, CsbDevice)

}  // namespace spmat
