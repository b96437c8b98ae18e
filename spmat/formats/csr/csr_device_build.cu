// spmat/formats/csr/csr_device_build.cu — CSR from a CSR in device memory: the arrays are
// adopted as they are (no copy; narrow columns, csr_device.hpp, are a 32-bit copy made on the
// device), and the kernel plan is made on the device.
// SPDX-License-Identifier: MIT
//
// The plan (csr_plan.hpp: lanes per row, row bins, long-row chunks, merge-path tiles) is the
// host planner's. Its choices depend on the row lengths only through csr_plan::RowStats, which
// one pass over row_ptr sums on the device, with the sizes of every row list the plan may take
// (one download of a few counts); csr_plan::plan_from_stats then decides as plan_rows does.
// Where a choice depends on the columns (the scalar kernel, batched steps, the merge tile
// width), their sampled csr_plan::ColumnLocality is counted on the device too (two counts
// downloaded). The lists themselves (medium rows, long rows, their chunks) are made on the
// device: the rows selected in ascending order by a stable CUB select, the chunk offsets by a
// CUB scan, one thread per chunk for the rest; the merge-path tiles by one diagonal search per
// tile and a CUB select of the wide fix-ups. Nothing but a few counts leaves the device, and
// no host thread works on the matrix; device and host builds stay bit-identical, plan arrays
// included.

#include <cuda_runtime.h>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>

#include <cub/device/device_scan.cuh>
#include <cub/device/device_select.cuh>

#include "spmat/cuda/device_builder.hpp"
#include "spmat/cuda/device_impl.hpp"
#include "spmat/cuda/primitives.cuh"
#include "spmat/formats/csr/csr_device.hpp"
#include "spmat/formats/csr/csr_plan.hpp"

namespace spmat {

namespace {

constexpr int kMaxLenBlock = 256;

/// The chunk sizes plan_from_stats may choose: kChunk halved down to kMinChunk.
constexpr int kChunkSizes = 3;
static_assert(csr_plan::kChunk == csr_plan::kMinChunk << (kChunkSizes - 1));

/// The slots of the statistics pass: csr_plan::RowStats, and the sizes of the lists for each
/// way plan_from_stats may go (binned or not; each chunk size).
enum Stat : int {
  kMaxLen = 0, kMoved, kLongNnzBinned, kLongNnzUnbinned,
  kMedium,                                   // binned_short_max < len <= kWarpRowMax
  kLongBinned, kLongUnbinned,                // len > kWarpRowMax, len > long_row_threshold
  kChunksBinned,                             // + i: chunks of kChunk >> i, long rows binned
  kChunksUnbinned = kChunksBinned + kChunkSizes,
  kStats = kChunksUnbinned + kChunkSizes
};

/// Every Stat over the rows of row_ptr (out zeroed beforehand): per warp by shuffles, per block
/// in shared memory, then one atomic per block and slot.
template <class Index>
__global__ void __launch_bounds__(kMaxLenBlock)
    row_stats_kernel(const Index* __restrict__ row_ptr, std::int64_t rows,
                     std::int64_t short_max_binned, std::int64_t unbinned_long,
                     unsigned long long* __restrict__ out) {
  __shared__ unsigned long long block[kStats];
  for (int k = threadIdx.x; k < kStats; k += blockDim.x) block[k] = 0;
  __syncthreads();
  unsigned long long v[kStats] = {};
  for (std::int64_t r = cuda::global_thread_id(); r < rows; r += cuda::grid_thread_count()) {
    const std::int64_t l = static_cast<std::int64_t>(row_ptr[r + 1] - row_ptr[r]);
    const auto u = static_cast<unsigned long long>(l);
    v[kMaxLen] = max(v[kMaxLen], u);
    if (l > short_max_binned && l <= unbinned_long) v[kMoved] += u;
    if (l > short_max_binned && l <= csr_plan::kWarpRowMax) ++v[kMedium];
    if (l > csr_plan::kWarpRowMax) {
      v[kLongNnzBinned] += u;
      ++v[kLongBinned];
#pragma unroll
      for (int i = 0; i < kChunkSizes; ++i) {
        const std::int64_t c = csr_plan::kChunk >> i;
        v[kChunksBinned + i] += static_cast<unsigned long long>((l + c - 1) / c);
      }
    }
    if (l > unbinned_long) {
      v[kLongNnzUnbinned] += u;
      ++v[kLongUnbinned];
#pragma unroll
      for (int i = 0; i < kChunkSizes; ++i) {
        const std::int64_t c = csr_plan::kChunk >> i;
        v[kChunksUnbinned + i] += static_cast<unsigned long long>((l + c - 1) / c);
      }
    }
  }
#pragma unroll
  for (int k = 0; k < kStats; ++k) {
    for (int o = 16; o > 0; o /= 2) {
      const unsigned long long w = __shfl_down_sync(0xffffffffu, v[k], o);
      v[k] = k == kMaxLen ? max(v[k], w) : v[k] + w;
    }
  }
  if ((threadIdx.x & 31) == 0) {
    atomicMax(&block[kMaxLen], v[kMaxLen]);
#pragma unroll
    for (int k = 1; k < kStats; ++k)
      if (v[k]) atomicAdd(&block[k], v[k]);
  }
  __syncthreads();
  if (threadIdx.x == kMaxLen && block[kMaxLen]) atomicMax(&out[kMaxLen], block[kMaxLen]);
  else if (threadIdx.x > kMaxLen && threadIdx.x < kStats && block[threadIdx.x])
    atomicAdd(&out[threadIdx.x], block[threadIdx.x]);
}

/// Whether row r's length is in (lo, hi]: the select predicate of the row lists.
template <class Index>
struct LengthIn {
  const Index* row_ptr;
  std::int64_t lo, hi;
  __device__ bool operator()(std::int64_t r) const {
    const std::int64_t l = static_cast<std::int64_t>(row_ptr[r + 1] - row_ptr[r]);
    return l > lo && l <= hi;
  }
};

/// The chunks of row r: ceil(length / chunk).
template <class Index>
struct ChunksOf {
  const Index* row_ptr;
  std::int64_t chunk;
  __device__ std::int64_t operator()(std::int64_t r) const {
    return (static_cast<std::int64_t>(row_ptr[r + 1] - row_ptr[r]) + chunk - 1) / chunk;
  }
};

/// One thread per chunk c: its long row (the last l with long_chunk_ptr[l] <= c), the row and
/// the first nonzero, as plan_rows lists them.
template <class Index>
__global__ void chunk_lists_kernel(const Index* __restrict__ row_ptr,
                                   const std::int64_t* __restrict__ long_rows,
                                   const std::int64_t* __restrict__ long_chunk_ptr,
                                   std::int64_t n_long, std::int64_t n_chunks, std::int64_t chunk,
                                   std::int64_t* __restrict__ chunk_row,
                                   std::int64_t* __restrict__ chunk_begin,
                                   std::int64_t* __restrict__ chunk_long) {
  for (std::int64_t c = cuda::global_thread_id(); c < n_chunks; c += cuda::grid_thread_count()) {
    const std::int64_t l = cuda::segment_of(long_chunk_ptr, n_long, c), r = long_rows[l];
    chunk_row[c] = r;
    chunk_begin[c] = static_cast<std::int64_t>(row_ptr[r]) + (c - long_chunk_ptr[l]) * chunk;
    chunk_long[c] = l;
  }
}

/// out[0..n) = the rows r < rows, ascending, whose length is in (lo, hi] (n of them: counted
/// by the statistics pass). A stable CUB select over the row ids.
template <class Index>
void select_rows(const Index* row_ptr, std::int64_t rows, std::int64_t lo, std::int64_t hi,
                 std::int64_t* out) {
  cuda::ScratchBuffer<std::int64_t> selected(1, "csr build: selected rows");
  const thrust::counting_iterator<std::int64_t> ids(0);
  const auto tmp = cuda::run_cub<cuda::ScratchBuffer<std::byte>>(
      "csr build: select workspace", [&](void* temp, std::size_t& bytes) {
        return cub::DeviceSelect::If(temp, bytes, ids, out, selected.data(), rows,
                                     LengthIn<Index>{row_ptr, lo, hi}, cuda::stream());
      });
}

/// The statistics of the rows of row_ptr (rows > 0), one pass and one download.
template <class Index>
std::vector<unsigned long long> row_stats(const Index* row_ptr, std::int64_t rows,
                                          std::int64_t short_max_binned,
                                          std::int64_t unbinned_long) {
  cuda::ScratchBuffer<unsigned long long> out(kStats, "csr build: row statistics");
  out.fill_bytes(0);
  cuda::launch_grid_for("row_stats_kernel", row_stats_kernel<Index>, rows, kMaxLenBlock, row_ptr,
                        rows, short_max_binned, unbinned_long, out.data());
  return out.download();  // waits for the stream
}

/// csr_plan::column_locality on the device: a warp per sampled row, its lanes over the row's
/// first kLocalityRowNnz nonzeros, the counts summed in integers (out zeroed beforehand):
/// exactly the host's.
template <class Index>
__global__ void __launch_bounds__(kMaxLenBlock)
    column_locality_kernel(const Index* __restrict__ row_ptr, const Index* __restrict__ col_idx,
                           std::int64_t rows, unsigned long long* __restrict__ out) {
  const std::int64_t samples = csr_plan::locality_samples(rows);
  const int lane = static_cast<int>(threadIdx.x) & 31;
  for (std::int64_t i = cuda::global_thread_id() / 32; i < samples; i += cuda::grid_thread_count() / 32) {
    const std::int64_t r = csr_plan::locality_row(i, rows);
    const std::int64_t b = row_ptr[r], end = row_ptr[r + 1];
    const std::int64_t e = end < b + csr_plan::kLocalityRowNnz ? end : b + csr_plan::kLocalityRowNnz;
    unsigned long long near = 0;
    for (std::int64_t k = b + lane; k < e; k += 32)
      near += csr_plan::has_near_column(col_idx + row_ptr[r - 1], col_idx + b, col_idx[k]);
    for (int o = 16; o > 0; o /= 2) near += __shfl_down_sync(0xffffffffu, near, o);
    if (lane == 0) {
      atomicAdd(out, near);
      atomicAdd(out + 1, static_cast<unsigned long long>(e - b));
    }
  }
}

template <class Index>
csr_plan::ColumnLocality column_locality_on_device(const Index* row_ptr, const Index* col_idx,
                                                   std::int64_t rows) {
  const std::int64_t samples = csr_plan::locality_samples(rows);
  if (samples == 0) return {};
  cuda::ScratchBuffer<unsigned long long> out(2, "csr build: column locality");
  out.fill_bytes(0);
  cuda::launch_grid_for("column_locality_kernel", column_locality_kernel<Index>, samples * 32,
                        kMaxLenBlock, row_ptr, col_idx, rows, out.data());
  const auto c = out.download();  // waits for the stream
  return {static_cast<std::int64_t>(c[0]), static_cast<std::int64_t>(c[1])};
}

/// out[k] = in[k] narrowed to 32 bits, k < n (every column < 2^31: csr_narrow_columns).
template <class Index>
__global__ void __launch_bounds__(kMaxLenBlock)
    narrow_columns_kernel(const Index* __restrict__ in, std::int64_t n,
                          std::int32_t* __restrict__ out) {
  for (std::int64_t k = cuda::global_thread_id(); k < n; k += cuda::grid_thread_count())
    out[k] = static_cast<std::int32_t>(in[k]);
}

/// tile_row[b] for b <= n_tiles: the row at which merge-path diagonal min(b·tile, rows + nnz)
/// crosses the path, as csr_plan::plan_merge finds it.
template <class Index>
__global__ void __launch_bounds__(kMaxLenBlock)
    tile_rows_kernel(const Index* __restrict__ row_ptr, std::int64_t rows, std::int64_t nnz,
                     std::int64_t tile, std::int64_t n_tiles, std::int64_t* __restrict__ tile_row) {
  const std::int64_t total = rows + nnz;
  for (std::int64_t b = cuda::global_thread_id(); b <= n_tiles; b += cuda::grid_thread_count())
    tile_row[b] = cuda::merge_path_search(std::min(b * tile, total), row_ptr + 1, rows, nnz);
}

/// tile_own[b] for b < n_tiles (owner completion): csr_plan::tile_ownership of tile b.
template <class Index>
__global__ void __launch_bounds__(kMaxLenBlock)
    tile_owners_kernel(const Index* __restrict__ row_ptr, std::int64_t rows, std::int64_t nnz,
                       std::int64_t tile, std::int64_t n_tiles,
                       const std::int64_t* __restrict__ tile_row, std::int32_t* __restrict__ tile_own) {
  const std::int64_t total = rows + nnz;
  for (std::int64_t b = cuda::global_thread_id(); b < n_tiles; b += cuda::grid_thread_count()) {
    const std::int64_t row0 = tile_row[b], row1 = tile_row[b + 1];
    const std::int64_t nz0 = b * tile - row0, nz1 = std::min((b + 1) * tile, total) - row1;
    const bool has_last = row1 < rows;
    tile_own[b] = csr_plan::tile_ownership(nz0, nz1, row_ptr[row0], has_last,
                                           has_last ? std::int64_t{row_ptr[row1]} : nnz,
                                           has_last ? std::int64_t{row_ptr[row1 + 1]} : nnz);
  }
}

/// The first tile whose carry tile t adds when it finishes its first row (csr_plan::plan_merge):
/// the tile before the first one that starts in that row, or tile 0.
__device__ __forceinline__ std::int64_t first_carry_tile(const std::int64_t* tile_row, std::int64_t t) {
  const std::int64_t t0 = cuda::lower_bound(tile_row, 0, t, tile_row[t]);
  return t0 > 0 ? t0 - 1 : 0;
}

/// Whether tile t (0 < t < n_tiles) is on the wide fix-up list: it finishes its first row, and
/// that row's carries come from more than kMaxShortFix tiles.
struct WideFixUp {
  const std::int64_t* tile_row;
  __device__ bool operator()(std::int64_t t) const {
    return tile_row[t + 1] != tile_row[t] && t - first_carry_tile(tile_row, t) > csr_plan::kMaxShortFix;
  }
};

__global__ void __launch_bounds__(kMaxLenBlock)
    fix_first_kernel(const std::int64_t* __restrict__ tile_row, const std::int64_t* __restrict__ fix_tile,
                     std::int64_t n_fix, std::int64_t* __restrict__ fix_first) {
  for (std::int64_t i = cuda::global_thread_id(); i < n_fix; i += cuda::grid_thread_count())
    fix_first[i] = first_carry_tile(tile_row, fix_tile[i]);
}

/// CsrDevice::set_merge_tiles (csr_plan::plan_merge) made on the device: the tiles' first rows
/// by one merge-path search each, then either their ownership words (one thread a tile) or the
/// wide fix-ups by a stable CUB select (their count is the one download). `max_len`: the
/// longest row, from the statistics pass.
template <class Value, class Index>
void merge_tiles_on_device(CsrDevice<Value, Index>& d, const Index* dev_row_ptr,
                           const Index* dev_col_idx, std::int64_t max_len) {
  if (d.rows == 0) return;
  d.merge_skewed = static_cast<double>(max_len) >
                   csr_plan::kSkewMaxOverMean * static_cast<double>(d.nnz) / static_cast<double>(d.rows);
  d.merge_ipt = csr_plan::kMergeIpt;
  if (csr_plan::merge_items_per_thread(d.nnz, d.merge_skewed, true, sizeof(Value)) != csr_plan::kMergeIpt)
    d.merge_ipt = csr_plan::merge_items_per_thread(
        d.nnz, d.merge_skewed, column_locality_on_device(dev_row_ptr, dev_col_idx, d.rows).local(),
        sizeof(Value));
  const std::int64_t tile = static_cast<std::int64_t>(csr_plan::kMergeBlock) * d.merge_ipt;
  const std::int64_t n = (d.rows + d.nnz + tile - 1) / tile;
  d.n_tiles = n;
  d.tile_row = cuda::DeviceBuffer<std::int64_t>(static_cast<std::size_t>(n) + 1, "csr merge-path tiles");
  cuda::launch_grid_for("tile_rows_kernel", tile_rows_kernel<Index>, n + 1, kMaxLenBlock, dev_row_ptr,
                        d.rows, d.nnz, tile, n, d.tile_row.data());
  if (csr_plan::merge_owner_completes(d.rows, d.nnz, max_len)) {
    d.tile_own = cuda::DeviceBuffer<std::int32_t>(static_cast<std::size_t>(n), "csr merge-path tile owners");
    cuda::launch_grid_for("tile_owners_kernel", tile_owners_kernel<Index>, n, kMaxLenBlock, dev_row_ptr,
                          d.rows, d.nnz, tile, n, d.tile_row.data(), d.tile_own.data());
    return;
  }
  d.tile_carry = cuda::DeviceBuffer<Value>(static_cast<std::size_t>(n), "csr merge carries");
  d.tile_head = cuda::DeviceBuffer<Value>(static_cast<std::size_t>(n), "csr merge heads");
  d.n_long_fix = 0;
  if (n < 2 + csr_plan::kMaxShortFix) return;  // no tile has that many before it
  cuda::ScratchBuffer<std::int64_t> selected(static_cast<std::size_t>(n), "csr build: wide fix-ups");
  cuda::ScratchBuffer<std::int64_t> count(1, "csr build: wide fix-up count");
  {
    const thrust::counting_iterator<std::int64_t> tiles(1);
    const auto tmp = cuda::run_cub<cuda::ScratchBuffer<std::byte>>(
        "csr build: select workspace", [&](void* temp, std::size_t& bytes) {
          return cub::DeviceSelect::If(temp, bytes, tiles, selected.data(), count.data(), n - 1,
                                       WideFixUp{d.tile_row.data()}, cuda::stream());
        });
  }
  d.n_long_fix = count.download()[0];  // waits for the stream
  if (d.n_long_fix == 0) return;
  const auto n_fix = static_cast<std::size_t>(d.n_long_fix);
  d.fix_tile = cuda::DeviceBuffer<std::int64_t>(n_fix, "csr merge wide fix-ups");
  d.fix_first = cuda::DeviceBuffer<std::int64_t>(n_fix, "csr merge wide fix-ups");
  cuda::copy_device(d.fix_tile.data(), selected.data(), n_fix);
  cuda::launch_grid_for("fix_first_kernel", fix_first_kernel, d.n_long_fix, kMaxLenBlock,
                        d.tile_row.data(), d.fix_tile.data(), d.n_long_fix, d.fix_first.data());
}

/// CsrDevice::set_plan's row plan (csr_plan::plan_rows through apply_row_plan: every kernel
/// but merge's tiles) for `d`, whose row offsets on the device are `dev_row_ptr`, made on the
/// device: the same plan, the same arrays.
/// Returns the longest row (the statistics pass's; 0 without rows).
template <class Value, class Index>
std::int64_t plan_on_device(CsrDevice<Value, Index>& d, const Index* dev_row_ptr,
                            const Index* dev_col_idx, const CsrStorage<Value, Index>& options) {
  const int tpr = options.threads_per_row > 0 ? options.threads_per_row
                                               : csr_plan::threads_per_row(d.rows, d.nnz);
  std::vector<unsigned long long> st(kStats, 0);
  if (d.rows > 0)
    st = row_stats(dev_row_ptr, d.rows, csr_plan::binned_short_max(tpr),
                   csr_plan::long_row_threshold(d.rows, d.nnz));
  const auto stat = [&](int k) { return static_cast<std::int64_t>(st[static_cast<std::size_t>(k)]); };
  const csr_plan::RowStats stats{stat(kMaxLen), stat(kMoved), stat(kLongNnzBinned), stat(kLongNnzUnbinned)};
  // The plan as set_plan makes it, from the device's statistics and column sample.
  const csr_plan::RowPlan p = csr_plan::plan_for_columns(
      [&](bool scalar_allowed) {
        return csr_plan::plan_from_stats(d.rows, d.nnz, stats, options.kernel, options.threads_per_row,
                                         options.bins, scalar_allowed);
      },
      [&] { return column_locality_on_device(dev_row_ptr, dev_col_idx, d.rows).local(); },
      options.kernel, options.threads_per_row, d.rows, d.cols, d.nnz, sizeof(Value));
  // The plan without its lists: kernel, lanes, thresholds, the options it was built with.
  d.apply_row_plan(p, options);
  if (!p.binned && p.long_threshold == csr_plan::kNoLongRows) return stat(kMaxLen);  // no lists

  // The list sizes for the way the plan went, from the same pass.
  int chunk_size = 0;
  while ((csr_plan::kChunk >> chunk_size) != p.chunk) ++chunk_size;
  d.n_medium = p.binned ? stat(kMedium) : 0;
  d.n_long = stat(p.binned ? kLongBinned : kLongUnbinned);
  d.n_chunks = stat((p.binned ? kChunksBinned : kChunksUnbinned) + chunk_size);
  if (d.n_medium > 0) {
    d.medium_rows = cuda::DeviceBuffer<std::int64_t>(static_cast<std::size_t>(d.n_medium), "csr medium rows");
    select_rows(dev_row_ptr, d.rows, p.short_max, p.long_threshold, d.medium_rows.data());
  }
  if (d.n_long > 0) {
    const auto n_long = static_cast<std::size_t>(d.n_long), n_chunks = static_cast<std::size_t>(d.n_chunks);
    d.long_rows = cuda::DeviceBuffer<std::int64_t>(n_long, "csr long rows");
    d.long_chunk_ptr = cuda::DeviceBuffer<std::int64_t>(n_long + 1, "csr long-row chunk ptr");
    d.chunk_row = cuda::DeviceBuffer<std::int64_t>(n_chunks, "csr chunk rows");
    d.chunk_begin = cuda::DeviceBuffer<std::int64_t>(n_chunks, "csr chunk begins");
    d.chunk_partial = cuda::DeviceBuffer<Value>(n_chunks, "csr chunk partials");
    d.chunk_long = cuda::DeviceBuffer<std::int64_t>(n_chunks, "csr chunk long-row index");
    d.long_done = cuda::DeviceBuffer<unsigned>(n_long, "csr long-row counters");
    d.long_done.fill_bytes(0);
    select_rows(dev_row_ptr, d.rows, p.long_threshold, std::numeric_limits<std::int64_t>::max(),
                d.long_rows.data());
    cuda::fill_bytes_async(d.long_chunk_ptr.data(), 0, sizeof(std::int64_t));
    const auto chunks = thrust::make_transform_iterator(d.long_rows.data(),
                                                        ChunksOf<Index>{dev_row_ptr, p.chunk});
    {
      const auto tmp = cuda::run_cub<cuda::ScratchBuffer<std::byte>>(
          "csr build: chunk scan workspace", [&](void* temp, std::size_t& bytes) {
            return cub::DeviceScan::InclusiveSum(temp, bytes, chunks, d.long_chunk_ptr.data() + 1,
                                                 d.n_long, cuda::stream());
          });
    }
    cuda::launch_grid_for("chunk_lists_kernel", chunk_lists_kernel<Index>, d.n_chunks,
                          kMaxLenBlock, dev_row_ptr, d.long_rows.data(), d.long_chunk_ptr.data(),
                          d.n_long, d.n_chunks, p.chunk, d.chunk_row.data(), d.chunk_begin.data(),
                          d.chunk_long.data());
  }
  return stat(kMaxLen);
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
      // A copy of the columns, 32-bit, queued on the stream (Matrix::build waits for the
      // stream before it returns the matrix).
      d.col_idx32 = cuda::DeviceBuffer<std::int32_t>(n, "csr col_idx (32-bit)");
      if (n > 0)
        cuda::launch_grid_for("narrow_columns_kernel", narrow_columns_kernel<Index>, v.nnz,
                              kMaxLenBlock, v.col_idx, v.nnz, d.col_idx32.data());
    }
  }
  if (!d.narrow) d.col_idx = cuda::DeviceArray<Index>::borrow(v.col_idx, n, a.owner(), false);
  d.values = cuda::DeviceArray<Value>::borrow(v.values, n, a.owner(), a.exclusive());
  const std::int64_t max_len = plan_on_device(d, v.row_ptr, v.col_idx, options);
  // The merge kernel's tiles, and those of a large skewed matrix's spmv (set_plan).
  if (options.kernel == CsrKernel::merge || d.merge_spmv)
    merge_tiles_on_device(d, v.row_ptr, v.col_idx, max_len);
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
      "plan", std::vector<std::int64_t>{static_cast<std::int64_t>(d.kernel), d.merge_spmv, d.tpr, d.short_max,
                                        d.n_medium, d.n_long, d.n_chunks, d.n_tiles,
                                        d.n_long_fix, d.merge_skewed, d.batched, d.merge_ipt,
                                        d.t_whole_rows}));
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
