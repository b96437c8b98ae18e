// spmat/formats/coo/coo_cuda.cu — CUDA kernels of COO: atomic and warp-segmented spmv, atomic spmv_t.
// SPDX-License-Identifier: MIT
#include "spmat/cuda/buffer.hpp"
#include "spmat/cuda/device_impl.hpp"
#include "spmat/cuda/primitives.cuh"
#include "spmat/formats/coo/coo.hpp"
#include "spmat/formats/coo/coo_device.hpp"

namespace spmat {

namespace {
constexpr int kBlock = 256;
constexpr std::int64_t kSegInterval = kCooSegInterval;  // coo_device.hpp
}  // namespace

namespace {

/// y[i] = alpha*0 + beta*y[i] for i < n: the rows of a matrix without entries. Grid-stride.
template <class Value>
__global__ void coo_empty_rows_kernel(std::int64_t n, Value* __restrict__ y, Value alpha,
                                      Value beta) {
  for (std::int64_t i = cuda::global_thread_id(); i < n; i += cuda::grid_thread_count())
    cuda::axpby_store(&y[i], alpha, Value(0), beta);
}

/// y[out_idx[k]] += alpha * values[k] * x[in_idx[k]] for every k < nnz, with atomicAdd.
/// spmv: out = row_idx, in = col_idx; spmv_t: out = col_idx, in = row_idx. Grid-stride.
template <class Value, class Index>
__global__ void coo_atomic_kernel(std::int64_t nnz, const Index* __restrict__ out_idx,
                                  const Index* __restrict__ in_idx,
                                  const Value* __restrict__ values, const Value* __restrict__ x,
                                  Value* y, Value alpha) {
  for (std::int64_t k = cuda::global_thread_id(); k < nnz; k += cuda::grid_thread_count())
    atomicAdd(&y[out_idx[k]], alpha * (values[k] * x[in_idx[k]]));
}

/// Segmented spmv, pass 1. Warp w reduces entries [w·L, min((w+1)·L, nnz)), L = kSegInterval,
/// 32 at a time: a warp segmented sum over row_idx, plus a carry of the row still open at the
/// end of each chunk. A row whose entries all lie inside the interval is written to y by the
/// lane holding its last entry. The partial sum of the interval's first row goes to head[w]
/// when that row began in an earlier interval, and that of its last row to tail[w] when the
/// row continues in the next interval; pass 2 finishes those rows. The lane holding a row's
/// last entry also writes the empty rows between it and the next stored row.
template <class Value, class Index>
__global__ void coo_segmented_kernel(std::int64_t nnz, std::int64_t intervals,
                                     const Index* __restrict__ row_idx,
                                     const Index* __restrict__ col_idx,
                                     const Value* __restrict__ values, const Value* __restrict__ x,
                                     Value* __restrict__ y, Value* __restrict__ head,
                                     Value* __restrict__ tail, Value alpha, Value beta) {
  const int lane = cuda::lane_id();
  const std::int64_t warps = cuda::grid_thread_count() / cuda::kWarpSize;
  for (std::int64_t w = cuda::global_thread_id() / cuda::kWarpSize; w < intervals; w += warps) {
    const std::int64_t begin = w * kSegInterval;
    const std::int64_t end = begin + kSegInterval < nnz ? begin + kSegInterval : nnz;
    const std::int64_t first_row = row_idx[begin], last_row = row_idx[end - 1];
    const bool cut_at_begin = begin > 0 && row_idx[begin - 1] == first_row;
    const bool cut_at_end = end < nnz && row_idx[end] == last_row;
    std::int64_t carry_row = -2;  // matches no row and no invalid lane (key -1)
    Value carry = 0;
    for (std::int64_t base = begin; base < end; base += cuda::kWarpSize) {  // warp-uniform
      const std::int64_t k = base + lane;
      const bool valid = k < end;
      // Invalid lanes take a key no stored row has, so they form their own segment.
      const std::int64_t row = valid ? static_cast<std::int64_t>(row_idx[k]) : -1;
      const Value prod = valid ? values[k] * x[col_idx[k]] : Value(0);
      bool seg_tail = false;
      Value sum = cuda::warp_segmented_sum(row, prod, &seg_tail);
      if (row == carry_row) sum += carry;  // only the chunk's first segment can match
      const std::int64_t next_k = k + 1;
      // Last entry of its row inside the chunk: the next lane starts another row or the chunk
      // ends here (then the row may still continue in the next chunk).
      const bool chunk_tail = valid && (seg_tail || next_k == end);
      carry_row = __shfl_sync(cuda::kFullMask, row, cuda::kWarpSize - 1);
      carry = __shfl_sync(cuda::kFullMask, sum, cuda::kWarpSize - 1);
      if (chunk_tail) {
        const bool row_ends_here = next_k == nnz || row_idx[next_k] != row;
        if (row_ends_here || next_k == end) {
          if (row == first_row && cut_at_begin) {
            head[w] = sum;
            if (next_k == end && cut_at_end) tail[w] = sum;
          } else if (next_k == end && cut_at_end) {
            tail[w] = sum;
          } else {
            cuda::axpby_store(&y[row], alpha, sum, beta);
          }
          if (row_ends_here && next_k < nnz) {  // empty rows up to the next stored row
            const std::int64_t next_row = row_idx[next_k];
            for (std::int64_t r = row + 1; r < next_row; ++r)
              cuda::axpby_store(&y[r], alpha, Value(0), beta);
          }
        }
      }
    }
  }
}

/// Segmented spmv, pass 2. For every interval w whose last row continues into the next
/// interval and began in w, sums tail[w] and the head carries of the following intervals in
/// order (fixed order: deterministic) and writes that row. Also writes the empty rows before
/// the first and after the last stored row. Grid-stride over intervals and over those rows.
template <class Value, class Index>
__global__ void coo_segmented_fixup_kernel(std::int64_t rows, std::int64_t nnz,
                                           std::int64_t intervals,
                                           const Index* __restrict__ row_idx, Value* y,
                                           const Value* __restrict__ head,
                                           const Value* __restrict__ tail, Value alpha,
                                           Value beta) {
  const std::int64_t stride = cuda::grid_thread_count();
  for (std::int64_t w = cuda::global_thread_id(); w < intervals; w += stride) {
    const std::int64_t begin = w * kSegInterval;
    const std::int64_t end = begin + kSegInterval < nnz ? begin + kSegInterval : nnz;
    const std::int64_t row = row_idx[end - 1];
    if (end == nnz || row_idx[end] != row) continue;               // last row ends in w
    if (row_idx[begin] == row && begin > 0 && row_idx[begin - 1] == row) continue;  // began earlier
    Value sum = tail[w];
    for (std::int64_t v = w + 1; v < intervals; ++v) {
      sum += head[v];
      const std::int64_t v_end = (v + 1) * kSegInterval < nnz ? (v + 1) * kSegInterval : nnz;
      if (v_end == nnz || row_idx[v_end] != row) break;  // the row ends inside interval v
    }
    cuda::axpby_store(&y[row], alpha, sum, beta);
  }
  const std::int64_t leading = row_idx[0], trailing_from = row_idx[nnz - 1] + 1;
  for (std::int64_t r = cuda::global_thread_id(); r < leading; r += stride)
    cuda::axpby_store(&y[r], alpha, Value(0), beta);
  for (std::int64_t r = trailing_from + cuda::global_thread_id(); r < rows; r += stride)
    cuda::axpby_store(&y[r], alpha, Value(0), beta);
}

}  // namespace

// Contract (both kernels): x has cols entries, y rows entries, device pointers allocated by
// the caller; canonical COO (sorted, no duplicates, explicit zeros multiplied); empty rows get
// alpha*0 + beta*y (beta == 0: y not read).
//   atomic:    scale pass over y, then one thread per nonzero with atomicAdd — the order of
//              the additions varies from run to run: NOT deterministic. Bytes: traffic_bytes
//              plus one extra read+write of y.
//   segmented: pass 1 + pass 2 above; no atomics, fixed reduction order: deterministic.
//              Workspace 2·V per interval of kSegInterval nonzeros (allocated at upload).
template <class Value, class Index>
void spmv(const CooDevice<Value, Index>& d, const Value* x, Value* y, Value alpha, Value beta) {
  if (d.rows == 0) return;
  if (d.nnz == 0) {
    cuda::launch_grid_for("coo_empty_rows_kernel", coo_empty_rows_kernel<Value>, d.rows, kBlock,
                          d.rows, y, alpha, beta);
    return;
  }
  if (d.kernel == CooKernel::atomic) {
    cuda::scale_async(y, d.rows, beta);
    cuda::launch_grid_for("coo_atomic_kernel", coo_atomic_kernel<Value, Index>, d.nnz, kBlock,
                          d.nnz, d.row_idx.data(), d.col_idx.data(), d.values.data(), x, y, alpha);
    return;
  }
  const std::int64_t intervals = (d.nnz + kSegInterval - 1) / kSegInterval;
  cuda::launch_grid_for("coo_segmented_kernel", coo_segmented_kernel<Value, Index>,
                        intervals * cuda::kWarpSize, kBlock, d.nnz, intervals, d.row_idx.data(),
                        d.col_idx.data(), d.values.data(), x, y, d.head.data(), d.tail.data(),
                        alpha, beta);
  const std::int64_t fix_threads = intervals > d.rows ? intervals : d.rows;
  cuda::launch_grid_for("coo_segmented_fixup_kernel", coo_segmented_fixup_kernel<Value, Index>,
                        fix_threads, kBlock, d.rows, d.nnz, intervals, d.row_idx.data(), y,
                        d.head.data(), d.tail.data(), alpha, beta);
}

// Contract: x has rows entries, y cols entries (device). y is first scaled by beta (beta == 0
// writes zeros without reading y), then one thread per nonzero adds alpha*v*x[row] into
// y[col] with atomicAdd: NOT deterministic. Same kernel for coo and coo-seg.
template <class Value, class Index>
void spmv_t(const CooDevice<Value, Index>& d, const Value* x, Value* y, Value alpha, Value beta) {
  if (d.cols == 0) return;
  cuda::scale_async(y, d.cols, beta);
  if (d.nnz == 0) return;
  cuda::launch_grid_for("coo_atomic_kernel (transpose)", coo_atomic_kernel<Value, Index>, d.nnz,
                        kBlock, d.nnz, d.col_idx.data(), d.row_idx.data(), d.values.data(), x, y,
                        alpha);
}

SPMAT_DEFINE_CUDA_IMPL(CooStorage, CooDevice)
SPMAT_DEFINE_DEVICE_ONLY_IMPL(CooStorage, CooDevice)

}  // namespace spmat
