// spmat/formats/tiled/tiled_cuda.cu — CUDA tiled SpMM (register tile R, B staged in shared memory
// per panel and stage, 16-bit S-ELL), row- and column-major B/C; spmv = spmm with k = 1.
// SPDX-License-Identifier: MIT
//
// Kernel contract (tiled_spmm_kernel): grid = (panels, tiles of R dense columns), block =
// panel_rows threads, one work row per thread. Arrays as in TiledStorage (device copies):
// panel_stage_ptr panels+1, stage_map_ptr stages+1, map Σ D_p, slab_ptr stages·wpp+1 (64-bit
// offsets), ell_idx/ell_val slab_ptr.back(); b cols×k, c rows×k in `layout`, caller-allocated.
// For each stage the block copies the R-column slab of B rows map[stage] into shared memory
// (sh[r][slot]), then each thread walks its S-ELL slab (coalesced over the warp) and
// accumulates R outputs in registers. Padding slots (0xFFFF) are skipped, never multiplied.
// Columns past k are predicated (tail tile). Output: direct (identity order), through out_row
// (reordered, one work row per output row) or, when rows are segmented, into a W×k partial
// buffer summed per output row in column order by tiled_reduce_kernel: deterministic.
// beta == 0 never reads C. Bytes per tile: the S-ELL stream + Σ D_p·R staged values + C.
#include <algorithm>
#include <cstdint>

#include "spmat/cuda/buffer.hpp"
#include "spmat/cuda/device_impl.hpp"
#include "spmat/cuda/primitives.cuh"
#include "spmat/formats/tiled/tiled.hpp"

namespace spmat {

template <class Value, class Index>
struct TiledDevice {
  using value_type = Value;
  std::int64_t rows = 0, cols = 0, work_rows = 0, panels = 0, panel_rows = 256, stage_cap = 1;
  std::int64_t smem_bytes = 48 * 1024;
  int r = 16;
  bool segmented = false, permuted = false;
  cuda::DeviceBuffer<std::int64_t> panel_stage_ptr, stage_map_ptr, slab_ptr, seg_ptr;
  cuda::DeviceBuffer<Index> map, out_row, seg_list;
  cuda::DeviceBuffer<std::uint16_t> ell_idx;
  cuda::DeviceBuffer<Value> ell_val;
  mutable cuda::DeviceBuffer<Value> partial;  ///< W×k partial sums (segmented only), grown on use

  static TiledDevice upload(const TiledStorage<Value, Index>& h) {
    TiledDevice d;
    d.rows = h.rows;
    d.cols = h.cols;
    d.work_rows = h.work_rows();
    d.panels = h.panels();
    d.panel_rows = h.panel_rows;
    d.stage_cap = h.stage_cap;
    d.smem_bytes = h.smem_bytes;
    d.r = h.r;
    d.segmented = h.segmented();
    d.permuted = !h.out_row.empty();
    d.panel_stage_ptr = cuda::DeviceBuffer<std::int64_t>(h.panel_stage_ptr, "tiled panel_stage_ptr");
    d.stage_map_ptr = cuda::DeviceBuffer<std::int64_t>(h.stage_map_ptr, "tiled stage_map_ptr");
    d.slab_ptr = cuda::DeviceBuffer<std::int64_t>(h.slab_ptr, "tiled slab_ptr");
    d.seg_ptr = cuda::DeviceBuffer<std::int64_t>(h.seg_ptr, "tiled seg_ptr");
    d.map = cuda::DeviceBuffer<Index>(h.map, "tiled map");
    d.out_row = cuda::DeviceBuffer<Index>(h.out_row, "tiled out_row");
    d.seg_list = cuda::DeviceBuffer<Index>(h.seg_list, "tiled seg_list");
    d.ell_idx = cuda::DeviceBuffer<std::uint16_t>(h.ell_idx, "tiled ell_idx");
    d.ell_val = cuda::DeviceBuffer<Value>(h.ell_val, "tiled ell_val");
    return d;
  }
};

namespace tiled_gpu {
enum Store : int { direct = 0, permuted = 1, partial = 2 };
}

template <int R, class Value, class Index>
__global__ void tiled_spmm_kernel(std::int64_t work_rows, std::int64_t rows, std::int64_t cols,
                                  std::int64_t k, std::int64_t tile0, std::int64_t stage_cap,
                                  int wpp, const std::int64_t* __restrict__ panel_stage_ptr,
                                  const std::int64_t* __restrict__ stage_map_ptr,
                                  const Index* __restrict__ map,
                                  const std::int64_t* __restrict__ slab_ptr,
                                  const std::uint16_t* __restrict__ ell_idx,
                                  const Value* __restrict__ ell_val,
                                  const Index* __restrict__ out_row, const Value* __restrict__ b,
                                  Value* __restrict__ c, bool row_major, int store,
                                  Value* __restrict__ partial, Value alpha, Value beta) {
  extern __shared__ unsigned char tiled_smem[];
  Value* sh = reinterpret_cast<Value*>(tiled_smem);
  const std::int64_t p = blockIdx.x;
  const int tid = threadIdx.x, nthreads = blockDim.x, warp = tid / 32, lane = tid % 32;
  const std::int64_t k0 = (tile0 + blockIdx.y) * R;
  Value acc[R];
#pragma unroll
  for (int r = 0; r < R; ++r) acc[r] = Value(0);
  for (std::int64_t s = panel_stage_ptr[p]; s < panel_stage_ptr[p + 1]; ++s) {
    const std::int64_t m0 = stage_map_ptr[s], len = stage_map_ptr[s + 1] - m0;
    for (std::int64_t e = tid; e < len * R; e += nthreads) {
      const std::int64_t n = row_major ? e / R : e % len, rr = row_major ? e % R : e / len;
      const std::int64_t col = map[m0 + n], kk = k0 + rr;
      sh[rr * stage_cap + n] = kk < k ? (row_major ? b[col * k + kk] : b[kk * cols + col]) : Value(0);
    }
    __syncthreads();
    const std::int64_t sb = slab_ptr[s * wpp + warp], se = slab_ptr[s * wpp + warp + 1];
    for (std::int64_t q = sb + lane; q < se; q += 32) {
      const std::uint16_t idx = ell_idx[q];
      if (idx != 0xFFFF) {
        const Value v = ell_val[q];
#pragma unroll
        for (int r = 0; r < R; ++r) acc[r] += v * sh[r * stage_cap + idx];
      }
    }
    __syncthreads();
  }
  const std::int64_t w = p * nthreads + tid;
  if (w >= work_rows) return;
  if (store == tiled_gpu::partial) {
#pragma unroll
    for (int r = 0; r < R; ++r)
      if (k0 + r < k) partial[w * k + k0 + r] = acc[r];
    return;
  }
  const std::int64_t row = store == tiled_gpu::permuted ? static_cast<std::int64_t>(out_row[w]) : w;
#pragma unroll
  for (int r = 0; r < R; ++r) {
    const std::int64_t kk = k0 + r;
    if (kk >= k) break;
    Value& out = row_major ? c[row * k + kk] : c[kk * rows + row];
    out = beta == Value(0) ? alpha * acc[r] : alpha * acc[r] + beta * out;
  }
}

/// C[i][j] = alpha·Σ_{segments q of row i, in column order} partial[q][j] + beta·C[i][j].
template <class Value, class Index>
__global__ void tiled_reduce_kernel(std::int64_t rows, std::int64_t k,
                                    const std::int64_t* __restrict__ seg_ptr,
                                    const Index* __restrict__ seg_list,
                                    const Value* __restrict__ partial, Value* __restrict__ c,
                                    bool row_major, Value alpha, Value beta) {
  const std::int64_t total = rows * k;
  for (std::int64_t t = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; t < total;
       t += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const std::int64_t i = t / k, j = t % k;
    Value s = 0;
    for (std::int64_t q = seg_ptr[i]; q < seg_ptr[i + 1]; ++q)
      s += partial[static_cast<std::int64_t>(seg_list[q]) * k + j];
    Value& out = row_major ? c[i * k + j] : c[j * rows + i];
    out = beta == Value(0) ? alpha * s : alpha * s + beta * out;
  }
}

template <int R, class Value, class Index>
void launch_tiled(const TiledDevice<Value, Index>& d, const Value* b, Value* c, std::int64_t k,
                  bool row_major, int store, Value alpha, Value beta) {
  const std::size_t smem = static_cast<std::size_t>(d.stage_cap) * R * sizeof(Value);
  if (smem > 48 * 1024)
    SPMAT_CUDA_CHECK(cudaFuncSetAttribute(tiled_spmm_kernel<R, Value, Index>,
                                          cudaFuncAttributeMaxDynamicSharedMemorySize,
                                          static_cast<int>(smem)));
  const std::int64_t tiles = (k + R - 1) / R;
  constexpr std::int64_t kMaxGridY = 65535;
  for (std::int64_t t0 = 0; t0 < tiles; t0 += kMaxGridY) {
    const dim3 grid(static_cast<unsigned>(d.panels), static_cast<unsigned>(std::min(kMaxGridY, tiles - t0)));
    tiled_spmm_kernel<R, Value, Index><<<grid, static_cast<unsigned>(d.panel_rows), smem>>>(
        d.work_rows, d.rows, d.cols, k, t0, d.stage_cap, static_cast<int>(d.panel_rows / 32),
        d.panel_stage_ptr.data(), d.stage_map_ptr.data(), d.map.data(), d.slab_ptr.data(),
        d.ell_idx.data(), d.ell_val.data(), d.out_row.data(), b, c, row_major, store,
        d.partial.data(), alpha, beta);
    SPMAT_CUDA_CHECK_LAUNCH("tiled_spmm_kernel");
  }
}

/// C = alpha·A·B + beta·C. The register tile is min(r, the power of two >= k), so small k (spmv)
/// does not stage 16 columns of which one is used. Deterministic.
template <class Value, class Index>
void spmm(const TiledDevice<Value, Index>& d, const Value* b, Value* c, std::int64_t k,
          DenseLayout layout, Value alpha, Value beta) {
  if (d.rows == 0 || k == 0 || d.panels == 0) return;
  const bool row_major = layout == DenseLayout::row_major;
  int store = d.permuted ? tiled_gpu::permuted : tiled_gpu::direct;
  if (d.segmented) {
    store = tiled_gpu::partial;
    const std::size_t need = static_cast<std::size_t>(d.work_rows) * static_cast<std::size_t>(k);
    if (d.partial.size() < need) d.partial = cuda::DeviceBuffer<Value>(need, "tiled partial sums");
  }
  int re = 1;
  while (re < d.r && re < k) re *= 2;
  switch (re) {
    case 1: launch_tiled<1>(d, b, c, k, row_major, store, alpha, beta); break;
    case 2: launch_tiled<2>(d, b, c, k, row_major, store, alpha, beta); break;
    case 4: launch_tiled<4>(d, b, c, k, row_major, store, alpha, beta); break;
    case 8: launch_tiled<8>(d, b, c, k, row_major, store, alpha, beta); break;
    case 16: launch_tiled<16>(d, b, c, k, row_major, store, alpha, beta); break;
    default: launch_tiled<32>(d, b, c, k, row_major, store, alpha, beta); break;
  }
  if (d.segmented) {
    tiled_reduce_kernel<<<cuda::grid_for(d.rows * k, 256), 256>>>(
        d.rows, k, d.seg_ptr.data(), d.seg_list.data(), d.partial.data(), c, row_major, alpha, beta);
    SPMAT_CUDA_CHECK_LAUNCH("tiled_reduce_kernel");
  }
}

template <class Value, class Index>
void spmv(const TiledDevice<Value, Index>& d, const Value* x, Value* y, Value alpha, Value beta) {
  spmm(d, x, y, 1, DenseLayout::row_major, alpha, beta);
}

template <class Value, class Index>
std::unique_ptr<MatrixImpl<Value>> make_cuda_impl(TiledStorage<Value, Index>&& host) {
  return std::make_unique<cuda::DeviceImpl<TiledStorage<Value, Index>, TiledDevice<Value, Index>>>(
      std::move(host));
}

#define SPMAT_INSTANTIATE(V, I) \
  template std::unique_ptr<MatrixImpl<V>> make_cuda_impl(TiledStorage<V, I>&&);
SPMAT_FOR_EACH_TYPE_PAIR(SPMAT_INSTANTIATE)
#undef SPMAT_INSTANTIATE

}  // namespace spmat
