// spmat/formats/bccoo/bccoo_cuda.cu — CUDA kernels of bccoo-gpu: one thread block per chunk, the
// value table in shared memory, a warp segmented reduction per 32 consecutive entries.
// SPDX-License-Identifier: MIT
//
// Kernel contract (spmv): row/column/format: nb, offset: nb+1 (int64), data: offset[nb] bytes,
// lut: 256 values, x: cols, y: rows; all device memory (matrix arrays allocated by upload, x and
// y by the caller). y is first scaled by beta (beta == 0 writes zeros without reading y, so NaN
// poison never leaks); then block h decodes chunk h (grid-stride over chunks): in each step the
// 256 threads hold 256 consecutive entries (element e = step·256 + tid, coalesced loads of the
// 1/2/4/8-byte sub-arrays), each warp sums its 32 products per row with
// cuda::warp_segmented_sum, and the last lane of each row run adds alpha·sum to y[row] with
// atomicAdd. Canonical input: no duplicates; explicit zeros multiplied (0·Inf = NaN propagates);
// empty rows keep beta·y. NOT deterministic (atomic order). Offsets and indices are 64-bit in
// the kernel. Bytes: storage_bytes + x (gathered) + y (read-modify-write where beta != 0).
// spmv_t: y (cols) scaled by beta, then every entry adds alpha·v·x[row] to y[col] (atomicAdd).
#include <cstdint>

#include "spmat/cuda/buffer.hpp"
#include "spmat/cuda/device_impl.hpp"
#include "spmat/cuda/primitives.cuh"
#include "spmat/formats/bccoo/bccoo.hpp"

namespace spmat {

namespace bccoo_gpu {
/// Threads per block: 256 (spec §8 Q8: 256 threads × 4 steps for b = 1024). Not tuned yet: the
/// lead's H100/H200 runs will decide (measured results: pending in bccoo.md).
constexpr int kBlock = 256;
}  // namespace bccoo_gpu

template <class Value, class Index>
struct BccooGpuDevice {
  std::int64_t rows = 0, cols = 0, nnz = 0, chunk = 1024, nb = 0;
  cuda::DeviceBuffer<Value> lut;
  cuda::DeviceBuffer<Index> row, column;
  cuda::DeviceBuffer<std::uint8_t> format;
  cuda::DeviceBuffer<std::int64_t> offset;
  cuda::DeviceBuffer<std::uint8_t> data;

  static BccooGpuDevice upload(const BccooGpu<Value, Index>& s) {
    BccooGpuDevice d;
    d.rows = s.rows;
    d.cols = s.cols;
    d.nnz = s.nnz;
    d.chunk = s.chunk;
    d.nb = s.chunks();
    d.lut = cuda::DeviceBuffer<Value>(s.lut, "bccoo-gpu value table");
    d.row = cuda::DeviceBuffer<Index>(s.row, "bccoo-gpu chunk rows");
    d.column = cuda::DeviceBuffer<Index>(s.column, "bccoo-gpu chunk columns");
    d.format = cuda::DeviceBuffer<std::uint8_t>(s.format, "bccoo-gpu chunk formats");
    d.offset = cuda::DeviceBuffer<std::int64_t>(s.offset, "bccoo-gpu chunk offsets");
    d.data = cuda::DeviceBuffer<std::uint8_t>(s.data, "bccoo-gpu chunk data");
    return d;
  }
};

namespace {

/// Unsigned of w ∈ {1,2,4,8} bytes, element e of a sub-array starting 8-byte aligned (so the
/// typed load is aligned). `w` is uniform over the block: no divergence.
__device__ __forceinline__ std::uint64_t load_width(const std::uint8_t* p, std::int64_t e, int w) {
  switch (w) {
    case 1: return cuda::ldg(p + e);
    case 2: return cuda::ldg(reinterpret_cast<const std::uint16_t*>(p) + e);
    case 4: return cuda::ldg(reinterpret_cast<const std::uint32_t*>(p) + e);
    default: return cuda::ldg(reinterpret_cast<const unsigned long long*>(p) + e);
  }
}

/// Decodes entry e of a chunk: row, column, value.
template <class Value>
__device__ __forceinline__ void decode_entry(const std::uint8_t* base, const bccoo::GpuChunk& g,
                                             std::int64_t e, std::int64_t r0, std::int64_t c0,
                                             const Value* s_lut, std::int64_t* r, std::int64_t* c,
                                             Value* v) {
  *r = r0 + static_cast<std::int64_t>(load_width(base + g.row_at, e, g.wr));
  *c = c0 + static_cast<std::int64_t>(load_width(base + g.col_at, e, g.wc));
  *v = g.lut ? s_lut[cuda::ldg(base + g.val_at + e)]
             : cuda::ldg(reinterpret_cast<const Value*>(base + g.val_at) + e);
}

template <class Value, class Index>
__global__ void __launch_bounds__(bccoo_gpu::kBlock)
    bccoo_gpu_spmv_kernel(std::int64_t nb, std::int64_t nnz, std::int64_t chunk,
                          const Index* __restrict__ row, const Index* __restrict__ column,
                          const std::uint8_t* __restrict__ format,
                          const std::int64_t* __restrict__ offset,
                          const std::uint8_t* __restrict__ data, const Value* __restrict__ lut,
                          const Value* __restrict__ x, Value* __restrict__ y, Value alpha) {
  __shared__ Value s_lut[bccoo::kLutSize];
  for (int i = threadIdx.x; i < bccoo::kLutSize; i += blockDim.x) s_lut[i] = lut[i];
  __syncthreads();
  for (std::int64_t h = blockIdx.x; h < nb; h += gridDim.x) {  // block-uniform loop
    const std::int64_t begin = h * chunk;
    const std::int64_t len = min(chunk, nnz - begin);
    const bccoo::GpuChunk g = bccoo::gpu_chunk(format[h], len, sizeof(Value));
    const std::uint8_t* base = data + offset[h];
    const std::int64_t r0 = row[h], c0 = column[h];
    for (std::int64_t step = 0; step < len; step += blockDim.x) {  // block-uniform
      const std::int64_t e = step + threadIdx.x;
      std::int64_t r = -1, c = 0;  // lanes past the end: key −1 (never equal to a row)
      Value p = 0;
      if (e < len) {
        Value v;
        decode_entry(base, g, e, r0, c0, s_lut, &r, &c, &v);
        p = v * cuda::ldg(x + c);
      }
      bool tail = false;
      const Value s = cuda::warp_segmented_sum(r, p, &tail);
      if (e < len && tail) atomicAdd(y + r, alpha * s);
    }
  }
}

template <class Value, class Index>
__global__ void __launch_bounds__(bccoo_gpu::kBlock)
    bccoo_gpu_spmv_t_kernel(std::int64_t nb, std::int64_t nnz, std::int64_t chunk,
                            const Index* __restrict__ row, const Index* __restrict__ column,
                            const std::uint8_t* __restrict__ format,
                            const std::int64_t* __restrict__ offset,
                            const std::uint8_t* __restrict__ data, const Value* __restrict__ lut,
                            const Value* __restrict__ x, Value* __restrict__ y, Value alpha) {
  __shared__ Value s_lut[bccoo::kLutSize];
  for (int i = threadIdx.x; i < bccoo::kLutSize; i += blockDim.x) s_lut[i] = lut[i];
  __syncthreads();
  for (std::int64_t h = blockIdx.x; h < nb; h += gridDim.x) {
    const std::int64_t begin = h * chunk;
    const std::int64_t len = min(chunk, nnz - begin);
    const bccoo::GpuChunk g = bccoo::gpu_chunk(format[h], len, sizeof(Value));
    const std::uint8_t* base = data + offset[h];
    const std::int64_t r0 = row[h], c0 = column[h];
    for (std::int64_t e = threadIdx.x; e < len; e += blockDim.x) {
      std::int64_t r, c;
      Value v;
      decode_entry(base, g, e, r0, c0, s_lut, &r, &c, &v);
      atomicAdd(y + c, alpha * v * cuda::ldg(x + r));
    }
  }
}

/// Blocks for nb chunks: one per chunk, capped at 4 waves of resident blocks (grid-stride).
inline unsigned chunk_grid(std::int64_t nb) {
  return cuda::grid_for(nb * bccoo_gpu::kBlock, bccoo_gpu::kBlock);
}

}  // namespace

/// y = alpha*A*x + beta*y. Example: the 4×4 matrix of bccoo.hpp with x = {1,1,1,1}, alpha = 1,
/// beta = 0 gives y = {3, 0, 12, 6}.
template <class Value, class Index>
void spmv(const BccooGpuDevice<Value, Index>& d, const Value* x, Value* y, Value alpha,
          Value beta) {
  cuda::scale_async(y, d.rows, beta);
  if (d.nb == 0) return;
  bccoo_gpu_spmv_kernel<<<chunk_grid(d.nb), bccoo_gpu::kBlock>>>(
      d.nb, d.nnz, d.chunk, d.row.data(), d.column.data(), d.format.data(), d.offset.data(),
      d.data.data(), d.lut.data(), x, y, alpha);
  SPMAT_CUDA_CHECK_LAUNCH("bccoo_gpu_spmv_kernel");
}

/// y = alpha*Aᵀ*x + beta*y (x: rows, y: cols). NOT deterministic (atomic scatter).
template <class Value, class Index>
void spmv_t(const BccooGpuDevice<Value, Index>& d, const Value* x, Value* y, Value alpha,
            Value beta) {
  cuda::scale_async(y, d.cols, beta);
  if (d.nb == 0) return;
  bccoo_gpu_spmv_t_kernel<<<chunk_grid(d.nb), bccoo_gpu::kBlock>>>(
      d.nb, d.nnz, d.chunk, d.row.data(), d.column.data(), d.format.data(), d.offset.data(),
      d.data.data(), d.lut.data(), x, y, alpha);
  SPMAT_CUDA_CHECK_LAUNCH("bccoo_gpu_spmv_t_kernel");
}

template <class Value, class Index>
std::unique_ptr<MatrixImpl<Value>> make_cuda_impl(BccooGpu<Value, Index>&& host) {
  return std::make_unique<cuda::DeviceImpl<BccooGpu<Value, Index>, BccooGpuDevice<Value, Index>>>(
      std::move(host));
}

#define SPMAT_INSTANTIATE(V, I) \
  template std::unique_ptr<MatrixImpl<V>> make_cuda_impl(BccooGpu<V, I>&&);
SPMAT_FOR_EACH_TYPE_PAIR(SPMAT_INSTANTIATE)
#undef SPMAT_INSTANTIATE

}  // namespace spmat
