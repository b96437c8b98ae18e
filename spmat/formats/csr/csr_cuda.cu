// spmat/formats/csr/csr_cuda.cu — CUDA kernels of CSR: scalar, vector, adaptive (sub-warp per
// row, with row-length bins on skewed rows) and merge-path SpMV; atomic-scatter SpMVᵀ (row
// kernels, or merge-path tiles for csr-merge); a warp-per-row SpMM.
// SPDX-License-Identifier: MIT
//
// Layering (STYLE.md, after CUB): the public entries spmv/spmv_t/spmm at the bottom validate
// nothing (Matrix did) and pick the variant; `launch_*` helpers size the grid from the SM count;
// the __global__ kernels are thin loops over rows/chunks/merge-path tiles built from the
// primitives in spmat/cuda/primitives.cuh. Everything a kernel needs beyond the CSR arrays
// (threads per row, the row bins, the long-row chunk list, the merge-path tiles and their
// fix-up list) is planned once (csr_plan.hpp): by CsrDevice::set_plan in upload, on the device
// in adopt (csr_device_build.cu), both timed by the benchmark as setup.
//
// Common kernel contract (all SpMV variants):
//   row_ptr: rows+1, col_idx/values: nnz, x: cols, y: rows (spmv_t: x rows, y cols); all device
//   memory allocated by the caller (the matrix arrays by upload). col_idx is of type Col: Index,
//   or std::int32_t when the storage narrowed the columns of a 64-bit-index matrix
//   (csr_device.hpp; the launchers pick it with with_col_idx). Canonical CSR: no duplicates;
//   explicit zeros are multiplied like any entry (so 0*Inf = NaN propagates as in the
//   reference); empty rows give y = beta*y (or 0 when beta == 0). beta == 0 never reads y.
//   Offsets and loop counters are 64-bit, so int32 matrices with rows+nnz > 2^31 are fine.
//   Minimal bytes: (rows+1)·I + nnz·(C+V) + cols·V (x, if each entry is read once) + rows·V,
//   C = sizeof(Col).
//   Cache policy: the merge-path SpMV of a matrix larger than L2 (reads_exceed_l2), the batched
//   sub-warp SpMV, and the plain sub-warp SpMV in fp32 at few lanes a row above L2
//   (subwarp_streams) load col_idx and values, read once per product, evict-first
//   (cuda::ld_stream), so that they do not push the gathered x out of L2. The other kernels
//   keep the read-only cached path (ldg) for them: where a warp reads a line over several
//   steps (a thread walks its row in the scalar kernel; sub-warp groups straddle lines), an
//   evict-first line leaves L1 before the next step (lap3d:200 on an H200, scalar kernel: 2.3×
//   slower), and a matrix that fits in L2 gains nothing.
#include <algorithm>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "spmat/cuda/buffer.hpp"
#include "spmat/cuda/device_impl.hpp"
#include "spmat/cuda/primitives.cuh"
#include "spmat/formats/csr/csr.hpp"
#include "spmat/formats/csr/csr_device.hpp"
#include "spmat/formats/csr/csr_plan.hpp"

namespace spmat {

namespace {

using cuda::axpby_store;
using cuda::ld_stream;
using cuda::ldg;

// ---------------------------------------------------------------------------------------------
// SpMV kernels
// ---------------------------------------------------------------------------------------------

/// A load of data read once per product: evict-first where Stream, else read-only cached.
template <bool Stream, class T>
__device__ __forceinline__ T ld_once(const T* p) {
  if constexpr (Stream)
    return ld_stream(p);
  else
    return ldg(p);
}

// One thread per row (the GCSB thesis's baseline). Uncoalesced for rows longer than ~1: each
// thread walks its own row. Deterministic (storage order).
template <class Value, class Index, class Col>
__global__ void __launch_bounds__(csr_plan::kBlock)
    csr_scalar_kernel(std::int64_t rows, const Index* __restrict__ row_ptr,
                      const Col* __restrict__ col_idx, const Value* __restrict__ values,
                      const Value* __restrict__ x, Value* __restrict__ y, Value alpha, Value beta) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t r = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
       r < rows; r += stride) {
    const std::int64_t end = ldg(row_ptr + r + 1);
    Value s = 0;
    for (std::int64_t k = ldg(row_ptr + r); k < end; ++k)
      s += ldg(values + k) * ldg(x + ldg(col_idx + k));
    axpby_store(y + r, alpha, s, beta);
  }
}

// W lanes per row (W = 32: csr-vector; W = tpr: adaptive). Lane i of a row's group sums
// entries begin+i, begin+i+W, ...; then a fixed shuffle tree. Rows longer than skip_above
// are skipped (the medium-row and long-row work of the fused kernel owns them). Deterministic.
// Loads of a warp cover 32/W consecutive rows, i.e. one contiguous stretch of col_idx/values:
// coalesced. `group` / `groups`: this W-lane group's index among all groups of the grid (or
// of the fused kernel's short-row blocks).
// Batch (RowPlan::batched): kBatchSteps strided steps per trip, their loads all issued before
// the first product, col_idx and values evict-first: a row of up to kBatchSteps·W nonzeros
// costs one round of column loads and one of x gathers however many steps it takes. The lane
// adds its entries in storage order, as the one-step loop does.
// Stream (subwarp_streams): the one-step loop loads col_idx and values evict-first too.
template <int W, bool Batch, bool Stream, class Value, class Index, class Col>
__device__ __forceinline__ void subwarp_rows(std::int64_t group, std::int64_t groups,
                                             std::int64_t rows, const Index* __restrict__ row_ptr,
                                             const Col* __restrict__ col_idx,
                                             const Value* __restrict__ values,
                                             const Value* __restrict__ x, Value* __restrict__ y,
                                             Value alpha, Value beta, std::int64_t skip_above) {
  const int lane = static_cast<int>(threadIdx.x) & (W - 1);
  for (std::int64_t r = group; r < rows; r += groups) {
    const std::int64_t begin = ldg(row_ptr + r), end = ldg(row_ptr + r + 1);
    if (end - begin > skip_above) continue;  // uniform over the W lanes of this row
    Value s = 0;
    if constexpr (Batch) {
      constexpr int kSteps = csr_plan::kBatchSteps;
      for (std::int64_t k0 = begin + lane; k0 < end; k0 += kSteps * W) {
        Col c[kSteps];
        Value v[kSteps], xv[kSteps];
#pragma unroll
        for (int u = 0; u < kSteps; ++u)
          if (k0 + u * W < end) {
            c[u] = ld_stream(col_idx + k0 + u * W);
            v[u] = ld_stream(values + k0 + u * W);
          }
#pragma unroll
        for (int u = 0; u < kSteps; ++u)
          if (k0 + u * W < end) xv[u] = ldg(x + c[u]);
#pragma unroll
        for (int u = 0; u < kSteps; ++u)
          if (k0 + u * W < end) s += v[u] * xv[u];
      }
    } else {
#pragma unroll 2
      for (std::int64_t k = begin + lane; k < end; k += W)
        s += ld_once<Stream>(values + k) * ldg(x + ld_once<Stream>(col_idx + k));
    }
    s = cuda::subwarp_sum<W>(s);
    if (lane == 0) axpby_store(y + r, alpha, s, beta);
  }
}

template <int W, bool Batch, bool Stream, class Value, class Index, class Col>
__global__ void __launch_bounds__(csr_plan::kBlock)
    csr_subwarp_kernel(std::int64_t rows, const Index* __restrict__ row_ptr,
                       const Col* __restrict__ col_idx, const Value* __restrict__ values,
                       const Value* __restrict__ x, Value* __restrict__ y, Value alpha, Value beta,
                       std::int64_t skip_above) {
  subwarp_rows<W, Batch, Stream>((static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) / W,
                         static_cast<std::int64_t>(gridDim.x) * blockDim.x / W, rows, row_ptr,
                         col_idx, values, x, y, alpha, beta, skip_above);
}

// Medium rows of the binned auto kernel (csr_plan::RowPlan): one warp per row of the compacted
// list `list` (rows longer than the sub-warp bin, at most kWarpRowMax long, so at most 16
// strided steps). A warp reads one contiguous stretch of col_idx/values: coalesced.
// Deterministic (storage order per lane, fixed shuffle tree).
template <class Value, class Index, class Col>
__device__ __forceinline__ void warp_row_list(std::int64_t warp, std::int64_t warps, std::int64_t n,
                                              const std::int64_t* __restrict__ list,
                                              const Index* __restrict__ row_ptr,
                                              const Col* __restrict__ col_idx,
                                              const Value* __restrict__ values,
                                              const Value* __restrict__ x, Value* __restrict__ y,
                                              Value alpha, Value beta) {
  const int lane = static_cast<int>(threadIdx.x) & 31;
  for (std::int64_t i = warp; i < n; i += warps) {  // warp-uniform loop
    const std::int64_t r = ldg(list + i);
    const std::int64_t begin = ldg(row_ptr + r), end = ldg(row_ptr + r + 1);
    Value s = 0;
#pragma unroll 4
    for (std::int64_t k = begin + lane; k < end; k += 32)
      s += ldg(values + k) * ldg(x + ldg(col_idx + k));
    s = cuda::subwarp_sum<32>(s);
    if (lane == 0) axpby_store(y + r, alpha, s, beta);
  }
}

// Long rows: block `c` sums chunk c (a piece of a long row, RowPlan::chunk nonzeros) with a fixed tree and
// stores the partial; the block that finishes a row's last outstanding chunk (a counter per
// long row) adds the row's partials and writes y. A row of one chunk is written by its block
// at once: the fence, the counter and the second sum are a chain of round trips that a product
// of a few microseconds would wait on. Deterministic: thread i adds partials
// i, i+kBlock, ... in order and a fixed tree combines the threads, whichever block does it.
// The combine is block-wide because a row of millions of nonzeros has hundreds of partials,
// and one thread reading them one L2 round trip after another would trail the whole product.
// The chunk loop is unrolled so that a thread keeps several loads in flight: at 16 steps a
// thread, one dependent col_idx -> x gather at a time is latency-bound even when the matrix
// sits in L2. The counter is reset for the next product, which the stream orders after this one.
template <class Value, class Index, class Col>
__device__ __forceinline__ void long_row_chunk(std::int64_t c, const std::int64_t* __restrict__ chunk_row,
                                               const std::int64_t* __restrict__ chunk_begin,
                                               const std::int64_t* __restrict__ chunk_long,
                                               const std::int64_t* __restrict__ long_chunk_ptr,
                                               const Index* __restrict__ row_ptr,
                                               const Col* __restrict__ col_idx,
                                               const Value* __restrict__ values,
                                               const Value* __restrict__ x, Value* __restrict__ y,
                                               Value alpha, Value beta, Value* partial,
                                               unsigned* done) {
  __shared__ Value shared[32];
  __shared__ bool finishes_row;
  const std::int64_t row = chunk_row[c], b = chunk_begin[c];
  const std::int64_t l = chunk_long[c];
  const std::int64_t first = long_chunk_ptr[l], last = long_chunk_ptr[l + 1];
  // A chunk ends where the row's next one begins (chunk sizes are the plan's).
  const std::int64_t e = c + 1 < last ? chunk_begin[c + 1] : static_cast<std::int64_t>(ldg(row_ptr + row + 1));
  Value s = 0;
#pragma unroll 4
  for (std::int64_t k = b + threadIdx.x; k < e; k += blockDim.x)
    s += ldg(values + k) * ldg(x + ldg(col_idx + k));
  s = cuda::block_sum(s, shared);
  if (last - first == 1) {  // the row is this one chunk: its sum is the block's (uniform branch)
    if (threadIdx.x == 0) axpby_store(y + row, alpha, s, beta);
    return;
  }
  if (threadIdx.x == 0) {
    partial[c] = s;
    __threadfence();  // the partial is visible device-wide before the counter says so
    finishes_row = atomicAdd(done + l, 1u) == static_cast<unsigned>(last - first - 1);
  }
  __syncthreads();
  if (!finishes_row) return;  // uniform over the block
  __threadfence();
  const volatile Value* p = partial;  // written by other blocks: not through this SM's L1
  Value t = 0;
  for (std::int64_t i = first + threadIdx.x; i < last; i += blockDim.x) t += p[i];
  t = cuda::block_sum(t, shared);
  if (threadIdx.x == 0) {
    axpby_store(y + row, alpha, t, beta);
    done[l] = 0;
  }
}

// The auto kernel with row bins in one launch: at the scale where a product takes a few
// microseconds each launch costs about as much as the product, so the three kinds of work
// share one grid. Blocks [0, n_chunks) take a long-row chunk each (the heaviest work starts
// first instead of trailing), the next nb_medium blocks the medium rows a warp each, the rest
// the short rows W lanes each. The role is uniform over a block. Without long rows (Chunks
// false) the chunk path, its shared memory and its registers are compiled out: they would
// otherwise bound the occupancy of every short- and medium-row block.
template <int W, bool Chunks, class Value, class Index, class Col>
__global__ void __launch_bounds__(csr_plan::kBlock)
    csr_auto_fused_kernel(std::int64_t rows, const Index* __restrict__ row_ptr,
                          const Col* __restrict__ col_idx, const Value* __restrict__ values,
                          const Value* __restrict__ x, Value* __restrict__ y, Value alpha,
                          Value beta, std::int64_t short_max, std::int64_t nb_short,
                          std::int64_t n_medium, const std::int64_t* __restrict__ medium_rows,
                          std::int64_t nb_medium, std::int64_t n_chunks,
                          const std::int64_t* __restrict__ chunk_row,
                          const std::int64_t* __restrict__ chunk_begin,
                          const std::int64_t* __restrict__ chunk_long,
                          const std::int64_t* __restrict__ long_chunk_ptr, Value* partial,
                          unsigned* done) {
  std::int64_t b = blockIdx.x;
  if constexpr (Chunks) {
    if (b < n_chunks) {
      long_row_chunk(b, chunk_row, chunk_begin, chunk_long, long_chunk_ptr, row_ptr, col_idx,
                     values, x, y, alpha, beta, partial, done);
      return;
    }
    b -= n_chunks;
  }
  if (b < nb_medium) {
    warp_row_list((b * blockDim.x + threadIdx.x) / 32, nb_medium * blockDim.x / 32, n_medium,
                  medium_rows, row_ptr, col_idx, values, x, y, alpha, beta);
    return;
  }
  b -= nb_medium;
  subwarp_rows<W, false, false>((b * blockDim.x + threadIdx.x) / W, nb_short * blockDim.x / W, rows,
                         row_ptr, col_idx, values, x, y, alpha, beta, short_max);
}

// Block-wide inclusive segmented sum over the kMergeBlock threads of a merge tile: segments are
// the runs of equal `key` (non-decreasing over the threads). Thread i gets the sum of `v` over
// the threads j <= i with key_j == key_i. Warp scans (fixed Hillis–Steele tree), then the
// totals of earlier warps whose run reaches this one are added in warp order: deterministic.
// Every thread of the block must call it.
template <class Value>
__device__ __forceinline__ Value merge_block_segmented_sum(int key, Value v, int* s_first,
                                                           int* s_last, Value* s_total) {
  const int lane = static_cast<int>(threadIdx.x) & 31, warp = static_cast<int>(threadIdx.x) >> 5;
  bool tail;
  v = cuda::warp_segmented_sum(key, v, &tail);
  if (lane == 0) s_first[warp] = key;
  if (lane == 31) {
    s_last[warp] = key;
    s_total[warp] = v;
  }
  __syncthreads();
  if (key == s_first[warp]) {  // my run starts at or before this warp: earlier warps may add
    for (int w = warp - 1; w >= 0 && s_last[w] == key; --w) {
      v += s_total[w];
      if (s_first[w] != key) break;  // the run began in warp w
    }
  }
  return v;
}

/// Tile b of the merge path over total = rows + nnz items, kT items a tile (tile_row[b]: the rows
/// ended before it): its items [d0, d1), the rows [row0, row1) ending before and after it, its
/// first nonzero nz0, and inside it nr row ends, nzl nonzeros, items = nr + nzl.
struct MergeTile {
  std::int64_t d0, d1, row0, row1, nz0;
  int nr, nzl, items;
};
template <int kT>
__device__ __forceinline__ MergeTile merge_tile(std::int64_t b, std::int64_t total,
                                                const std::int64_t* __restrict__ tile_row) {
  MergeTile t;
  t.d0 = b * kT;
  t.d1 = min(t.d0 + kT, total);
  t.row0 = tile_row[b];
  t.row1 = tile_row[b + 1];
  t.nz0 = t.d0 - t.row0;
  t.items = static_cast<int>(t.d1 - t.d0);  // the counts are at most kT: 32-bit from here on
  t.nr = static_cast<int>(t.row1 - t.row0);
  t.nzl = t.items - t.nr;
  return t;
}

/// Stages the row ends of tile t as tile-local nonzero offsets, s_row_end[0..nr), and the
/// sentinel s_row_end[nr] = nzl (the block's kB threads together), then a block barrier.
template <int kB, class Index>
__device__ __forceinline__ void stage_row_ends(int* s_row_end, const MergeTile& t,
                                               const Index* __restrict__ row_ptr, int tid) {
  for (int i = tid; i <= t.nr; i += kB)
    s_row_end[i] = i < t.nr ? static_cast<int>(static_cast<std::int64_t>(ldg(row_ptr + t.row0 + i + 1)) - t.nz0)
                            : t.nzl;
  __syncthreads();
}

/// The tile-local merge item of row end i of a tile whose first nonzero is nz0: it comes after
/// the i row ends and the row_end[i] − nz0 nonzeros before it (row end i is consumed before
/// nonzero j iff row_end[i] <= j, as in cuda::merge_path_search). `row_end`: the tile's first
/// row end, row_ptr + row0 + 1. In 32 bits whatever Index: row_end[i] − nz0 is at most the
/// tile's nonzeros, so the low words of the two give it exactly (`nz0_lo`: nz0's low word).
template <class Index>
__device__ __forceinline__ int row_end_item(const Index* __restrict__ row_end, unsigned nz0_lo,
                                            int i) {
  return static_cast<int>(static_cast<unsigned>(ldg(row_end + i)) - nz0_lo) + i;
}

/// Marks merge item `item` of the tile as a row end in the bit mask s_ends (bit item % 32 of
/// word item / 32). The row ends' items are distinct, so the result does not depend on the
/// order of the threads' ORs.
__device__ __forceinline__ void mark_row_end(unsigned* s_ends, int item) {
  atomicOr(s_ends + (item >> 5), 1u << (item & 31));
}

/// The row ends among merge items [d, d + kIpt) of a tile (bit i: item d + i), and in `before`
/// the number of row ends before item d: the row coordinate where diagonal d crosses the tile's
/// path, the cut of cuda::merge_path_search without a search. From the tile's row-end mask
/// s_ends (kWords words, zero past the tile's end): each warp counts the row ends of every
/// word (kPer words a lane) and scans the counts, then takes the prefix of d's word and the
/// bits of that word below d. Every thread of the warp must call it.
template <int kIpt, int kWords>
__device__ __forceinline__ unsigned tile_row_ends(const unsigned* s_ends, int d, int& before) {
  constexpr int kPer = (kWords + 31) / 32;
  const int lane = cuda::lane_id();
  int count = 0;
#pragma unroll
  for (int m = 0; m < kPer; ++m)
    if (lane * kPer + m < kWords) count += __popc(s_ends[lane * kPer + m]);
  const int prefix = cuda::warp_inclusive_sum(count) - count;  // row ends before word lane·kPer
  const int w = d >> 5, sh = d & 31;
  const unsigned lo = s_ends[w], hi = s_ends[w + 1];
  before = __shfl_sync(cuda::kFullMask, prefix, w / kPer) + __popc(lo & ((1u << sh) - 1));
#pragma unroll
  for (int m = 1; m < kPer; ++m)  // words of w's lane below w
    if (w % kPer >= m) before += __popc(s_ends[w - m]);
  return __funnelshift_r(lo, hi, sh) & ((1u << kIpt) - 1);
}

/// `p`, opaque to the compiler: kept in its register pair rather than recomputed from the
/// 64-bit arithmetic that made it at each use (under a tight register budget ptxas otherwise
/// redoes a tile's base address inside every predicated load).
template <class T>
__device__ __forceinline__ T* pinned(T* p) {
  asm("" : "+l"(p));
  return p;
}

/// Blocks of csr_merge_tile_kernel an SM is to hold: its register budget (64 K registers over
/// kMergeBlock threads a block). Unbounded, ptxas issues the loads of all a thread's items at
/// once and takes 72–112 registers, half the blocks. The budgets hold the occupancy of loads
/// issued one item at a time: the narrow tiles 12 blocks (40 registers), the wide tiles 8 in
/// fp64 (64; their shared memory, 25 KB a block, allows no more) and 10 in fp32 (48), Prefetch
/// (a tile's loads held in registers across the gathers) 9 in fp64 (56) and 10 in fp32 (48).
template <bool Prefetch, int kIpt, class Value>
constexpr int merge_tile_min_blocks() {
  if constexpr (Prefetch) return sizeof(Value) == 8 ? 9 : 10;
  if constexpr (kIpt == csr_plan::kMergeIpt) return 12;
  return sizeof(Value) == 8 ? 8 : 10;
}

// Merge path (Merrill & Garland, CSR-MergeBased SpMV). Block b owns the tile of merge items
// (row ends + nonzeros) on diagonals [b·T, min((b+1)·T, rows+nnz)), T = kMergeTile; the tile
// starts at (row0, nz0) = (tile_row[b], b·T − row0) and ends at (row1, nz1). The block
//   1. stages the tile with coalesced loads into shared memory: the products values[k]·x[col[k]]
//      of its nonzeros (zeros after them), and its row ends as a bit mask over its merge items
//      (row_end_item, mark_row_end; row1 does not end inside the tile);
//   2. lets thread i take items i·IPT .. i·IPT + IPT − 1 of the tile's path: which of them are
//      row ends and how many come before them (tile_row_ends: bit counts of the mask, no
//      search), then walk them from shared memory, writing the rows it begins and ends;
//   3. combines the partial sums of rows split between its threads with a segmented block sum:
//      the thread that ends a row R it did not begin adds the partials of the threads before it
//      that ended in R (all in this tile) to its own.
// Rows split between tiles are completed in one of two ways (csr_plan::MergePlan::owner):
//   - owner completion (tile_own != nullptr): the tile that began a row completes it. A first
//     row begun earlier (kTileSkipsFirstRow) is not written; a last row begun here
//     (kTileCompletesLastRow) is read on past the tile's end, those products summed by the
//     block (strided, then a fixed tree) and added to the tile's partial. One launch.
//   - carries: if R is the tile's first row and the tile is not the first one, R may have
//     begun in earlier tiles: the sum goes to tile_head[b] instead of y. The partial of the
//     tile's unfinished last row goes to tile_carry[b]. csr_merge_fixup_kernel then completes
//     the rows split between tiles.
// Deterministic: fixed walk order, fixed trees, fixed fix-up order. Every row is written
// exactly once.
// Prefetch (MergePlan::skewed, or tiles that fit in one wave: merge_tiles_in_one_wave): step 1
// issues the row-end loads with the nonzeros' loads.
// kIpt: items per thread (MergePlan::ipt). Stream: col_idx and values evict-first (a matrix
// larger than L2: reads_exceed_l2).
// The kernel is instruction-bound on regular rows (a few items per row), so the work per item
// is kept small: the tile's arrays are indexed with 32-bit offsets from bases computed once a
// tile; a thread's start on the path and its row ends come from bit counts, not a search and a
// shared load per row end; the walk takes kIpt items with no bound check (past the last
// tile's end it meets zero products) and no branch (the compiler predicates it).
template <bool Prefetch, int kIpt, bool Stream, class Value, class Index, class Col>
__global__ void __launch_bounds__(csr_plan::kMergeBlock, merge_tile_min_blocks<Prefetch, kIpt, Value>())
    csr_merge_tile_kernel(std::int64_t rows, std::int64_t nnz, std::int64_t n_tiles,
                          const std::int64_t* __restrict__ tile_row,
                          const Index* __restrict__ row_ptr, const Col* __restrict__ col_idx,
                          const Value* __restrict__ values, const Value* __restrict__ x,
                          Value* __restrict__ y, Value alpha, Value beta,
                          const std::int32_t* __restrict__ tile_own,
                          Value* __restrict__ tile_carry, Value* __restrict__ tile_head) {
  constexpr int kB = csr_plan::kMergeBlock;
  constexpr int kT = kB * kIpt, kWarps = kB / 32;
  // s_ends: bit d of the mask is set when merge item d of the tile is a row end. One word past
  // the tile's last: a thread reads the word after its first item's (tile_row_ends).
  constexpr int kWords = kT / 32 + 1;
  static_assert(kT % 32 == 0 && kIpt < 32 && kWords <= kB, "a thread's items fit two words");
  __shared__ unsigned s_ends[kWords];
  __shared__ Value s_prod[kT];
  __shared__ Value s_scan[kB];
  __shared__ int s_first[kWarps], s_last[kWarps];
  __shared__ Value s_total[kWarps], s_past[32];
  const int tid = static_cast<int>(threadIdx.x);
  const std::int64_t total = rows + nnz;
  const bool owner = tile_own != nullptr;
  // The mask starts clear; each tile clears it for the next one after its last read.
  if (tid < kWords) s_ends[tid] = 0;
  __syncthreads();
  for (std::int64_t b = blockIdx.x; b < n_tiles; b += gridDim.x) {  // block-uniform loop
    if (b + gridDim.x >= n_tiles) cuda::allow_dependent_launch();  // the fix-ups may launch
    const MergeTile tile = merge_tile<kT>(b, total, tile_row);
    const int nr = tile.nr, nzl = tile.nzl;  // row ends, nonzeros: <= kT
    // The tile's arrays from here: 64-bit address arithmetic once a tile, 32-bit offsets below.
    const Col* __restrict__ t_col = pinned(col_idx + tile.nz0);
    const Value* __restrict__ t_val = pinned(values + tile.nz0);
    const Index* __restrict__ t_end = pinned(row_ptr + tile.row0 + 1);
    const unsigned nz0_lo = static_cast<unsigned>(tile.nz0);
    Value* __restrict__ t_y = y + tile.row0;
    const std::int32_t own = owner ? tile_own[b] : 0;
    // Owner completion: the products of the last row past the tile's end, issued with the
    // tile's own loads (one round of latency for most tiles: at most kB of them).
    Value past = 0;
    if (own & csr_plan::kTileCompletesLastRow) {
      const int n_past = own >> csr_plan::kTilePastEndShift;
#pragma unroll 4
      for (int i = tid; i < n_past; i += kB)
        past += ld_once<Stream>(t_val + nzl + i) * ldg(x + ld_once<Stream>(t_col + nzl + i));
    }
    // Thread tid stages entries tid + it·kB of s_prod, all kT of them: the tile's nonzeros,
    // then zeros (what the walk reads past the last tile's end). Constant offsets from the
    // thread's own pointers.
    const Col* __restrict__ my_col = pinned(t_col + tid);
    const Value* __restrict__ my_val = pinned(t_val + tid);
    const int mine = nzl - tid;
    if constexpr (Prefetch) {
      // The tile's loads issued together: the row ends of its first 2·kB rows (most tiles have
      // fewer) beside its columns and values, then the x entries they gather: two rounds of
      // memory latency before the barrier instead of three.
      const int e0 = tid < nr ? row_end_item(t_end, nz0_lo, tid) : 0;
      const int e1 = tid + kB < nr ? row_end_item(t_end, nz0_lo, tid + kB) : 0;
      Col col[kIpt];
      Value val[kIpt];
#pragma unroll
      for (int it = 0; it < kIpt; ++it) {
        if (it * kB < mine) {
          col[it] = ld_once<Stream>(my_col + it * kB);
          val[it] = ld_once<Stream>(my_val + it * kB);
        }
      }
#pragma unroll
      for (int it = 0; it < kIpt; ++it)
        s_prod[tid + it * kB] = it * kB < mine ? val[it] * ldg(x + col[it]) : Value(0);
      if (tid < nr) mark_row_end(s_ends, e0);
      if (tid + kB < nr) mark_row_end(s_ends, e1);
      for (int i = tid + 2 * kB; i < nr; i += kB) mark_row_end(s_ends, row_end_item(t_end, nz0_lo, i));
    } else {
#pragma unroll 1  // one trip for most threads: rows of kIpt items and more
      for (int i = tid; i < nr; i += kB) mark_row_end(s_ends, row_end_item(t_end, nz0_lo, i));
#pragma unroll
      for (int it = 0; it < kIpt; ++it) {
        Value p = 0;
        if (it * kB < mine) p = ld_once<Stream>(my_val + it * kB) * ldg(x + ld_once<Stream>(my_col + it * kB));
        s_prod[tid + it * kB] = p;
      }
    }
    __syncthreads();

    // Thread tid walks items [dl, dl + kIpt): row ends (bits of `ends`) and nonzeros
    // j = d − k, k the rows ended before item d. Past the last tile's end there are no row
    // ends: the walk stays on its open row nr, which is no row, and adds zeros.
    const int dl = tid * kIpt;
    int k;                                                // local row
    const unsigned ends = tile_row_ends<kIpt, kWords>(s_ends, dl, k);
    const int k_first = k;
    const Value* prod = s_prod + (dl - k);  // prod[i]: the product of item dl + i, on row k
    Value s = 0, head = 0;
    // Written as one condition a statement, the compiler predicates the whole walk: a warp's
    // threads meet row ends at different items, so branches would run both sides anyway.
#pragma unroll
    for (int i = 0; i < kIpt; ++i) {
      const bool row_end = (ends >> i) & 1u;
      if (!row_end) s += prod[i];                             // a nonzero of row k
      if (row_end && k == k_first) head = s;                  // begun here or before: see below
      if (row_end && k != k_first) axpby_store(t_y + k, alpha, s, beta);  // begun here
      if (row_end) {
        s = 0;
        ++k;
        --prod;
      }
    }
    const bool has_head = ends != 0;  // this thread ended its first row (begun here or before)
    k = k_first + __popc(ends);  // the walk's k, restated: else ptxas recounts it bit by bit
    // s is now the partial of local row k (this thread's last row, unfinished here); thread
    // i-1's last row is thread i's first row, so the scan at i-1 holds what came before.
    const Value v = merge_block_segmented_sum(k, s, s_first, s_last, s_total);
    s_scan[tid] = v;
    __syncthreads();
    if (tid < kWords) s_ends[tid] = 0;  // read for the last time above
    if (has_head) {
      const Value sum = tid > 0 ? s_scan[tid - 1] + head : head;
      if (k_first != 0 || b == 0)
        axpby_store(t_y + k_first, alpha, sum, beta);
      else if (!owner)
        tile_head[b] = sum;  // the tile's first row: may continue from earlier tiles
      else if (!(own & csr_plan::kTileSkipsFirstRow))
        axpby_store(t_y, alpha, sum, beta);  // begun here: this tile owns it
    }
    if (own & csr_plan::kTileCompletesLastRow) {  // block-uniform
      // Up to a warp's worth of products past the end (rows of up to ~32 nonzeros) sit in warp
      // 0 alone: its shuffle tree, with no block barrier. Longer: the block's tree.
      if ((own >> csr_plan::kTilePastEndShift) <= 32) {
        if (tid < 32) past = cuda::subwarp_sum<32>(past);
      } else {
        past = cuda::block_sum(past, s_past);
      }
      if (tid == 0)  // s_scan[kB - 1]: key nr, the tile's last row, begun here
        axpby_store(t_y + nr, alpha, s_scan[kB - 1] + past, beta);
    } else if (!owner && tid == kB - 1) {
      tile_carry[b] = v;  // key nr: the tile's last row
    }
    __syncthreads();  // shared memory is restaged by the next tile
  }
}

// Merge fix-up, one thread per tile t > 0 that finished its first row R = tile_row[t]: adds
// the carries of the tiles before it whose last row was R (walking back while those tiles also
// started in R), then tile_head[t], and writes y[R]. Walks longer than kMaxShortFix carries
// are left to the wide fix-up (listed in setup). The kMaxShortFix carries and tile starts a
// walk may need are loaded together, so a row split over several tiles costs one round trip to
// L2, not one a tile; the sum is in walk order whatever the loads. Measured on an H100 against
// the walk that loads one tile at a time, same run: Maragal_6 (rows of up to 5,941 over up to 7
// tiles) 0.76× -> 0.82× of the fastest cuSPARSE in fp32, 0.78× -> 0.88× in fp64; the other
// matrices level (bench/results/2026-11-27-h100/csr-stream-lanes/ab).
template <class Value>
__global__ void csr_merge_fixup_kernel(std::int64_t n_tiles,
                                       const std::int64_t* __restrict__ tile_row,
                                       const Value* __restrict__ carry,
                                       const Value* __restrict__ head, Value* __restrict__ y,
                                       Value alpha, Value beta) {
  constexpr int kN = csr_plan::kMaxShortFix;
  cuda::wait_for_prior_grid();  // launched during the tile kernel's last tiles
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t t = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x + 1;
       t < n_tiles; t += stride) {
    const std::int64_t r = tile_row[t];
    if (tile_row[t + 1] == r) continue;  // tile t did not finish its first row
    Value c[kN];
    std::int64_t start[kN];
#pragma unroll
    for (int n = 0; n < kN; ++n) {
      const std::int64_t j = t - 1 - n;
      c[n] = j >= 0 ? carry[j] : Value(0);
      start[n] = j > 0 ? tile_row[j] : -1;  // tile 0 starts the walk's first piece
    }
    Value s = 0;
    bool wide = true;
#pragma unroll
    for (int n = 0; n < kN; ++n) {
      s += c[n];
      if (start[n] != r) {  // tile t-1-n started before row r: the first piece
        wide = false;
        break;
      }
    }
    if (!wide) axpby_store(y + r, alpha, s + head[t], beta);
  }
}

// Wide merge fix-ups (rows spanning more than kMaxShortFix+1 tiles): one warp per fix-up,
// lanes stride over carries [first, t), fixed shuffle tree, then + head[t]. Deterministic.
template <class Value>
__global__ void csr_merge_wide_fixup_kernel(std::int64_t n_fix,
                                            const std::int64_t* __restrict__ fix_tile,
                                            const std::int64_t* __restrict__ fix_first,
                                            const std::int64_t* __restrict__ tile_row,
                                            const Value* __restrict__ carry,
                                            const Value* __restrict__ head, Value* __restrict__ y,
                                            Value alpha, Value beta) {
  const int lane = threadIdx.x & 31;
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x / 32;
  for (std::int64_t f = (static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
       f < n_fix; f += stride) {
    const std::int64_t t = fix_tile[f];
    Value s = 0;
    for (std::int64_t j = fix_first[f] + lane; j < t; j += 32) s += carry[j];
    s = cuda::subwarp_sum<32>(s);
    if (lane == 0) axpby_store(y + tile_row[t], alpha, s + head[t], beta);
  }
}

// ---------------------------------------------------------------------------------------------
// SpMVᵀ kernels: y (cols) was scaled by beta first; each entry adds alpha*x[r]*v to y[col].
// Atomics: NOT deterministic (the order of the float additions varies from run to run).
// ---------------------------------------------------------------------------------------------

template <int W, class Value, class Index, class Col>
__global__ void __launch_bounds__(csr_plan::kBlock)
    csr_subwarp_t_kernel(std::int64_t rows, const Index* __restrict__ row_ptr,
                         const Col* __restrict__ col_idx, const Value* __restrict__ values,
                         const Value* __restrict__ x, Value* __restrict__ y, Value alpha,
                         std::int64_t skip_above) {
  const int lane = static_cast<int>(threadIdx.x) & (W - 1);
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x / W;
  for (std::int64_t r = (static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) / W;
       r < rows; r += stride) {
    const std::int64_t begin = ldg(row_ptr + r), end = ldg(row_ptr + r + 1);
    if (end - begin > skip_above || begin == end) continue;
    const Value xr = alpha * ldg(x + r);
    for (std::int64_t k = begin + lane; k < end; k += W)
      atomicAdd(y + ldg(col_idx + k), ldg(values + k) * xr);
  }
}

// Medium rows of the binned auto kernel, transposed: one warp per listed row.
template <class Value, class Index, class Col>
__global__ void __launch_bounds__(csr_plan::kBlock)
    csr_row_list_warp_t_kernel(std::int64_t n, const std::int64_t* __restrict__ list,
                               const Index* __restrict__ row_ptr,
                               const Col* __restrict__ col_idx, const Value* __restrict__ values,
                               const Value* __restrict__ x, Value* __restrict__ y, Value alpha) {
  const int lane = static_cast<int>(threadIdx.x) & 31;
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x / 32;
  for (std::int64_t i = (static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
       i < n; i += stride) {
    const std::int64_t r = ldg(list + i);
    const std::int64_t begin = ldg(row_ptr + r), end = ldg(row_ptr + r + 1);
    const Value xr = alpha * ldg(x + r);
    for (std::int64_t k = begin + lane; k < end; k += 32)
      atomicAdd(y + ldg(col_idx + k), ldg(values + k) * xr);
  }
}

template <class Value, class Index, class Col>
__global__ void __launch_bounds__(csr_plan::kBlock)
    csr_long_chunk_t_kernel(std::int64_t n_chunks, const std::int64_t* __restrict__ chunk_row,
                            const std::int64_t* __restrict__ chunk_begin,
                            const Index* __restrict__ row_ptr, const Col* __restrict__ col_idx,
                            const Value* __restrict__ values, const Value* __restrict__ x,
                            Value* __restrict__ y, Value alpha) {
  for (std::int64_t c = blockIdx.x; c < n_chunks; c += gridDim.x) {
    const std::int64_t row = chunk_row[c], b = chunk_begin[c];
    const std::int64_t e = c + 1 < n_chunks && chunk_row[c + 1] == row
                               ? chunk_begin[c + 1]
                               : static_cast<std::int64_t>(ldg(row_ptr + row + 1));
    const Value xr = alpha * ldg(x + row);
#pragma unroll 4
    for (std::int64_t k = b + threadIdx.x; k < e; k += blockDim.x)
      atomicAdd(y + ldg(col_idx + k), ldg(values + k) * xr);
  }
}

// Merge-path SpMVᵀ (csr-merge): the tiles of csr_merge_tile_kernel. The block stages the tile's
// row ends, each thread walks its items and records the local row of each nonzero it meets in
// shared memory, then the block scatters the tile's nonzeros in storage order (consecutive
// threads, consecutive nonzeros: coalesced loads of col_idx and values), so no row, however
// long or short, serializes a thread.
template <int kIpt, class Value, class Index, class Col>
__global__ void __launch_bounds__(csr_plan::kMergeBlock)
    csr_merge_tile_t_kernel(std::int64_t rows, std::int64_t nnz, std::int64_t n_tiles,
                            const std::int64_t* __restrict__ tile_row,
                            const Index* __restrict__ row_ptr, const Col* __restrict__ col_idx,
                            const Value* __restrict__ values, const Value* __restrict__ x,
                            Value* __restrict__ y, Value alpha) {
  constexpr int kB = csr_plan::kMergeBlock;
  constexpr int kT = kB * kIpt;
  __shared__ int s_row_end[kT + 1];
  __shared__ int s_row_of[kT];
  const int tid = static_cast<int>(threadIdx.x);
  const std::int64_t total = rows + nnz;
  for (std::int64_t b = blockIdx.x; b < n_tiles; b += gridDim.x) {  // block-uniform loop
    const MergeTile tile = merge_tile<kT>(b, total, tile_row);
    stage_row_ends<kB>(s_row_end, tile, row_ptr, tid);
    const std::int64_t row0 = tile.row0, nz0 = tile.nz0;
    const int nr = tile.nr, nzl = tile.nzl, items = tile.items;
    const int dl = min(tid * kIpt, items), dl_end = min(dl + kIpt, items);
    int k = static_cast<int>(cuda::merge_path_search(dl, s_row_end, nr, nzl));
    int j = dl - k;
    for (int d = dl; d < dl_end; ++d) {
      if (j < s_row_end[k])
        s_row_of[j++] = k;
      else
        ++k;
    }
    __syncthreads();
    for (int i = tid; i < nzl; i += kB) {
      const std::int64_t nz = nz0 + i;
      const Value xr = alpha * ldg(x + row0 + s_row_of[i]);
      atomicAdd(y + ldg(col_idx + nz), ldg(values + nz) * xr);
    }
    __syncthreads();  // shared memory is restaged by the next tile
  }
}

// ---------------------------------------------------------------------------------------------
// SpMM (row-major B and C): one warp per row, lane j owns output columns j, j+32, ...
// B: cols×k, C: rows×k (ld = k). Reads of B rows are coalesced across lanes. Deterministic.
// ---------------------------------------------------------------------------------------------
template <class Value, class Index, class Col>
__global__ void __launch_bounds__(csr_plan::kBlock)
    csr_spmm_row_major_kernel(std::int64_t rows, std::int64_t k, const Index* __restrict__ row_ptr,
                              const Col* __restrict__ col_idx, const Value* __restrict__ values,
                              const Value* __restrict__ b, Value* __restrict__ c, Value alpha,
                              Value beta) {
  const int lane = threadIdx.x & 31;
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x / 32;
  for (std::int64_t r = (static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
       r < rows; r += stride) {
    const std::int64_t begin = ldg(row_ptr + r), end = ldg(row_ptr + r + 1);
    for (std::int64_t j = lane; j < k; j += 32) {
      Value s = 0;
      for (std::int64_t p = begin; p < end; ++p)
        s += ldg(values + p) * ldg(b + static_cast<std::int64_t>(ldg(col_idx + p)) * k + j);
      axpby_store(c + r * k + j, alpha, s, beta);
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Launch helpers
// ---------------------------------------------------------------------------------------------

/// Whether the arrays an SpMV reads (row offsets, columns, values, and x) exceed L2: then the
/// ones read once (columns, values) would push the gathered x out of it, and the merge path
/// and the fp32 sub-warp kernel at few lanes a row load them evict-first.
///
/// Merge path, measured on an H200 against the cached loads in the same run (SpMV, csr-merge
/// against the fastest cuSPARSE, fp64 / fp32): R-MAT 0.94× -> 0.96× / 0.91× -> 0.93×,
/// power-law 0.90× -> 0.92× / 0.90× -> 0.93×, the band 0.72× -> 0.80× / 0.68× -> 0.70×,
/// G3_circuit 0.79× -> 0.85× / 0.67× -> 0.72×, random_k 3 M × 12 0.86× -> 0.93×; the
/// Laplacians level.
template <class Value, class Index, class Col>
bool reads_exceed_l2(const CsrDevice<Value, Index>& d) {
  const auto l2 = static_cast<std::int64_t>(cuda::device_attribute<cudaDevAttrL2CacheSize>(0));
  const std::int64_t bytes = d.nnz * static_cast<std::int64_t>(sizeof(Col) + sizeof(Value)) +
                             (d.rows + 1) * static_cast<std::int64_t>(sizeof(Index)) +
                             d.cols * static_cast<std::int64_t>(sizeof(Value));
  return bytes > l2;
}

/// Whether the plain sub-warp kernel loads columns and values evict-first: fp32, at most
/// kStreamMaxLanes lanes a row, a mean row of at most kStreamMaxSteps strided steps, reads above
/// L2. A group of lanes reads its row's lines over several steps, and an evict-first line may
/// leave L1 between them: short walks gain, long ones lose. Measured on an H100 against the
/// cached loads, two runs of each (csr against the fastest cuSPARSE, fp32, 4 lanes,
/// bench/results/2026-11-27-h100/csr-stream-lanes/stream-steps): bands of 2 M × 9, 1.5 M × 13 and 1 M × 17
/// (3–5 steps) 0.82× -> 0.97×, 0.92× -> 1.04×, 0.92× -> 1.05×; lap2d, lap3d, G3_circuit and a
/// 3 M × 5 band level; but the 27-point stencils (7 steps) 0.88× -> 0.79× and 0.95× -> 0.90×,
/// and fp64 bands 1.2–1.5× slower, so those keep the cached loads.
constexpr int kStreamMaxLanes = 4;
constexpr int kStreamMaxSteps = 5;
template <int W, class Value, class Index, class Col>
bool subwarp_streams(const CsrDevice<Value, Index>& d) {
  return sizeof(Value) == 4 && W <= kStreamMaxLanes &&
         d.nnz <= static_cast<std::int64_t>(kStreamMaxSteps) * W * d.rows &&
         reads_exceed_l2<Value, Index, Col>(d);
}

/// The sub-warp kernel, with its steps batched where the plan says so (csr_plan::may_batch_steps,
/// csr_plan::may_batch_warp_rows), evict-first where subwarp_streams.
template <int W, class Value, class Index>
void launch_subwarp(const CsrDevice<Value, Index>& d, const Value* x, Value* y, Value alpha,
                    Value beta, std::int64_t skip_above) {
  with_col_idx(d, [&](const auto* cols) {
    using Col = std::remove_cv_t<std::remove_pointer_t<decltype(cols)>>;
    auto kernel = subwarp_streams<W, Value, Index, Col>(d) ? csr_subwarp_kernel<W, false, true, Value, Index, Col>
                                                           : csr_subwarp_kernel<W, false, false, Value, Index, Col>;
    if (d.batched) kernel = csr_subwarp_kernel<W, true, false, Value, Index, Col>;
    kernel<<<cuda::grid_for(d.rows * W, csr_plan::kBlock), csr_plan::kBlock, 0, cuda::stream()>>>(
        d.rows, d.row_ptr.data(), cols, d.values.data(), x, y, alpha, beta, skip_above);
  });
  SPMAT_CUDA_CHECK_LAUNCH("csr_subwarp_kernel");
}

template <class Value, class Index>
void dispatch_subwarp(int w, const CsrDevice<Value, Index>& d, const Value* x, Value* y,
                      Value alpha, Value beta, std::int64_t skip_above) {
  switch (w) {
    case 2: return launch_subwarp<2>(d, x, y, alpha, beta, skip_above);
    case 4: return launch_subwarp<4>(d, x, y, alpha, beta, skip_above);
    case 8: return launch_subwarp<8>(d, x, y, alpha, beta, skip_above);
    case 16: return launch_subwarp<16>(d, x, y, alpha, beta, skip_above);
    default: return launch_subwarp<32>(d, x, y, alpha, beta, skip_above);
  }
}

template <int W, class Value, class Index>
void launch_subwarp_t(const CsrDevice<Value, Index>& d, const Value* x, Value* y, Value alpha) {
  with_col_idx(d, [&](const auto* cols) {
    csr_subwarp_t_kernel<W><<<cuda::grid_for(d.rows * W, csr_plan::kBlock), csr_plan::kBlock, 0,
        cuda::stream()>>>(d.rows, d.row_ptr.data(), cols, d.values.data(), x, y, alpha,
        d.t_whole_rows ? csr_plan::kNoLongRows : d.short_max);
  });
  SPMAT_CUDA_CHECK_LAUNCH("csr_subwarp_t_kernel");
}

template <int W, class Value, class Index>
void launch_auto_fused_w(const CsrDevice<Value, Index>& d, const Value* x, Value* y, Value alpha,
                         Value beta) {
  const std::int64_t nb_short = cuda::grid_for(d.rows * W, csr_plan::kBlock);
  const std::int64_t nb_medium =
      d.n_medium > 0 ? cuda::grid_for(d.n_medium * 32, csr_plan::kBlock) : 0;
  const std::int64_t grid = d.n_chunks + nb_medium + nb_short;
  with_col_idx(d, [&](const auto* cols) {
    using Col = std::remove_cvref_t<decltype(*cols)>;
    auto* kernel = d.n_chunks > 0 ? csr_auto_fused_kernel<W, true, Value, Index, Col>
                                  : csr_auto_fused_kernel<W, false, Value, Index, Col>;
    kernel<<<static_cast<unsigned>(grid), csr_plan::kBlock, 0, cuda::stream()>>>(
        d.rows, d.row_ptr.data(), cols, d.values.data(), x, y, alpha, beta, d.short_max,
        nb_short, d.n_medium, d.medium_rows.data(), nb_medium, d.n_chunks, d.chunk_row.data(),
        d.chunk_begin.data(), d.chunk_long.data(), d.long_chunk_ptr.data(), d.chunk_partial.data(),
        d.long_done.data());
  });
  SPMAT_CUDA_CHECK_LAUNCH("csr_auto_fused_kernel");
}

/// The auto kernel: the sub-warp kernel alone when every row fits its bin, else the fused
/// kernel that also owns the medium rows and the long-row chunks (one launch either way).
template <class Value, class Index>
void launch_auto(const CsrDevice<Value, Index>& d, const Value* x, Value* y, Value alpha,
                 Value beta) {
  if (d.n_medium == 0 && d.n_long == 0) return dispatch_subwarp(d.tpr, d, x, y, alpha, beta, d.short_max);
  switch (d.tpr) {
    case 2: return launch_auto_fused_w<2>(d, x, y, alpha, beta);
    case 4: return launch_auto_fused_w<4>(d, x, y, alpha, beta);
    case 8: return launch_auto_fused_w<8>(d, x, y, alpha, beta);
    case 16: return launch_auto_fused_w<16>(d, x, y, alpha, beta);
    default: return launch_auto_fused_w<32>(d, x, y, alpha, beta);
  }
}

/// Whether all the tiles of `d` are resident at once with the prefetching tile kernel (more
/// registers a thread, so fewer blocks an SM). A product of one wave is as long as its slowest
/// tile's chain of memory round trips, and prefetching takes one round out of it; with more
/// waves the blocks lost to the registers cost more than the round (regular rows, H100: 4–10%
/// slower, csr_plan::MergePlan::skewed). Measured on an H100 against the same build without it
/// (csr-merge against the fastest cuSPARSE, real matrices of 4 K–0.6 M nonzeros but Maragal_6,
/// which is at 0.76–0.78× either way): fp64 0.75–1.14× -> 0.87–1.16×, fp32 0.90–1.09× ->
/// 0.89–1.07× (bench/results/2026-11-27-h100/csr-merge-owner/variants). Queried once per
/// thread and device.
template <class Value, class Index, class Col>
bool merge_tiles_in_one_wave(const CsrDevice<Value, Index>& d) {
  thread_local int cached_device = -1;
  thread_local std::int64_t resident = 0;
  int dev = 0;
  SPMAT_CUDA_CHECK(cudaGetDevice(&dev));
  if (dev != cached_device) {
    int blocks = 0;
    SPMAT_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
        &blocks, csr_merge_tile_kernel<true, csr_plan::kMergeIpt, false, Value, Index, Col>,
        csr_plan::kMergeBlock, 0));
    resident = static_cast<std::int64_t>(blocks) * cuda::sm_count();
    cached_device = dev;
  }
  return d.n_tiles <= resident;
}

/// The merge tile kernel for the plan's variant: skewed rows and tiles that fit in one wave
/// prefetch (with the narrow tiles: csr_plan::merge_items_per_thread gives skewed rows those,
/// and wide tiles come only above a few million nonzeros), wide tiles where planned,
/// evict-first where reads_exceed_l2.
template <class Value, class Index, class Col>
auto merge_tile_kernel(const CsrDevice<Value, Index>& d) {
  constexpr int kN = csr_plan::kMergeIpt, kW = csr_plan::kMergeWideIpt;
  const bool stream = reads_exceed_l2<Value, Index, Col>(d);
  if (d.merge_skewed || (d.merge_ipt == kN && merge_tiles_in_one_wave<Value, Index, Col>(d)))
    return stream ? csr_merge_tile_kernel<true, kN, true, Value, Index, Col>
                  : csr_merge_tile_kernel<true, kN, false, Value, Index, Col>;
  if (d.merge_ipt == kW)
    return stream ? csr_merge_tile_kernel<false, kW, true, Value, Index, Col>
                  : csr_merge_tile_kernel<false, kW, false, Value, Index, Col>;
  return stream ? csr_merge_tile_kernel<false, kN, true, Value, Index, Col>
                : csr_merge_tile_kernel<false, kN, false, Value, Index, Col>;
}

template <class Value, class Index>
void launch_merge(const CsrDevice<Value, Index>& d, const Value* x, Value* y, Value alpha,
                  Value beta) {
  constexpr int kB = csr_plan::kMergeBlock;
  with_col_idx(d, [&](const auto* cols) {
    using Col = std::remove_cv_t<std::remove_pointer_t<decltype(cols)>>;
    const auto kernel = merge_tile_kernel<Value, Index, Col>(d);
    cuda::prefer_l1(kernel, kB);  // its staged tile must not take the L1 that holds x
    kernel<<<cuda::grid_for(d.n_tiles * kB, kB), kB, 0, cuda::stream()>>>(
        d.rows, d.nnz, d.n_tiles, d.tile_row.data(), d.row_ptr.data(), cols, d.values.data(), x,
        y, alpha, beta, d.tile_own.size() > 0 ? d.tile_own.data() : nullptr,
        d.tile_carry.data(), d.tile_head.data());
  });
  SPMAT_CUDA_CHECK_LAUNCH("csr_merge_tile_kernel");
  if (d.tile_own.size() > 0) return;  // owner completion: no carries
  if (d.n_tiles > 1) {
    cuda::launch_after_prior("csr_merge_fixup_kernel", csr_merge_fixup_kernel<Value>,
                             cuda::grid_for(d.n_tiles - 1, 256), 256, d.n_tiles,
                             d.tile_row.data(), d.tile_carry.data(), d.tile_head.data(), y,
                             alpha, beta);
  }
  if (d.n_long_fix > 0) {
    csr_merge_wide_fixup_kernel<<<cuda::grid_for(d.n_long_fix * 32, 256), 256, 0, cuda::stream()>>>(
        d.n_long_fix, d.fix_tile.data(), d.fix_first.data(), d.tile_row.data(),
        d.tile_carry.data(), d.tile_head.data(), y, alpha, beta);
    SPMAT_CUDA_CHECK_LAUNCH("csr_merge_wide_fixup_kernel");
  }
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Setup
// ---------------------------------------------------------------------------------------------

namespace {

/// Column indices converted between the host (Index) and a 32-bit device array this many at a
/// time, through one host staging buffer: host memory stays bounded whatever nnz is.
constexpr std::size_t kColumnChunk = std::size_t{1} << 24;

/// device[0..n) = host[0..n) narrowed to 32 bits (every column < 2^31: csr_narrow_columns).
template <class Index>
void narrow_columns_to_device(const Index* host, std::size_t n, std::int32_t* device) {
  std::vector<std::int32_t> staging(std::min(n, kColumnChunk));
  for (std::size_t off = 0; off < n; off += kColumnChunk) {
    const auto m = static_cast<std::int64_t>(std::min(kColumnChunk, n - off));
#pragma omp parallel for schedule(static)
    for (std::int64_t i = 0; i < m; ++i) staging[i] = static_cast<std::int32_t>(host[off + i]);
    cuda::copy_to_device(device + off, staging.data(), static_cast<std::size_t>(m));  // complete
  }
}

/// host[0..n) = device[0..n) widened to Index.
template <class Index>
void widen_columns_to_host(const std::int32_t* device, std::size_t n, Index* host) {
  std::vector<std::int32_t> staging(std::min(n, kColumnChunk));
  for (std::size_t off = 0; off < n; off += kColumnChunk) {
    const auto m = static_cast<std::int64_t>(std::min(kColumnChunk, n - off));
    cuda::copy_to_host(staging.data(), device + off, static_cast<std::size_t>(m));  // complete
#pragma omp parallel for schedule(static)
    for (std::int64_t i = 0; i < m; ++i) host[off + i] = static_cast<Index>(staging[i]);
  }
}

}  // namespace

template <class Value, class Index>
CsrDevice<Value, Index> CsrDevice<Value, Index>::upload(const Csr<Value, Index>& a,
                                                        const CsrStorage<Value, Index>& options) {
  CsrDevice d;
  d.rows = a.rows;
  d.cols = a.cols;
  d.nnz = a.nnz();
  d.narrow = csr_narrow_columns<Index>(d.cols, options.narrow_cols);  // before any allocation
  d.row_ptr = cuda::DeviceBuffer<Index>(a.row_ptr, "csr row_ptr");
  if (d.narrow) {
    d.col_idx32 = cuda::DeviceBuffer<std::int32_t>(a.col_idx.size(), "csr col_idx (32-bit)");
    narrow_columns_to_device(a.col_idx.data(), a.col_idx.size(), d.col_idx32.data());
  } else {
    d.col_idx = cuda::DeviceBuffer<Index>(a.col_idx, "csr col_idx");
  }
  d.values = cuda::DeviceBuffer<Value>(a.values, "csr values");
  d.set_plan(a.row_ptr.data(), a.col_idx.data(), options);
  return d;
}

template <class Value, class Index>
void CsrDevice<Value, Index>::apply_row_plan(const csr_plan::RowPlan& p,
                                             const CsrStorage<Value, Index>& s) {
  CsrDevice& d = *this;
  d.built_kernel = s.kernel;
  d.built_tpr = s.threads_per_row;
  d.built_bins = s.bins;
  d.built_narrow_cols = s.narrow_cols;
  d.kernel = p.kernel;
  d.merge_spmv = p.merge_spmv;
  d.tpr = p.tpr;
  d.batched = p.batched;
  d.short_max = p.short_max;
  d.t_whole_rows = p.t_whole_rows;
  d.n_medium = static_cast<std::int64_t>(p.medium_rows.size());
  if (d.n_medium > 0) d.medium_rows = cuda::DeviceBuffer<std::int64_t>(p.medium_rows, "csr medium rows");
  if (!p.long_rows.empty()) {
    d.n_long = static_cast<std::int64_t>(p.long_rows.size());
    d.n_chunks = static_cast<std::int64_t>(p.chunk_row.size());
    d.long_rows = cuda::DeviceBuffer<std::int64_t>(p.long_rows, "csr long rows");
    d.long_chunk_ptr = cuda::DeviceBuffer<std::int64_t>(p.long_chunk_ptr, "csr long-row chunk ptr");
    d.chunk_row = cuda::DeviceBuffer<std::int64_t>(p.chunk_row, "csr chunk rows");
    d.chunk_begin = cuda::DeviceBuffer<std::int64_t>(p.chunk_begin, "csr chunk begins");
    d.chunk_partial = cuda::DeviceBuffer<Value>(p.chunk_row.size(), "csr chunk partials");
    std::vector<std::int64_t> chunk_long(p.chunk_row.size());
    for (std::size_t l = 0; l + 1 < p.long_chunk_ptr.size(); ++l)
      for (std::int64_t c = p.long_chunk_ptr[l]; c < p.long_chunk_ptr[l + 1]; ++c)
        chunk_long[static_cast<std::size_t>(c)] = static_cast<std::int64_t>(l);
    d.chunk_long = cuda::DeviceBuffer<std::int64_t>(chunk_long, "csr chunk long-row index");
    d.long_done = cuda::DeviceBuffer<unsigned>(p.long_rows.size(), "csr long-row counters");
    d.long_done.fill_bytes(0);
  }
}

template <class Value, class Index>
void CsrDevice<Value, Index>::set_plan(const Index* host_row_ptr, const Index* host_col_idx,
                                       const CsrStorage<Value, Index>& s) {
  // Kernel (auto may become scalar), lanes per row, row bins and long-row chunks: used by the
  // auto spmv and by the spmv_t of every kernel but merge.
  const csr_plan::RowPlan p = csr_plan::plan_for_columns(
      [&](bool scalar_allowed) {
        return csr_plan::plan_rows(rows, host_row_ptr, s.kernel, s.threads_per_row, s.bins, scalar_allowed);
      },
      [&] { return csr_plan::column_locality(rows, host_row_ptr, host_col_idx).local(); },
      s.kernel, s.threads_per_row, rows, cols, nnz, sizeof(Value));
  apply_row_plan(p, s);
  if (s.kernel == CsrKernel::merge || merge_spmv) set_merge_tiles(host_row_ptr, host_col_idx);
}

template <class Value, class Index>
void CsrDevice<Value, Index>::set_merge_tiles(const Index* host_row_ptr, const Index* host_col_idx) {
  CsrDevice& d = *this;
  // Merge-path tiles: start row of every tile, and the wide fix-up list.
  if (d.rows > 0) {
    const csr_plan::MergePlan m =
        csr_plan::plan_merge(d.rows, d.nnz, host_row_ptr, host_col_idx, sizeof(Value));
    d.merge_ipt = m.ipt;
    d.n_tiles = m.n_tiles;
    d.merge_skewed = m.skewed;
    d.tile_row = cuda::DeviceBuffer<std::int64_t>(m.tile_row, "csr merge-path tiles");
    if (m.owner) {
      d.tile_own = cuda::DeviceBuffer<std::int32_t>(m.tile_own, "csr merge-path tile owners");
      return;
    }
    d.tile_carry = cuda::DeviceBuffer<Value>(static_cast<std::size_t>(m.n_tiles), "csr merge carries");
    d.tile_head = cuda::DeviceBuffer<Value>(static_cast<std::size_t>(m.n_tiles), "csr merge heads");
    d.n_long_fix = static_cast<std::int64_t>(m.fix_tile.size());
    if (d.n_long_fix > 0) {
      d.fix_tile = cuda::DeviceBuffer<std::int64_t>(m.fix_tile, "csr merge wide fix-ups");
      d.fix_first = cuda::DeviceBuffer<std::int64_t>(m.fix_first, "csr merge wide fix-ups");
    }
  }
}

template <class Value, class Index>
CsrStorage<Value, Index> CsrDevice<Value, Index>::download() const {
  CsrStorage<Value, Index> s;
  s.a.rows = static_cast<Index>(rows);
  s.a.cols = static_cast<Index>(cols);
  s.a.row_ptr = row_ptr.download();
  if (narrow) {
    s.a.col_idx.resize(col_idx32.size());
    widen_columns_to_host(col_idx32.data(), col_idx32.size(), s.a.col_idx.data());
  } else {
    s.a.col_idx = col_idx.download();
  }
  s.a.values = values.download();
  s.kernel = built_kernel;
  s.threads_per_row = built_tpr;
  s.bins = built_bins;
  s.narrow_cols = built_narrow_cols;
  return s;
}

// ---------------------------------------------------------------------------------------------
// Public entries (found by ADL from DeviceImpl)
// ---------------------------------------------------------------------------------------------

/// y = alpha*A*x + beta*y with the kernel chosen at build time. Example: the 4×4 matrix of
/// csr.hpp with x = {1,1,1,1}, alpha = 1, beta = 0 gives y = {3, 0, 12, 6} with every kernel.
/// Deterministic for all four kernels (no atomics; fixed reduction trees).
template <class Value, class Index>
void spmv(const CsrDevice<Value, Index>& d, const Value* x, Value* y, Value alpha, Value beta) {
  if (d.rows == 0) return;
  switch (d.kernel) {
    case CsrKernel::scalar:
      with_col_idx(d, [&](const auto* cols) {
        csr_scalar_kernel<<<cuda::grid_for(d.rows, csr_plan::kBlock), csr_plan::kBlock, 0,
            cuda::stream()>>>(d.rows, d.row_ptr.data(), cols, d.values.data(), x, y, alpha, beta);
      });
      SPMAT_CUDA_CHECK_LAUNCH("csr_scalar_kernel");
      return;
    case CsrKernel::vector:
      launch_subwarp<32>(d, x, y, alpha, beta, csr_plan::kNoLongRows);
      return;
    case CsrKernel::merge:
      launch_merge(d, x, y, alpha, beta);
      return;
    case CsrKernel::automatic:
      if (d.merge_spmv)
        launch_merge(d, x, y, alpha, beta);
      else
        launch_auto(d, x, y, alpha, beta);
      return;
  }
}

/// y = alpha*Aᵀ*x + beta*y (x: rows, y: cols): y scaled by beta (beta == 0 writes zeros), then
/// atomicAdd scatter. csr-merge: the merge-path tiles. Every other kernel: tpr lanes per row,
/// the medium rows of the binned auto kernel a warp each, long rows split in chunks (but for
/// t_whole_rows). NOT
/// deterministic (atomic ordering).
template <class Value, class Index>
void spmv_t(const CsrDevice<Value, Index>& d, const Value* x, Value* y, Value alpha, Value beta) {
  cuda::scale_async(y, d.cols, beta);
  if (d.rows == 0 || d.cols == 0 || d.nnz == 0) return;
  if (d.kernel == CsrKernel::merge) {
    constexpr int kB = csr_plan::kMergeBlock;
    with_col_idx(d, [&](const auto* cols) {
      using Col = std::remove_cv_t<std::remove_pointer_t<decltype(cols)>>;
      const auto kernel = d.merge_ipt == csr_plan::kMergeWideIpt
                              ? csr_merge_tile_t_kernel<csr_plan::kMergeWideIpt, Value, Index, Col>
                              : csr_merge_tile_t_kernel<csr_plan::kMergeIpt, Value, Index, Col>;
      kernel<<<cuda::grid_for(d.n_tiles * kB, kB), kB, 0, cuda::stream()>>>(
          d.rows, d.nnz, d.n_tiles, d.tile_row.data(), d.row_ptr.data(), cols, d.values.data(), x,
          y, alpha);
    });
    SPMAT_CUDA_CHECK_LAUNCH("csr_merge_tile_t_kernel");
    return;
  }
  switch (d.tpr) {
    case 2: launch_subwarp_t<2>(d, x, y, alpha); break;
    case 4: launch_subwarp_t<4>(d, x, y, alpha); break;
    case 8: launch_subwarp_t<8>(d, x, y, alpha); break;
    case 16: launch_subwarp_t<16>(d, x, y, alpha); break;
    default: launch_subwarp_t<32>(d, x, y, alpha); break;
  }
  if (d.n_medium > 0) {
    with_col_idx(d, [&](const auto* cols) {
      csr_row_list_warp_t_kernel<<<cuda::grid_for(d.n_medium * 32, csr_plan::kBlock),
          csr_plan::kBlock, 0, cuda::stream()>>>(d.n_medium, d.medium_rows.data(),
          d.row_ptr.data(), cols, d.values.data(), x, y, alpha);
    });
    SPMAT_CUDA_CHECK_LAUNCH("csr_row_list_warp_t_kernel");
  }
  if (d.n_long > 0 && !d.t_whole_rows) {
    with_col_idx(d, [&](const auto* cols) {
      csr_long_chunk_t_kernel<<<cuda::grid_for(d.n_chunks * csr_plan::kBlock, csr_plan::kBlock),
          csr_plan::kBlock, 0, cuda::stream()>>>(d.n_chunks, d.chunk_row.data(),
          d.chunk_begin.data(), d.row_ptr.data(), cols, d.values.data(), x, y, alpha);
    });
    SPMAT_CUDA_CHECK_LAUNCH("csr_long_chunk_t_kernel");
  }
}

/// C = alpha*A*B + beta*C. Row-major: a warp per row, lanes over the k columns. Column-major:
/// column j of C is an SpMV with column j of B (k launches of the build-time SpMV kernel).
/// Deterministic.
template <class Value, class Index>
void spmm(const CsrDevice<Value, Index>& d, const Value* b, Value* c, std::int64_t k,
          DenseLayout layout, Value alpha, Value beta) {
  if (d.rows == 0 || k == 0) return;
  if (layout == DenseLayout::col_major) {
    for (std::int64_t j = 0; j < k; ++j) spmv(d, b + j * d.cols, c + j * d.rows, alpha, beta);
    return;
  }
  with_col_idx(d, [&](const auto* cols) {
    csr_spmm_row_major_kernel<<<cuda::grid_for(d.rows * 32, csr_plan::kBlock), csr_plan::kBlock,
        0, cuda::stream()>>>(d.rows, k, d.row_ptr.data(), cols, d.values.data(), b, c, alpha, beta);
  });
  SPMAT_CUDA_CHECK_LAUNCH("csr_spmm_row_major_kernel");
}

SPMAT_DEFINE_CUDA_IMPL(CsrStorage, CsrDevice)
SPMAT_DEFINE_DEVICE_ONLY_IMPL(CsrStorage, CsrDevice)

#define SPMAT_INSTANTIATE(V, I)                                                                  \
  template CsrDevice<V, I> CsrDevice<V, I>::upload(const Csr<V, I>&, const CsrStorage<V, I>&);   \
  template void CsrDevice<V, I>::set_plan(const I*, const I*, const CsrStorage<V, I>&);          \
  template void CsrDevice<V, I>::apply_row_plan(const csr_plan::RowPlan&, const CsrStorage<V, I>&); \
  template void CsrDevice<V, I>::set_merge_tiles(const I*, const I*);                             \
  template CsrStorage<V, I> CsrDevice<V, I>::download() const;
SPMAT_FOR_EACH_TYPE_PAIR(SPMAT_INSTANTIATE)
#undef SPMAT_INSTANTIATE

}  // namespace spmat
